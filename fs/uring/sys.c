/* SPDX-License-Identifier: MIT */
/*
 * sys.c - what the system offers FUSE over io_uring: the module
 * parameter that turns it on, and the queues the kernel makes (one per
 * possible CPU).  The ring workers are setup.c's and
 * worker.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "uring.h"

int sfs_uring_param(void)
{
	char c = 0;
	int fd = open(SFS_URING_PARAM, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = read(fd, &c, 1) == 1 ? (c == 'Y' || c == 'y' || c == '1') : -EIO;
	close(fd);
	return rc;
}

unsigned sfs_uring_nr_queues(void)
{
	char buf[256];
	unsigned n = 0;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (len <= 0) {
		long c = sysconf(_SC_NPROCESSORS_CONF);

		return c > 0 ? (unsigned)c : 1;
	}
	buf[len] = '\0';
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		n += b >= a ? (unsigned)(b - a + 1) : 1;
		p = *end == ',' ? end + 1 : end;
	}
	return n ? n : 1;
}
