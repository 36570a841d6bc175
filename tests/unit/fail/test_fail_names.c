/* SPDX-License-Identifier: MIT */
/*
 * test_fail_names.c - what the store needs of a disk's failure state
 * (core/fail/fail.c) when it renames or unlinks the image, and what the
 * stats read of it: sfs_fail_pause, sfs_fail_resume, sfs_fail_detach and
 * sfs_fail_status, on a disk in memory (wc_fixture.h).
 *
 * Proves:
 *   - a pause waits for the request in flight and holds every new one
 *     (and an attribute write) until the resume;
 *   - after a resume with a new name the state writes NAME2.disk and
 *     NAME2.undo, never the old names again;
 *   - a detached state writes no file at all: a heal, a bad-sector
 *     change, a cut and the close leave the state directory as the store
 *     left it, a file planted under the old names untouched;
 *   - the status says the power, the trigger and what it waits for, the
 *     next cut's policy and seed, and the counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fail/fail.h"
#include "fixtures/tmpstore.h"
#include "fixtures/wc_fixture.h"

#define DISK (256u << 10)

static struct tmpstore ts;
static struct memdisk md;

static void setup(void)
{
	tmpstore_make(&ts, "failnames", true);
	md_init(&md, DISK);
}

static void teardown(void)
{
	md_free(&md);
	tmpstore_destroy(&ts);
}

TestSuite(failnames, .init = setup, .fini = teardown, .timeout = 60);

static struct sfs_fail *open_f(void)
{
	struct sfs_fail_config c = { .size = DISK };
	struct sfs_wc_backing b = md_backing(&md);
	struct sfs_fail *f;
	char err[512] = "";

	sfs_wc_config_default(&c.wc, 512, 4096);
	c.wc.mode = SFS_WC_VOLATILE;
	c.wc.size = 1 << 20;
	c.cut = (struct sfs_wc_cut){ .policy = SFS_WC_LOSE_ALL, .p = 0.5 };
	cr_assert_eq(sfs_fail_open(ts.statefd, "d", &c, &b, NULL, &f, err, sizeof(err)), 0, "%s", err);
	return f;
}

static int wr(struct sfs_fail *f, uint64_t off, uint64_t len)
{
	struct sfs_fail_io io = { .op = SFS_FAIL_WRITE, .off = off, .len = len };
	int rc = sfs_fail_begin(f, &io);

	if (rc < 0)
		return rc;
	memset(md.data + off, 7, len);
	sfs_fail_end(f, &io, 0);
	return 0;
}

static int set(int (*fn)(struct sfs_fail *, const char *, size_t, char *, size_t), struct sfs_fail *f,
	       const char *v)
{
	char err[256] = "";

	return fn(f, v, strlen(v), err, sizeof(err));
}

static bool exists(const char *name)
{
	struct stat st;

	return fstatat(ts.statefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

struct writer {
	struct sfs_fail *f;
	int done;                  /* atomic */
};

static void *write_one(void *arg)
{
	struct writer *w = arg;

	cr_assert_eq(wr(w->f, 0, 4096), 0);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

Test(failnames, pause_holds_requests_until_resume)
{
	struct sfs_fail *f = open_f();
	struct writer w = { f, 0 };
	struct sfs_fail_io io = { .op = SFS_FAIL_WRITE, .off = 8192, .len = 4096 };
	pthread_t t;

	cr_assert_eq(sfs_fail_begin(f, &io), 0);   /* a request in flight: the pause waits for it */
	sfs_fail_end(f, &io, 0);
	sfs_fail_pause(f);
	cr_assert_eq(pthread_create(&t, NULL, write_one, &w), 0);
	usleep(100000);
	cr_expect_eq(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST), 0, "a request ran during the pause");
	sfs_fail_resume(f, NULL);
	pthread_join(t, NULL);
	cr_expect_eq(w.done, 1);
	cr_expect_eq(sfs_fail_close(f), 0);
}

