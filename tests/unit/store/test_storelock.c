/* SPDX-License-Identifier: MIT */
/*
 * test_storelock.c - unit tests of core/store/lock.c: one holder per
 * store, whatever becomes of the lock file.
 *
 * With a store held open: its lock file removed or moved, its state
 * directory moved or removed with everything in it, the store directory
 * itself moved: a second open is -EBUSY, and the refusal and
 * sfs_store_holder still name the holder (the pid, from the kernel's lock
 * table, when the description is gone).  A lock file that is a symbolic
 * link, directory or FIFO is refused with a message naming it, left
 * alone, and never waited on.  A holder of an older version (the lock
 * file alone locked) keeps a new opener out.  Someone asking who holds
 * the store for an instant does not make an open fail.  A lock file
 * replaced between its open and its lock is locked again by name.  On a
 * filesystem that cannot lock a directory (flock() wrapped here with
 * dlsym(RTLD_NEXT) to fail so) the lock file alone keeps a second opener
 * out, and a warning says so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/step_test.h"
#include "store/store.h"
#include "fixtures/tmpstore.h"

#define HOLDER "pid 4242, mounted at /mnt/unit-test"

static bool dirs_unlockable;   /* flock() of a directory fails with ENOLCK */

int flock(int fd, int op)
{
	static int (*real)(int, int);
	struct stat st;

	if (!real)
		real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
	if (dirs_unlockable && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = ENOLCK;
		return -1;
	}
	return real(fd, op);
}

static struct tmpstore ts;
static struct logcap cap;
static struct sfs_store_opts opts;

static void setup(void)
{
	tmpstore_make(&ts, "lock", false);
	logcap_init(&cap);
	tmpstore_opts(&opts, &cap, HOLDER);
	sfs_step_hook = NULL;
	dirs_unlockable = false;
}

static void teardown(void)
{
	sfs_step_hook = NULL;
	tmpstore_destroy(&ts);
}

TestSuite(storelock, .init = setup, .fini = teardown, .timeout = 30);

static struct sfs_store *open_store(void)
{
	struct sfs_store *s = NULL;
	char err[1024] = "";

	cr_assert_eq(sfs_store_open(ts.path, &opts, &s, err, sizeof(err)), 0, "open: %s", err);
	return s;
}

/* A second open of path must be -EBUSY with a message that names the holder by needle. */
static void expect_refused(const char *path, const char *needle)
{
	struct sfs_store *s2 = NULL;
	char err[1024] = "", buf[512] = "";

	cr_expect_eq(sfs_store_open(path, &opts, &s2, err, sizeof(err)), -EBUSY, "second open: '%s'", err);
	cr_expect_null(s2);
	if (s2)
		sfs_store_close(s2);
	cr_expect(strstr(err, "already served"), "'%s'", err);
	cr_expect(strstr(err, needle), "the refusal names the holder '%s': '%s'", needle, err);
	cr_expect_eq(sfs_store_holder(path, buf, sizeof(buf)), 0, "sfs_store_holder says served");
	cr_expect(strstr(buf, needle), "sfs_store_holder names '%s': '%s'", needle, buf);
}

/* "pid N" of this process, as the lock table names it. */
static const char *my_pid(void)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "pid %ld ", (long)getpid());
	return buf;
}

Test(storelock, removed_lock_file_still_keeps_a_second_opener_out)
{
	struct sfs_store *s = open_store();

	cr_assert_eq(unlinkat(ts.fd, ".sectorfs/lock", 0), 0);
	expect_refused(ts.path, my_pid());
	expect_refused(ts.path, "lock file .sectorfs/lock was removed or replaced");
	cr_expect_not(tmp_exists(ts.fd, ".sectorfs/lock"), "the refused opener made no lock file");
	cr_expect_eq(sfs_store_close(s), 0);
	cr_expect_eq(sfs_store_holder(ts.path, NULL, 0), -ENOENT, "released at close");
	s = open_store();
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storelock, moved_lock_file_still_keeps_a_second_opener_out)
{
	struct sfs_store *s = open_store();

	cr_assert_eq(renameat(ts.fd, ".sectorfs/lock", ts.fd, ".sectorfs/lock.old"), 0);
	expect_refused(ts.path, my_pid());
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storelock, moved_state_directory_still_keeps_a_second_opener_out)
{
	struct sfs_store *s = open_store();

	cr_assert_eq(renameat(ts.fd, ".sectorfs", ts.fd, ".sectorfs.old"), 0);
	expect_refused(ts.path, my_pid());
	cr_expect_not(tmp_exists(ts.fd, ".sectorfs"), "the refused opener made no state directory");
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storelock, removed_state_directory_still_keeps_a_second_opener_out)
{
	struct sfs_store *s = open_store();
	int sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert_geq(sfd, 0);
	tmp_rm_below(sfd);
	close(sfd);
	cr_assert_eq(unlinkat(ts.fd, ".sectorfs", AT_REMOVEDIR), 0);
	expect_refused(ts.path, my_pid());
	sfs_store_close(s);    /* its lock file went with the directory: the close may fail */
}

