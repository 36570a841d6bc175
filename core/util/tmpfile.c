/* SPDX-License-Identifier: MIT */
/*
 * tmpfile.c - temporary files in the state directory and durable
 * replacement of a file by a new one (see tmpfile.h).
 *
 *   sfs_tmp_create:   STATE/.tmp.<pid>.<n>   O_EXCL; n counts up on EEXIST
 *   write, fsync      the new contents are durable under the temporary name
 *   renameat          the new file replaces the old one in one step
 *   fsync dirs        the rename itself is durable
 *
 * A crash before the rename leaves the old file and a temporary file that
 * the next open of the store removes; after it, the new file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "tmpfile.h"

int sfs_tmp_create(int dirfd, char *name, size_t len, mode_t mode)
{
	static unsigned counter;

	for (int tries = 0; tries < 1000; tries++) {
		unsigned n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
		int fd, w = snprintf(name, len, SFS_TMP_PREFIX "%ld.%u", (long)getpid(), n);

		if (w < 0 || (size_t)w >= len)
			return -ENAMETOOLONG;
		fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

bool sfs_tmp_is_ours(const char *name)
{
	return strncmp(name, SFS_TMP_PREFIX, sizeof(SFS_TMP_PREFIX) - 1) == 0;
}

int sfs_fsync_dir(int dirfd)
{
	return fsync(dirfd) < 0 ? -errno : 0;
}

int sfs_tmp_install(int fd, int fromdir, const char *tmp, int todir, const char *to)
{
	int rc = 0;

	if (fsync(fd) < 0)
		rc = -errno;
	if (rc == 0 && renameat(fromdir, tmp, todir, to) < 0)
		rc = -errno;
	if (rc < 0) {
		unlinkat(fromdir, tmp, 0);
		return rc;
	}
	rc = sfs_fsync_dir(todir);
	if (rc == 0 && fromdir != todir)
		rc = sfs_fsync_dir(fromdir);
	return rc;
}

int sfs_write_file_atomic(int tmpdir, int todir, const char *to, const void *buf, size_t len,
			  mode_t mode)
{
	char tmp[SFS_TMP_NAME_MAX];
	int fd = sfs_tmp_create(tmpdir, tmp, sizeof(tmp), mode), rc;

	if (fd < 0)
		return fd;
	rc = sfs_pwrite_all(fd, buf, len, 0);
	if (rc == 0)
		rc = sfs_tmp_install(fd, tmpdir, tmp, todir, to);
	else
		unlinkat(tmpdir, tmp, 0);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

ssize_t sfs_read_small_file(int dirfd, const char *fname, char *buf, size_t len)
{
	int fd = openat(dirfd, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got < len) {
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int rc = -errno;

			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got >= len)
		return -EFBIG;
	buf[got] = '\0';
	return (ssize_t)got;
}

int sfs_remove_durably(int dirfd, const char *fname)
{
	if (unlinkat(dirfd, fname, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return sfs_fsync_dir(dirfd);
}
