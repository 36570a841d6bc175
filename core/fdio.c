/* SPDX-License-Identifier: MIT */
/*
 * fdio.c - writing a whole buffer to a descriptor (fdio.h).
 */
#include <errno.h>
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