Test(storelock, moved_store_takes_its_lock_along)
{
	struct sfs_store *s = open_store();
	char moved[128];

	snprintf(moved, sizeof(moved), "%s.moved", ts.path);
	cr_assert_eq(rename(ts.path, moved), 0);
	expect_refused(moved, HOLDER);
	cr_expect_eq(sfs_store_close(s), 0);
	cr_assert_eq(rename(moved, ts.path), 0);
}

/* A lock file of the kind made by make(dirfd of .sectorfs) is refused, named, left as it was,
 * and nobody waits on it. */
static void special_lock_file(const char *kind, void (*make)(int sfd))
{
	struct sfs_store *s = NULL;
	char err[1024] = "", err2[1024] = "", buf[64];
	struct stat before = { 0 }, after = { 0 };
	int sfd;

	cr_assert_eq(mkdirat(ts.fd, ".sectorfs", 0700), 0);
	sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(sfd, 0);
	make(sfd);
	before = tmp_stat(sfd, "lock");
	cr_expect_eq(sfs_store_open(ts.path, &opts, &s, err, sizeof(err)), -EUCLEAN, "open: '%s'", err);
	cr_expect_null(s);
	cr_expect(strstr(err, "/.sectorfs/lock: lock file is ") && strstr(err, kind), "'%s'", err);
	cr_expect(strstr(err, ts.path), "the message names the store: '%s'", err);
	cr_expect_eq(sfs_store_lock_file_check(ts.path, sfd, err2, sizeof(err2)), -EUCLEAN);
	cr_expect_str_eq(err2, err, "the check says what the open says");
	after = tmp_stat(sfd, "lock");
	cr_expect(before.st_ino == after.st_ino && before.st_mode == after.st_mode, "left alone");
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), -ENOENT, "not served, and no wait");
	close(sfd);
}

static void make_symlink(int sfd)
{
	cr_assert_eq(symlinkat("elsewhere", sfd, "lock"), 0);
}

static void make_dir(int sfd)
{
	cr_assert_eq(mkdirat(sfd, "lock", 0700), 0);
}

static void make_fifo(int sfd)
{
	cr_assert_eq(mkfifoat(sfd, "lock", 0600), 0);
}

Test(storelock, symlink_lock_file_refused)
{
	special_lock_file("a symbolic link", make_symlink);
}

Test(storelock, directory_lock_file_refused)
{
	special_lock_file("a directory", make_dir);
}

Test(storelock, fifo_lock_file_refused_without_waiting, .timeout = 10)
{
	special_lock_file("a FIFO", make_fifo);
}

static void make_hard_link(int sfd)
{
	tmp_write_file(ts.fd, "users-file", "keep me\n", 8);
	cr_assert_eq(linkat(ts.fd, "users-file", sfd, "lock", 0), 0);
}

Test(storelock, hard_linked_lock_file_refused_and_the_other_name_kept)
{
	char buf[64];

	special_lock_file("hard-linked elsewhere", make_hard_link);
	cr_expect_eq(tmp_read_file(ts.fd, "users-file", buf, sizeof(buf)), 8);
	cr_expect_str_eq(buf, "keep me\n", "the file behind the other name is untouched");
}

Test(storelock, lock_file_check_of_good_and_absent_files)
{
	char err[256] = "";
	int sfd;

	cr_assert_eq(mkdirat(ts.fd, ".sectorfs", 0700), 0);
	sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_expect_eq(sfs_store_lock_file_check(ts.path, sfd, err, sizeof(err)), 0, "absent: '%s'", err);
	tmp_write_file(sfd, "lock", "old\n", 4);
	cr_expect_eq(sfs_store_lock_file_check(ts.path, sfd, err, sizeof(err)), 0, "regular: '%s'", err);
	close(sfd);
}

