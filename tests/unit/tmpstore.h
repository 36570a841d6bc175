/* SPDX-License-Identifier: MIT */
/*
 * tmpstore.h - shared helpers of the unit tests that need a real store.
 *
 * A temporary store is a mkdtemp directory under /tmp (with its
 * .sectorfs state directory when asked), made in a fixture's init and
 * removed, with everything in it, in its fini.  The helpers write files
 * and sidecars into it, look at what is there, and capture what the core
 * library logs (struct sfs_log pointed at a buffer) so that tests can
 * assert on messages.  Static inline functions only: each test program
 * uses what it needs and nothing else is compiled in.
 */
#ifndef SFS_TEST_TMPSTORE_H
#define SFS_TEST_TMPSTORE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "util/log.h"
#include "contract/sidecar.h"
#include "store/store.h"

#define TMP_STATE_DIR ".sectorfs"

struct tmpstore {
	char path[96];   /* /tmp/sfs-TAG.XXXXXX ("" when not made) */
	int fd;          /* the store directory */
	int statefd;     /* STORE/.sectorfs, or -1 */
};

/* Remove everything below the directory dfd (not dfd itself). */
static inline void tmp_rm_below(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dfd, e->d_name, 0) < 0 && (errno == EISDIR || errno == EPERM)) {
			int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				tmp_rm_below(sub);
				close(sub);
			}
			unlinkat(dfd, e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

/* Remove the tree at path (a directory and everything in it). */
static inline void tmp_rm_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		tmp_rm_below(fd);
		close(fd);
	}
	rmdir(path);
}

/* Make a fresh store directory BASE/sfs-TAG.XXXXXX, with .sectorfs when with_state. */
static inline void tmpstore_make_in(struct tmpstore *t, const char *base, const char *tag, bool with_state)
{
	snprintf(t->path, sizeof(t->path), "%s/sfs-%s.XXXXXX", base, tag);
	cr_assert_not_null(mkdtemp(t->path), "mkdtemp %s: %s", t->path, strerror(errno));
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(t->fd, 0, "open %s: %s", t->path, strerror(errno));
	t->statefd = -1;
	if (with_state) {
		cr_assert_eq(mkdirat(t->fd, TMP_STATE_DIR, 0700), 0, "mkdir: %s", strerror(errno));
		t->statefd = openat(t->fd, TMP_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		cr_assert_geq(t->statefd, 0);
	}
}

/* Make a fresh store directory /tmp/sfs-TAG.XXXXXX, with .sectorfs when with_state. */
static inline void tmpstore_make(struct tmpstore *t, const char *tag, bool with_state)
{
	tmpstore_make_in(t, "/tmp", tag, with_state);
}

/* Remove the store and close its descriptors. */
static inline void tmpstore_destroy(struct tmpstore *t)
{
	if (t->statefd >= 0)
		close(t->statefd);
	if (t->fd >= 0)
		close(t->fd);
	t->statefd = t->fd = -1;
	if (t->path[0])
		tmp_rm_tree(t->path);
}

/* Write dirfd/name with exactly len bytes of data (created or truncated). */
static inline void tmp_write_file(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0, "create %s: %s", name, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len, "write %s", name);
	close(fd);
}

/* Write the sidecar dirfd/NAME.json with the given JSON text. */
static inline void tmp_write_sidecar(int dirfd, const char *name, const char *json)
{
	char fname[512];

	snprintf(fname, sizeof(fname), "%s.json", name);
	tmp_write_file(dirfd, fname, json, strlen(json));
}

/* Read at most len-1 bytes of dirfd/name into buf, NUL-terminated; returns bytes read or -errno. */
static inline ssize_t tmp_read_file(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Does dirfd/name exist (without following a symlink)? */
static inline bool tmp_exists(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Number of temporary files (tmpfile.h names) in dirfd. */
static inline int count_tmp(int dirfd)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	rewinddir(d);
	while ((de = readdir(d)))
		if (strncmp(de->d_name, ".tmp.", 5) == 0)
			n++;
	closedir(d);
	return n;
}

/* stat of dirfd/name, asserting it exists. */
static inline struct stat tmp_stat(int dirfd, const char *name)
{
	struct stat st;

	cr_assert_eq(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW), 0, "stat %s: %s", name, strerror(errno));
	return st;
}

