/* SPDX-License-Identifier: MIT */
/*
 * log.c - the core library's logging interface (see log.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

void sfs_logf(const struct sfs_log *log, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log->fn(log->ctx, level, msg);
}

void sfs_log_stderr(void *ctx, int level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	const char *name = (level >= 0 && level <= SFS_LOG_DEBUG) ? names[level] : "log";

	(void)ctx;
	fprintf(stderr, "sectorfs: %s: %s\n", name, msg);
}

int sfs_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int sfs_key_err(char *err, size_t errlen, const char *fname, const char *key, int rc, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return sfs_err(err, errlen, rc, "%s: key '%s': %s", fname, key, reason);
}
