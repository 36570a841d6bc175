/* SPDX-License-Identifier: MIT */
/*
 * fdio.c - whole transfers between a buffer and a descriptor (fdio.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"

int sfs_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int sfs_pread_zerofill(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {            /* past the end of the file: zeros */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}
