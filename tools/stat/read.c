/* SPDX-License-Identifier: MIT */
/*
 * read.c - reading MNT/.stats for sectorfs-stat, for the iostat-like
 * view and for --refused alike (stat.h): which images it lists, and one
 * NAME.json, read whole and parsed by core.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/names.h"
#include "stat.h"
#include "stats/stats.h"

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The image name (into name, NAME_MAX + 1 bytes) of a "NAME.json" entry of .stats, if it is one
 * of names (any when nnames is 0). */
static bool wanted(const char *entry, char *name, char **names, int nnames)
{
	size_t len = sfs_sidecar_image_len(entry);

	if (entry[0] == '.' || !len)
		return false;
	snprintf(name, NAME_MAX + 1, "%.*s", (int)len, entry);
	for (int i = 0; i < nnames; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return nnames == 0;
}

char **stat_names(char **names, int nnames, size_t *n)
{
	char path[PATH_MAX], name[NAME_MAX + 1], **v = NULL;
	size_t cap = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/" SFS_STATS_DIR, stat_mnt);
	if (!(dir = opendir(path)))
		tool_die(1, "%s: %s", path, strerror(errno));
	for (*n = 0; (errno = 0, d = readdir(dir));) {
		if (!wanted(d->d_name, name, names, nnames))
			continue;
		if (*n == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v))))
			tool_die(1, "out of memory");
		if (!(v[(*n)++] = strdup(name)))
			tool_die(1, "out of memory");
	}
	if (errno)
		tool_die(1, "%s: %s", path, strerror(errno));
	closedir(dir);
	qsort(v, *n, sizeof(*v), by_str);
	return v;
}

void stat_no_image(const char *name)
{
	tool_die(1, "%s: no image named '%s' (no %s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX ")", stat_mnt,
		 name, stat_mnt, name);
}

/* Read the whole of fd (its length in *lenp) in large reads: each read of a stats file is a
 * round trip to the daemon, queued behind the I/O it serves. */
static const char *read_all(int fd, const char *path, size_t *lenp)
{
	static char *buf;
	static size_t cap;
	size_t len = 0;
	ssize_t n;

	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 65536;
			if (!(buf = realloc(buf, cap)))
				tool_die(1, "out of memory");
		}
		n = read(fd, buf + len, cap - len);
		if (n == 0)
			break;
		if (n < 0 && errno != EINTR)
			tool_die(1, "%s: %s", path, strerror(errno));
		if (n > 0)
			len += (size_t)n;
	}
	*lenp = len;
	return buf;
}

/* Read the whole of MNT/.stats/NAME.json (its path into path, len bytes, for messages; its
 * length in *lenp) into a buffer reused by the next call: NULL when the image has vanished;
 * other errors exit 1. */
static const char *read_image(const char *name, char *path, size_t len, size_t *lenp)
{
	const char *text;
	int fd;

	snprintf(path, len, "%s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX, stat_mnt, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return NULL;
	if (fd < 0)
		tool_die(1, "%s: %s", path, strerror(errno));
	text = read_all(fd, path, lenp);
	close(fd);
	return text;
}

bool stat_load(const char *name, enum stat_part part, void *out)
{
	char path[PATH_MAX], err[256];
	const char *text;
	size_t len;
	int rc;

	if (!(text = read_image(name, path, sizeof(path), &len)))
		return false;
	rc = part == STAT_COUNTERS ? sfs_stats_parse_json(text, len, out, err, sizeof(err))
				   : sfs_stats_parse_recent_json(text, len, out, err, sizeof(err));
	if (rc == -EPROTO)      /* err: what it lacks */
		tool_die(1, "%s: %s: the daemon is older than " PROG " " PACKAGE_VERSION, path, err);
	if (rc < 0)
		tool_die(1, "%s: %s", path, err);
	return true;
}