/* ---- a log sink that captures messages ---- */

struct logcap {
	pthread_mutex_t lock;
	char buf[65536];    /* "LEVEL|message\n" per message, truncated when full */
	size_t len;
	unsigned count;     /* messages received, also those that did not fit */
};

static inline void logcap_fn(void *ctx, int level, const char *msg)
{
	struct logcap *c = ctx;

	pthread_mutex_lock(&c->lock);
	c->count++;
	if (c->len < sizeof(c->buf)) {
		int n = snprintf(c->buf + c->len, sizeof(c->buf) - c->len, "%d|%s\n", level, msg);

		if (n > 0)
			c->len += (size_t)n < sizeof(c->buf) - c->len ? (size_t)n : sizeof(c->buf) - c->len - 1;
	}
	pthread_mutex_unlock(&c->lock);
}

static inline void logcap_init(struct logcap *c)
{
	pthread_mutex_init(&c->lock, NULL);
	c->buf[0] = '\0';
	c->len = 0;
	c->count = 0;
}

/* A struct sfs_log that writes into c. */
static inline struct sfs_log logcap_sink(struct logcap *c)
{
	struct sfs_log l = { logcap_fn, c };

	return l;
}

/* Forget what was captured. */
static inline void logcap_clear(struct logcap *c)
{
	pthread_mutex_lock(&c->lock);
	c->buf[0] = '\0';
	c->len = 0;
	c->count = 0;
	pthread_mutex_unlock(&c->lock);
}

/* Number of captured messages (lines) for which match(line, arg) is true. */
static inline unsigned logcap_count(struct logcap *c, bool (*match)(const char *, const void *),
				    const void *arg)
{
	unsigned hits = 0;
	char *line, *save = NULL, *copy;

	pthread_mutex_lock(&c->lock);
	copy = strdup(c->buf);
	pthread_mutex_unlock(&c->lock);
	cr_assert_not_null(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (match(line, arg))
			hits++;
	free(copy);
	return hits;
}

static inline bool logcap_has_all(const char *line, const void *arg)
{
	const char *const *n = arg;

	for (int i = 0; i < 3; i++)
		if (n[i] && !strstr(line, n[i]))
			return false;
	return true;
}

/* Number of captured messages containing every one of the (up to 3) non-NULL needles. */
static inline unsigned logcap_lines(struct logcap *c, const char *n1, const char *n2, const char *n3)
{
	const char *n[3] = { n1, n2, n3 };

	return logcap_count(c, logcap_has_all, n);
}

static inline bool logcap_at_most(const char *line, const void *arg)
{
	return atoi(line) <= *(const int *)arg && strchr(line, '|');
}

/* Number of captured messages of level at most level (SFS_LOG_ERR = 0 is the most severe). */
static inline unsigned logcap_level_lines(struct logcap *c, int level)
{
	return logcap_count(c, logcap_at_most, &level);
}

/* Store options for a test: zeroed, the sidecar defaults with 4096-byte sectors, the log
 * into cap, the lock's holder text holder. */
static inline void tmpstore_opts(struct sfs_store_opts *o, struct logcap *cap, const char *holder)
{
	memset(o, 0, sizeof(*o));
	sfs_sidecar_defaults(&o->defaults);
	o->defaults.lss = 4096;
	o->defaults.pss = 4096;
	o->log = logcap_sink(cap);
	o->holder = holder;
}

/* The map name in the state directory statefd, opened read-only (the test fails when it
 * cannot be). */
static inline struct sfs_map *tmp_map_open_ro(int statefd, const char *name)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(sfs_map_open(statefd, name, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), 0, "%s", err);
	return m;
}

/* Grow m to new_size in one go, as grow.c does it around the image's other files: prepare,
 * commit with the flags it has, abort on a failure (not on -EROFS, where there is nothing to
 * undo).  0 or -errno. */
static inline int tmp_map_grow(struct sfs_map *m, uint64_t new_size)
{
	int rc = sfs_map_grow_prepare(m, new_size);

	if (rc == 0)
		rc = sfs_map_grow_commit(m, new_size, sfs_map_info(m)->flags);
	if (rc < 0 && rc != -EROFS)
		sfs_map_grow_abort(m);
	return rc;
}

#endif
