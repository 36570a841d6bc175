/* SPDX-License-Identifier: MIT */
/*
 * stat_read.c - reading MNT/.stats/NAME.json for sectorfs-stat, for the
 * iostat-like view and for --refused alike (stat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "stat.h"

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
				stat_die(1, "out of memory");
		}
		n = read(fd, buf + len, cap - len);
		if (n == 0)
			break;
		if (n < 0 && errno != EINTR)
			stat_die(1, "%s: %s", path, strerror(errno));
		if (n > 0)
			len += (size_t)n;
	}
	*lenp = len;
	return buf;
}

const char *stat_read_image(const char *name, char *path, size_t len, size_t *lenp)
{
	const char *text;
	int fd;

	snprintf(path, len, "%s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX, stat_mnt, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return NULL;
	if (fd < 0)
		stat_die(1, "%s: %s", path, strerror(errno));
	text = read_all(fd, path, lenp);
	close(fd);
	return text;
}

