/* SPDX-License-Identifier: MIT */
/*
 * lock.c - one holder per store: the store lock and the holder's
 * description.
 *
 * Whoever opens a store (the daemon, a changing sectorfs-img command:
 * both through sfs_store_open, so through store_take_lock alone) takes,
 * without waiting:
 *   1. an flock() on the store directory itself.  This is the lock that
 *      makes the store one holder's: a directory cannot be taken away
 *      from under the descriptor that locks it.  Removing or moving
 *      .sectorfs/lock, or the whole .sectorfs, leaves the store directory
 *      and its lock where they are, and a store moved elsewhere takes its
 *      lock along.
 *   2. an flock() on .sectorfs/lock, the file that holds the holder's
 *      description ("pid 42, mounted at /mnt"): what names the holder when
 *      a second opener is refused, and the only lock of versions before
 *      the store-directory lock, so that neither serves a store the other
 *      serves.  It must be a regular file, or absent (it is made then): a
 *      symbolic link, directory, FIFO, socket or device there refuses the
 *      store with a message (sfs_store_lock_file_check, which check uses
 *      too), is never opened and is left alone.  Once it is locked, the
 *      name .sectorfs/lock must still name the file locked, and .sectorfs
 *      the directory opened; if either was replaced meanwhile, the steps
 *      are taken again.
 * A refusal names the holder from the description when the holder's lock
 * file is still in place, else from the kernel's table of locks
 * (/proc/locks: the pid holding the store directory).  Asking who holds
 * a store (sfs_store_holder) takes each lock shared for an instant; an
 * opener that finds one taken tries again for a short while (LOCK_TRIES),
 * so such a question never makes a start fail.  Where the store's
 * filesystem cannot lock a directory, the lock file alone keeps a second
 * opener out, and a warning says that removing it lets one in.
 */
#include <assert.h>
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
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/fdcache.h"
#include "util/fdio.h"
#include "grow.h"
#include "recover.h"
#include "util/step.h"
#include "internal.h"
#include "util/tmpfile.h"

#define LOCK_TRIES 50              /* a taken lock is tried again this many times, */
#define LOCK_RETRY_NS 5000000L     /* this far apart (250 ms in all): longer than a question lasts */
#define RELOCK_TRIES 4             /* the state directory or lock file replaced while locking */

/* What a file of mode m is, for a message ("a directory"). */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* flock(fd, op | LOCK_NB), tried again while another holds it for a short while: 0, -EWOULDBLOCK
 * when it stays taken, or -errno. */
static int flock_briefly(int fd, int op)
{
	const struct timespec pause = { 0, LOCK_RETRY_NS };

	for (int i = 0;; i++) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || i + 1 >= LOCK_TRIES)
			return -errno;
		nanosleep(&pause, NULL);
	}
}

/* Does another open file hold an exclusive flock on fd's file?  1 yes, 0 no, -errno when the
 * filesystem cannot say. */
static int held_elsewhere(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -errno;
}

/* The pid that holds an exclusive flock on the file st describes, from /proc/locks; 0 if none is
 * seen there.  The device is matched where it can be (a btrfs subvolume's stat says another
 * device than the lock table), else the inode alone when one lock has it. */
static long flock_holder_pid(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256], type[16], kind[16], mode[16];
	unsigned maj, min;
	unsigned long long ino;
	long pid, by_ino = 0;
	int n_ino = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10955609 0 EOF"; a waiter's has "->" for type */
		if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%llu", type, kind, mode, &pid, &maj, &min,
			   &ino) != 7 || strcmp(type, "FLOCK") || strcmp(mode, "WRITE") || ino != st->st_ino)
			continue;
		if (makedev(maj, min) == st->st_dev) {
			fclose(f);
			return pid;
		}
		by_ino = pid;
		n_ino++;
	}
	fclose(f);
	return n_ino == 1 ? by_ino : 0;
}

/* The description of who holds the store directory dfd when its lock file does not say: "pid N
 * (COMM)" from the lock table, and what happened to the lock file; "" when nobody is seen. */
