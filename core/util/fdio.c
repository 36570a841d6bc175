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

ssize_t sfs_pread_upto(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int sfs_pread_zerofill(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = sfs_pread_upto(fd, buf, len, off);

	if (n < 0)
		return (int)n;
	memset((char *)buf + n, 0, len - (size_t)n);   /* past the end of the file: zeros */
	return 0;
}