Test(storelock, holder_of_an_older_version_keeps_a_new_opener_out)
{
	int sfd, lfd;

	/* an older sectorfs locks the lock file alone */
	cr_assert_eq(mkdirat(ts.fd, ".sectorfs", 0700), 0);
	sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lfd = openat(sfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(flock(lfd, LOCK_EX | LOCK_NB), 0);
	cr_assert_eq(pwrite(lfd, "pid 17, mounted at /old\n", 24, 0), 24);
	expect_refused(ts.path, "pid 17, mounted at /old");
	close(lfd);
	close(sfd);
	sfs_store_close(open_store());
}

struct brief {
	int fd;
	long ms;
};

static void *let_go_later(void *arg)
{
	struct brief *b = arg;
	struct timespec t = { 0, b->ms * 1000000L };

	nanosleep(&t, NULL);
	close(b->fd);
	return NULL;
}

/* Someone holds the lock of dirfd/name shared for ms milliseconds (as sfs_store_holder does
 * for an instant) while the store is opened: the open must not fail for it. */
static void open_while_asked(const char *name, long ms)
{
	struct brief b = { openat(ts.fd, name, O_RDONLY | O_CLOEXEC), ms };
	pthread_t t;

	cr_assert_geq(b.fd, 0);
	cr_assert_eq(flock(b.fd, LOCK_SH | LOCK_NB), 0);
	cr_assert_eq(pthread_create(&t, NULL, let_go_later, &b), 0);
	sfs_store_close(open_store());
	pthread_join(t, NULL);
}

Test(storelock, a_question_on_the_store_directory_does_not_fail_an_open)
{
	open_while_asked(".", 50);
}

Test(storelock, a_question_on_the_lock_file_does_not_fail_an_open)
{
	sfs_store_close(open_store());
	open_while_asked(".sectorfs/lock", 50);
}

static int replaced;

/* Before the lock file is locked, someone else puts another file at its name. */
static int replace_lock_file(const char *op, int n)
{
	if (strcmp(op, "lock") || n != 1 || replaced-- <= 0)
		return 0;
	unlinkat(ts.fd, ".sectorfs/lock.gone", 0);
	cr_assert_eq(renameat(ts.fd, ".sectorfs/lock", ts.fd, ".sectorfs/lock.gone"), 0);
	tmp_write_file(ts.fd, ".sectorfs/lock", "", 0);
	return 0;
}

Test(storelock, lock_file_replaced_while_locking_is_locked_again_by_name)
{
	struct sfs_store *s;
	char buf[512] = "";

	replaced = 1;
	sfs_step_hook = replace_lock_file;
	s = open_store();
	sfs_step_hook = NULL;
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, HOLDER, "the file at the name is the one locked and described");
	cr_expect(tmp_exists(ts.fd, ".sectorfs/lock.gone"), "the file put aside is left alone");
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storelock, lock_file_replaced_at_every_try_gives_up)
{
	struct sfs_store *s = NULL;
	char err[1024] = "";

	replaced = 1000;
	sfs_step_hook = replace_lock_file;
	cr_expect_eq(sfs_store_open(ts.path, &opts, &s, err, sizeof(err)), -ESTALE);
	sfs_step_hook = NULL;
	cr_expect(strstr(err, "kept being replaced"), "'%s'", err);
	cr_expect_eq(sfs_store_holder(ts.path, NULL, 0), -ENOENT, "nothing left held");
}

Test(storelock, where_a_directory_cannot_be_locked_the_lock_file_keeps_a_second_opener_out)
{
	struct sfs_store *s;

	dirs_unlockable = true;
	s = open_store();
	cr_expect_eq(logcap_lines(&cap, "cannot lock the store directory", "removing it lets one in", NULL), 1,
		     "warned: %s", cap.buf);
	expect_refused(ts.path, HOLDER);
	cr_expect_eq(sfs_store_close(s), 0);
	cr_expect_eq(sfs_store_holder(ts.path, NULL, 0), -ENOENT, "released at close");
}