Test(failnames, resume_with_a_new_name_writes_only_the_new_files)
{
	struct sfs_fail *f = open_f();

	cr_assert_eq(wr(f, 0, 4096), 0);
	cr_assert(exists("d.undo"));
	sfs_fail_pause(f);
	cr_assert_eq(renameat(ts.statefd, "d.undo", ts.statefd, "e.undo"), 0);   /* what the store does */
	sfs_fail_resume(f, "e");
	cr_assert_eq(set(sfs_fail_bad_set, f, "+3"), 0);
	cr_expect(exists("e.disk"));
	cr_expect(!exists("d.disk"), "the state was saved under its old name");
	cr_assert_eq(wr(f, 4096, 4096), 0);
	cr_assert_eq(sfs_fail_close(f), 0);
	cr_expect(!exists("e.undo"), "the close removes the log under its new name");
	cr_expect(!exists("d.undo"));
	cr_expect(exists("e.disk"));
}

Test(failnames, detached_writes_no_file)
{
	struct sfs_fail *f = open_f();
	char planted[] = "not ours\n";
	int fd;

	cr_assert_eq(wr(f, 0, 4096), 0);
	cr_assert_eq(set(sfs_fail_bad_set, f, "+100"), 0);
	sfs_fail_pause(f);
	cr_assert_eq(unlinkat(ts.statefd, "d.undo", 0), 0);
	cr_assert_eq(unlinkat(ts.statefd, "d.disk", 0), 0);
	sfs_fail_detach(f);
	sfs_fail_resume(f, NULL);
	/* another image takes the name */
	fd = openat(ts.statefd, "d.disk", O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, planted, sizeof(planted)), (ssize_t)sizeof(planted));
	close(fd);
	cr_expect_eq(wr(f, 100 * 512, 512), 0, "a write to the detached disk");
	cr_expect_eq(set(sfs_fail_bad_set, f, "+7"), 0);
	cr_expect_eq(set(sfs_fail_power_set, f, "off"), 0);
	cr_expect_str_eq(sfs_fail_power(f), "off");
	cr_expect_eq(set(sfs_fail_power_set, f, "on"), 0);
	cr_expect_eq(sfs_fail_close(f), 0);
	cr_expect(!exists("d.undo"));
	{
		char buf[64] = "";

		fd = openat(ts.statefd, "d.disk", O_RDONLY);
		cr_assert_geq(fd, 0);
		cr_expect_eq(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(planted));
		close(fd);
		cr_expect_str_eq(buf, planted, "the other image's file was written over");
	}
}

Test(failnames, status_says_power_trigger_and_counters)
{
	struct sfs_fail *f = open_f();
	struct sfs_fail_status st;

	cr_assert_eq(set(sfs_fail_seed_set, f, "42"), 0);
	cr_assert_eq(set(sfs_fail_policy_set, f, "random:0.25"), 0);
	cr_assert_eq(set(sfs_fail_power_set, f, "cut-after-writes:3"), 0);
	cr_assert_eq(wr(f, 0, 4096), 0);
	sfs_fail_status(f, &st);
	cr_expect(!st.power_off);
	cr_expect_str_eq(st.trigger, "cut-after-writes:3");
	cr_expect_eq(st.trigger_left, 2);
	cr_expect_eq(st.next.seed, 42);
	cr_expect_eq(st.next.policy, SFS_WC_RANDOM);
	cr_expect_eq(st.wc.mode, SFS_WC_VOLATILE);
	cr_expect_eq(st.cnt.cached_bytes, 4096);
	cr_assert_eq(wr(f, 4096, 4096), 0);
	cr_assert_eq(wr(f, 8192, 4096), 0);
	sfs_fail_status(f, &st);
	cr_expect(st.power_off);
	cr_expect_str_eq(st.trigger, "");
	cr_expect_eq(st.cnt.power_cuts, 1);
	cr_expect_eq(st.cnt.cached_bytes, 0);
	cr_expect_eq(sfs_fail_close(f), 0);
}
