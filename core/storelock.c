/* SPDX-License-Identifier: MIT */
/*
 * storelock.c - the store lock, STORE/.sectorfs/lock.
 *
 * The serving daemon (or a changing sectorfs-img command) holds an
 * flock() on the lock file for as long as it has the store open, and
 * writes its description into it; sfs_store_holder reads that back for
 * the message that refuses a second server.  A lock file that is not a
 * regular file (a FIFO, a directory, a symbolic link) is never opened to
 * read: sfs_store_lock_check refuses it, for the daemon and for check.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdcache.h"
#include "fdio.h"
#include "grow.h"
#include "recover.h"
#include "step.h"
#include "store_impl.h"
#include "tmpfile.h"

/* ---- lock and journal ---- */

/* What st is, for messages: "a FIFO". */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
	case S_IFBLK:
		return "a device node";
	default:
		return "a regular file";
	}
}

int sfs_store_lock_check(int statefd, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(statefd, SFS_LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sfs_err(err, errlen, -errno, SFS_STATE_DIR "/" SFS_LOCK_FILE ": %s",
						      strerror(errno));
	if (S_ISREG(st.st_mode))
		return 0;
	return sfs_err(err, errlen, -EPERM, SFS_STATE_DIR "/" SFS_LOCK_FILE " is %s, not a regular file: the "
		       "store cannot be locked with it (remove it; 'sectorfs-img check --repair' does)",
		       file_kind(&st));
}

int sfs_st_take_lock(struct sfs_store *s, const char *dir, char *err, size_t errlen)
{
	char holder[512], why[512];
	ssize_t n;

	if (sfs_store_lock_check(s->statefd, why, sizeof(why)) < 0)
		return sfs_err(err, errlen, -EPERM, "%s: %s", dir, why);
	s->lockfd = openat(s->statefd, SFS_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (s->lockfd < 0)
		return sfs_err(err, errlen, -errno, "%s: cannot open lock file: %s", dir, strerror(errno));
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) < 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

		n = pread(s->lockfd, holder, sizeof(holder) - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		return sfs_err(err, errlen, rc, "%s: store is already served by another sectorfs (%s)",
			       dir, holder[0] ? holder : "holder unknown");
	}
	s->locked = true;
	n = sfs_store_set_holder(s, s->opts.holder);
	if (n < 0)
		return sfs_err(err, errlen, (int)n, "%s: cannot write lock file: %s", dir, strerror((int)-n));
	return 0;
}

int sfs_store_set_holder(struct sfs_store *s, const char *holder)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s\n", holder ? holder : "unknown"), rc;

	if (ftruncate(s->lockfd, 0) < 0)
		return -errno;
	rc = sfs_pwrite_all(s->lockfd, buf, (size_t)n, 0);
	if (rc == 0 && fsync(s->lockfd) < 0)
		rc = -errno;
	return rc;
}

int sfs_store_holder(const char *dir, char *buf, size_t len)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	struct stat st;
	ssize_t n;

	if (dfd < 0)
		return -errno;
	/* O_NONBLOCK, and a regular file only: a FIFO planted there must not hang the question */
	fd = openat(dfd, SFS_STATE_DIR "/" SFS_LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return -ENOENT;
	}
	n = pread(fd, buf, len ? len - 1 : 0, 0);
	close(fd);
	if (len) {
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
	}
	return 0;
}
