/* SPDX-License-Identifier: MIT */
/*
 * log.h - the tiny logging interface of the core library.
 *
 * Core code never prints.  Everything it has to say goes through a
 * struct sfs_log that its caller passes in: the daemon points it at
 * stderr or syslog, tests point it at a buffer they can inspect.
 * A NULL struct sfs_log or a NULL fn silently drops the message.
 */
#ifndef SFS_LOG_H
#define SFS_LOG_H

#include <stddef.h>

enum sfs_log_level {
	SFS_LOG_ERR = 0,
	SFS_LOG_WARN = 1,
	SFS_LOG_INFO = 2,
	SFS_LOG_DEBUG = 3,
};

struct sfs_log {
	void (*fn)(void *ctx, int level, const char *msg);
	void *ctx;
};

/* Format a message and hand it to log->fn; no-op when log or fn is NULL. */
void sfs_logf(const struct sfs_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A ready sink that writes "sectorfs: LEVEL: msg" lines to stderr. */
void sfs_log_stderr(void *ctx, int level, const char *msg);

/* Format into err (if non-NULL) and return rc; the idiom for error paths. */
int sfs_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "FNAME: key 'KEY': REASON" into err (if non-NULL); returns rc.  For the rules of a sidecar's
 * keys, wherever they are checked. */
int sfs_key_err(char *err, size_t errlen, const char *fname, const char *key, int rc, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#endif