static void describe_from_lock_table(int dfd, char *buf, size_t len)
{
	char path[64], comm[64] = "";
	struct stat st;
	long pid = 0;
	FILE *f;

	if (fstat(dfd, &st) == 0)
		pid = flock_holder_pid(&st);
	if (pid <= 0) {
		snprintf(buf, len, "%s", "");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(buf, len, "pid %ld%s%s%s, named by the kernel's lock table: its lock file " SFS_STATE_DIR
		 "/" SFS_LOCK_FILE " was removed or replaced", pid, comm[0] ? " (" : "", comm, comm[0] ? ")" : "");
}

/* The first line of the lock file fd into buf (len > 0). */
static void read_description(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Open statefd's lock file for reading its description, never anything but a regular file (a
 * FIFO is not opened, so nothing waits on it): the descriptor, or -1. */
static int open_description(int statefd)
{
	struct stat st;
	int fd;

	if (fstatat(statefd, SFS_LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return -1;
	fd = openat(statefd, SFS_LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Who holds the store dfd (its state directory statefd, -1 if none): 1 with the description in
 * buf (possibly ""), 0 when nobody does.  Each lock is asked through a descriptor of its own, so
 * that a caller's own lock is not taken for another's (nor changed). */
static int holder_of(int dfd, int statefd, char *buf, size_t len)
{
	int lfd = statefd >= 0 ? open_description(statefd) : -1;
	int qfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool dir_held = qfd >= 0 && held_elsewhere(qfd) == 1, file_held = lfd >= 0 && held_elsewhere(lfd) == 1;

	snprintf(buf, len, "%s", "");
	if (file_held)
		read_description(lfd, buf, len);
	else if (dir_held)
		describe_from_lock_table(dfd, buf, len);
	if (lfd >= 0)
		close(lfd);
	if (qfd >= 0)
		close(qfd);
	return dir_held || file_held;
}

/* -EBUSY, err naming who holds the store dfd. */
static int refuse(int dfd, int statefd, const char *dir, char *err, size_t errlen)
{
	char holder[512];

	holder_of(dfd, statefd, holder, sizeof(holder));
	return sfs_err(err, errlen, -EBUSY, "%s: store is already served by another sectorfs (%s)", dir,
		       holder[0] ? holder : "holder unknown");
}

int sfs_store_lock_file_check(const char *dir, int statefd, char *err, size_t errlen)
{
	struct stat st;

	assert(statefd >= 0);
	if (fstatat(statefd, SFS_LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return sfs_err(err, errlen, -errno, "%s/" SFS_STATE_DIR "/" SFS_LOCK_FILE ": %s", dir,
			       strerror(errno));
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		return sfs_err(err, errlen, -EUCLEAN, "%s/" SFS_STATE_DIR "/" SFS_LOCK_FILE ": lock file is %s; "
			       "the store is not served until it is removed", dir,
			       S_ISREG(st.st_mode) ? "hard-linked elsewhere" : kind_of(st.st_mode));
	return 0;
}

/* Is name in dirfd still the file fd has open? */
static bool still_named(int dirfd, const char *name, int fd)
{
	struct stat a, b;

	return fstatat(dirfd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Open (making it if need be) the state directory and its lock file, and lock the file; 0,
 * -ESTALE when either name was replaced meanwhile (both closed: try again), -EBUSY, or -errno,
 * with err saying why. */
static int lock_state(struct sfs_store *s, const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (mkdirat(s->dirfd, SFS_STATE_DIR, 0700) < 0 && errno != EEXIST)
		return sfs_err(err, errlen, -errno, "%s/%s: cannot create: %s", dir, SFS_STATE_DIR, strerror(errno));
	s->statefd = openat(s->dirfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->statefd < 0)
		return sfs_err(err, errlen, -errno, "%s/%s: cannot open state directory: %s", dir, SFS_STATE_DIR,
			       strerror(errno));
	rc = sfs_store_lock_file_check(dir, s->statefd, err, errlen);
	if (rc < 0)
		return rc;
	s->lockfd = openat(s->statefd, SFS_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (s->lockfd < 0)
		return sfs_err(err, errlen, -errno, "%s: cannot open lock file: %s", dir, strerror(errno));
	if (fstat(s->lockfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)   /* since the check */
		return -ESTALE;
	rc = sfs_step("lock", 1);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot lock: %s", dir, strerror(-rc));
	rc = flock_briefly(s->lockfd, LOCK_EX);
	if (rc == -EWOULDBLOCK)
		return refuse(s->dirfd, s->statefd, dir, err, errlen);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot lock lock file: %s", dir, strerror(-rc));
	if (!still_named(s->dirfd, SFS_STATE_DIR, s->statefd) || !still_named(s->statefd, SFS_LOCK_FILE, s->lockfd))
		return -ESTALE;
	return 0;
}

int store_take_lock(struct sfs_store *s, const char *dir, char *err, size_t errlen)
{
	int rc;

	assert(s->dirfd >= 0 && s->statefd < 0 && s->lockfd < 0);
	rc = flock_briefly(s->dirfd, LOCK_EX);
	if (rc == -EWOULDBLOCK) {
		int sfd = openat(s->dirfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		rc = refuse(s->dirfd, sfd, dir, err, errlen);
		if (sfd >= 0)
			close(sfd);
		return rc;
	}
	if (rc < 0)
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: cannot lock the store directory (%s): only "
			 SFS_STATE_DIR "/" SFS_LOCK_FILE " keeps a second sectorfs out, and removing it lets one in",
			 dir, strerror(-rc));
	for (int i = 0;; i++) {
		rc = lock_state(s, dir, err, errlen);
		if (rc != -ESTALE)
			break;
		close(s->lockfd);
		close(s->statefd);
		s->statefd = s->lockfd = -1;
		if (i + 1 >= RELOCK_TRIES)
			return sfs_err(err, errlen, rc, "%s: %s/%s kept being replaced while it was locked", dir,
				       SFS_STATE_DIR, SFS_LOCK_FILE);
	}
	if (rc < 0)
		return rc;
	s->locked = true;
	rc = sfs_store_set_holder(s, s->opts.holder);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot write lock file: %s", dir, strerror(-rc));
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
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sfd;
	char tmp[1];
	int held;

	if (dfd < 0)
		return -errno;
	sfd = openat(dfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	held = holder_of(dfd, sfd, len ? buf : tmp, len ? len : sizeof(tmp));
	if (sfd >= 0)
		close(sfd);
	close(dfd);
	return held ? 0 : -ENOENT;
}
