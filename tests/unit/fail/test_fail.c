/* SPDX-License-Identifier: MIT */
/*
 * test_fail.c - one disk's failures (core/fail/fail.c): power, triggers, bad
 * sectors and the cut's protocol across NAME.undo, the disk and NAME.disk,
 * on a disk in memory (wc_fixture.h) and a temporary state directory.
 *
 * Proves:
 *   - power off refuses every request with EIO until power on; the state
 *     persists across a close and an open, and a disk that is on with no
 *     bad sector has no NAME.disk;
 *   - cut-after-writes:N lets exactly N writes complete and refuses the
 *     next; cut-after-flushes:N cuts right after the Nth flush, which
 *     loses nothing; bad values and a trigger while off are refused by
 *     name;
 *   - the same seed and the same sequence give the same report and disk
 *     from two fresh states (off:SEED), and the counters add up;
 *   - a daemon killed with writes in its volatile cache keeps every one of
 *     them, and the next open says how many (kept_at_start);
 *   - a crash after each step of the cut (and inside each of its saves)
 *     leaves, after the next open, either the power on with every write
 *     kept (before the commit) or exactly the disk and list an uncut run
 *     gives (after it), nothing pending, the log empty; a failure at each
 *     step leaves the power on and the cache as it was (before the
 *     commit), or the power off with the cut finished by power on;
 *   - bad sectors: a read of one fails with its LBA and is counted, a
 *     write heals it and the healing is saved, sticky ones stay, damaged
 *     physical sectors from a cut read EIO until written whole, bad
 *     commands are refused by name, and after a grow the list takes
 *     sectors of the new part;
 *   - writers and a flusher on several threads are cut by a trigger
 *     without a deadlock, and every request after the cut fails;
 *   - a damaged log is removed (its writes kept) unless a cut needs it,
 *     then the open is refused; a log left when write_cache is no longer
 *     volatile is settled and removed; a damaged NAME.disk is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fail/diskstate.h"
#include "fail/fail.h"
#include "util/step_test.h"
#include "util/tmpfile.h"
#include "fixtures/tmpstore.h"
#include "fixtures/wc_fixture.h"

#define DISK (256u << 10)

static struct tmpstore ts;
static struct memdisk md;
static struct logcap cap;
static uint64_t disk_size = DISK;   /* what the next open says the disk's size is */

static void setup(void)
{
	tmpstore_make(&ts, "fail", true);
	md_init(&md, DISK);
	logcap_init(&cap);
}

static void teardown(void)
{
	disk_size = DISK;
	sfs_step_hook = NULL;
	md_free(&md);
	tmpstore_destroy(&ts);
}

TestSuite(fail, .init = setup, .fini = teardown, .timeout = 120);

/* 512e, a volatile cache of 1 MiB (or none), rmw_power_safe false, lose-all. */
static struct sfs_fail_config config(enum sfs_wc_mode mode)
{
	struct sfs_fail_config c = { .size = disk_size };

	sfs_wc_config_default(&c.wc, 512, 4096);
	c.wc.mode = mode;
	c.wc.size = 1 << 20;
	c.cut = (struct sfs_wc_cut){ .policy = SFS_WC_LOSE_ALL, .p = 0.5 };
	return c;
}

static int try_open(enum sfs_wc_mode mode, struct sfs_fail **f, char *err, size_t errlen)
{
	struct sfs_fail_config c = config(mode);
	struct sfs_wc_backing b = md_backing(&md);
	struct sfs_log log = { logcap_fn, &cap };

	*f = NULL;
	return sfs_fail_open(ts.statefd, "d", &c, &b, &log, f, err, errlen);
}

static struct sfs_fail *open_f(enum sfs_wc_mode mode)
{
	struct sfs_fail *f;
	char err[512] = "";

	cr_assert_eq(try_open(mode, &f, err, sizeof(err)), 0, "open: %s", err);
	return f;
}

/* A request through the hooks: rc of begin, the transfer made on the memory disk. */
static int req(struct sfs_fail *f, enum sfs_fail_op op, uint64_t off, uint64_t len, int v, unsigned flags,
	       struct sfs_fail_io *out)
{
	struct sfs_fail_io io = { .op = op, .off = off, .len = len, .flags = flags };
	int rc = sfs_fail_begin(f, &io);

	if (out)
		*out = io;
	if (rc < 0)
		return rc;
	if (op == SFS_FAIL_WRITE || op == SFS_FAIL_ZERO || op == SFS_FAIL_DISCARD)
		memset(md.data + off, op == SFS_FAIL_WRITE ? v : 0, len);
	if (op == SFS_FAIL_FLUSH)
		md_sync(&md);
	sfs_fail_end(f, &io, 0);
	return 0;
}

static int wr(struct sfs_fail *f, uint64_t off, uint64_t len, int v)
{
	return req(f, SFS_FAIL_WRITE, off, len, v, 0, NULL);
}

static int rd(struct sfs_fail *f, uint64_t off, uint64_t len)
{
	return req(f, SFS_FAIL_READ, off, len, 0, 0, NULL);
}

static int fl(struct sfs_fail *f)
{
	return req(f, SFS_FAIL_FLUSH, 0, 0, 0, 0, NULL);
}

static int power(struct sfs_fail *f, const char *v)
{
	char err[512] = "";

	return sfs_fail_power_set(f, v, strlen(v), err, sizeof(err));
}

static struct sfs_fail_counters counters(struct sfs_fail *f)
{
	struct sfs_fail_counters c;

	sfs_fail_counters(f, &c);
	return c;
}

static bool exists(const char *name)
{
	struct stat st;

	return fstatat(ts.statefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void expect_listing(struct sfs_fail *f, const char *want)
{
	char *s;
	size_t n;

	cr_assert_eq(sfs_fail_bad_get(f, &s, &n), 0);
	cr_expect_str_eq(s, want);
	free(s);
}

/* ---- power ---- */

Test(fail, power_off_refuses_everything_until_on)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	struct sfs_fail_io io;

	cr_assert_str_eq(sfs_fail_power(f), "on");
	cr_expect(!exists("d.disk"), "a disk that is on has no state file");
	cr_assert_eq(wr(f, 0, 4096, 1), 0);
	cr_assert_eq(fl(f), 0);
	cr_assert_eq(wr(f, 4096, 4096, 2), 0);
	cr_assert_eq(power(f, "off\n"), 0);
	cr_expect_str_eq(sfs_fail_power(f), "off");
	cr_expect_eq(req(f, SFS_FAIL_READ, 0, 512, 0, 0, &io), -EIO);
	cr_expect_eq(io.bad_kind, 0, "refused for the power, not a bad sector");
	cr_expect_eq(wr(f, 0, 512, 3), -EIO);
	cr_expect_eq(fl(f), -EIO);
	cr_expect_eq(req(f, SFS_FAIL_DISCARD, 0, 4096, 0, 0, NULL), -EIO);
	cr_expect_eq(md_differs(&md, 0, 4096, 1), -1, "the flushed write stays");
	cr_expect_eq(md_differs(&md, 4096, 4096, 0), -1, "the unflushed one is lost");
	cr_expect_eq(counters(f).power_cuts, 1);
	cr_expect_eq(counters(f).lost_writes, 1);
	cr_expect(exists("d.disk"));
	cr_assert_eq(sfs_fail_close(f), 0);
	f = open_f(SFS_WC_VOLATILE);
	cr_expect_str_eq(sfs_fail_power(f), "off", "the power state outlives a restart");
	cr_expect_eq(rd(f, 0, 512), -EIO);
	cr_assert_eq(power(f, "on"), 0);
	cr_expect_eq(rd(f, 0, 512), 0);
	cr_expect_eq(wr(f, 0, 512, 3), 0);
	cr_expect(!exists("d.disk"), "on again, and no bad sector: no state file");
	cr_assert_eq(sfs_fail_close(f), 0);
	cr_expect(!exists("d.undo"), "a clean close removes the log");
}

Test(fail, cut_after_writes)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	struct sfs_fail_cutinfo last;

	cr_assert_eq(power(f, "cut-after-writes:3"), 0);
	cr_assert_eq(wr(f, 0, 512, 1), 0);
	cr_assert_eq(fl(f), 0);
	cr_assert_eq(wr(f, 512, 512, 2), 0);
	cr_assert_str_eq(sfs_fail_power(f), "on");
	cr_assert_eq(wr(f, 1024, 512, 3), 0, "the third write completes");
	cr_expect_str_eq(sfs_fail_power(f), "off", "and then the power goes");
	cr_expect_eq(wr(f, 1536, 512, 4), -EIO);
	cr_assert_eq(sfs_fail_last_cut(f, &last), 0);
	cr_expect_eq(last.number, 1);
	cr_expect_str_eq(last.trigger, "cut-after-writes:3");
	cr_expect_eq(last.rep.unflushed, 2);
	cr_expect_eq(last.rep.lost, 2);
	sfs_wc_report_free(&last.rep);
	cr_expect_eq(md_at(&md, 0), 1);
	cr_expect_eq(md_at(&md, 512), 0);
	cr_expect_eq(md_at(&md, 1024), 0);
	cr_assert_eq(sfs_fail_close(f), 0);
}

Test(fail, cut_after_flushes)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	struct sfs_fail_cutinfo last;

	cr_assert_eq(power(f, "cut-after-flushes:2"), 0);
	cr_assert_eq(wr(f, 0, 512, 1), 0);
	cr_assert_eq(fl(f), 0);
	cr_assert_eq(wr(f, 512, 512, 2), 0);
	cr_assert_eq(fl(f), 0);
	cr_expect_str_eq(sfs_fail_power(f), "off");
	cr_assert_eq(sfs_fail_last_cut(f, &last), 0);
	cr_expect_eq(last.rep.unflushed, 0, "right after a flush nothing is lost");
	sfs_wc_report_free(&last.rep);
	cr_expect_eq(md_at(&md, 512), 2);
	cr_assert_eq(sfs_fail_close(f), 0);
}

Test(fail, bad_power_values)
{
	static const struct { const char *v, *msg; } cases[] = {
		{ "sideways", "power: 'sideways': expected on, off, off:SEED, cut-after-writes:N or cut-after-flushes:N" },
		{ "cut-after-writes:0", "power: 'cut-after-writes:0': N must be a number from 1" },
		{ "cut-after-flushes:-1", "power: 'cut-after-flushes:-1': N must be a number from 1" },
		{ "cut-after-writes:9223372036854775808", "power: 'cut-after-writes:9223372036854775808': N must be a number from 1" },
		{ "off:x", "power: 'off:x': the seed is not a number" },
		{ "off:", "power: 'off:': the seed is not a number" },
	};
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	char err[512], long_value[100];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(sfs_fail_power_set(f, cases[i].v, strlen(cases[i].v), err, sizeof(err)), -EINVAL, "%s",
			     cases[i].v);
		cr_expect_str_eq(err, cases[i].msg);
	}
	memset(long_value, 'o', sizeof(long_value));
	cr_expect_eq(sfs_fail_power_set(f, long_value, sizeof(long_value), err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "power: not a value of at most 63 characters");
	cr_expect_eq(sfs_fail_power_set(f, "on\0", 3, err, sizeof(err)), -EINVAL, "a NUL inside");
	cr_expect_str_eq(sfs_fail_power(f), "on");
	cr_assert_eq(power(f, "off"), 0);
	cr_expect_eq(sfs_fail_power_set(f, "cut-after-writes:1", 18, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "power: 'cut-after-writes:1': the power is off: set it on first");
	cr_assert_eq(power(f, "off"), 0, "off when off: nothing to do");
	cr_expect_eq(counters(f).power_cuts, 1);
	cr_assert_eq(sfs_fail_close(f), 0);
}

Test(fail, seed_and_policy)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	char err[512], buf[64];

	cr_assert_eq(sfs_fail_seed_set(f, "0x10\n", 5, err, sizeof(err)), 0);
	cr_expect_eq(sfs_fail_seed(f), 16);
	cr_assert_eq(sfs_fail_seed_set(f, "18446744073709551615", 20, err, sizeof(err)), 0);
	cr_expect_eq(sfs_fail_seed(f), UINT64_MAX);
	cr_expect_eq(sfs_fail_seed_set(f, "-1", 2, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "power_seed: '-1': not a number (decimal or 0x)");
	cr_expect_eq(sfs_fail_seed_set(f, "18446744073709551616", 20, err, sizeof(err)), -EINVAL);
	cr_assert_eq(sfs_fail_policy_set(f, "random:0.125", 12, err, sizeof(err)), 0);
	sfs_fail_policy(f, buf, sizeof(buf));
	cr_expect_str_eq(buf, "random:0.125");
	cr_expect_eq(sfs_fail_policy_set(f, "most", 4, err, sizeof(err)), -EINVAL);
	sfs_fail_policy(f, buf, sizeof(buf));
	cr_expect_str_eq(buf, "random:0.125", "unchanged by a bad value");
	cr_assert_eq(sfs_fail_close(f), 0);
}

/* ---- determinism ---- */

/* 512e: a flushed base, then writes of every shape. */
static void workload(struct sfs_fail *f)
{
	cr_assert_eq(wr(f, 0, 65536, 1), 0);
	cr_assert_eq(fl(f), 0);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(wr(f, (uint64_t)(i * 13 % 100) * 1024, 512 * (1 + i % 9), 2 + i), 0);
	cr_assert_eq(req(f, SFS_FAIL_WRITE, 40960, 4096, 99, SFS_WC_FUA, NULL), 0);
}

Test(fail, same_seed_same_outcome)
{
	struct sfs_fail_cutinfo a, b;
	unsigned char *disk = malloc(DISK);
	struct sfs_fail *f;

	cr_assert_eq(sfs_fail_close(open_f(SFS_WC_VOLATILE)), 0);
	f = open_f(SFS_WC_VOLATILE);
	cr_assert_eq(sfs_fail_policy_set(f, "random", 6, NULL, 0), 0);
	workload(f);
	cr_assert_eq(power(f, "off:1234"), 0);
	cr_assert_eq(sfs_fail_last_cut(f, &a), 0);
	cr_expect_eq(a.cut.seed, 1234);
	cr_expect_str_eq(a.trigger, "off:1234");
	cr_expect_gt(a.rep.lost, 0);
	cr_expect_gt(a.rep.kept, 0);
	cr_expect_eq(counters(f).lost_writes, a.rep.lost);
	cr_expect_eq(counters(f).torn_writes, a.rep.torn);
	cr_expect_eq(counters(f).damaged_sectors, sfs_ext_count(&a.rep.damaged_lba, ~0u));
	cr_expect_gt(counters(f).damaged_sectors, 0, "512e, rmw_power_safe false: some damage");
	memcpy(disk, md.data, DISK);
	cr_assert_eq(sfs_fail_close(f), 0);
	/* a fresh state and a fresh disk, the same again */
	tmp_rm_below(ts.statefd);
	memset(md.data, 0, DISK);
	f = open_f(SFS_WC_VOLATILE);
	cr_assert_eq(sfs_fail_policy_set(f, "random", 6, NULL, 0), 0);
	workload(f);
	cr_assert_eq(power(f, "off:1234"), 0);
	cr_assert_eq(sfs_fail_last_cut(f, &b), 0);
	cr_expect(a.rep.unflushed == b.rep.unflushed && a.rep.kept == b.rep.kept && a.rep.lost == b.rep.lost &&
		  a.rep.torn == b.rep.torn);
	cr_expect(sfs_ext_equal(&a.rep.damaged_lba, &b.rep.damaged_lba));
	cr_expect(sfs_ext_equal(&a.rep.lost_lba, &b.rep.lost_lba));
	cr_expect(sfs_ext_equal(&a.rep.torn_lba, &b.rep.torn_lba));
	cr_expect_eq(memcmp(disk, md.data, DISK), 0, "the same disk");
	sfs_wc_report_free(&a.rep);
	sfs_wc_report_free(&b.rep);
	cr_assert_eq(sfs_fail_close(f), 0);
	free(disk);
}

/* ---- crashes ---- */

Test(fail, a_daemon_crash_keeps_every_write)
{
	struct sfs_fail *f;
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		f = open_f(SFS_WC_VOLATILE);
		workload(f);
		_exit(0);                         /* kill -9: nothing closed, nothing flushed */
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	f = open_f(SFS_WC_VOLATILE);
	cr_expect_eq(counters(f).kept_at_start, 40);
	cr_expect(logcap_lines(&cap, "d: the daemon stopped with 40 unflushed writes", NULL, NULL), "%s", cap.buf);
	cr_expect_eq(md_at(&md, 40960), 99);
	cr_expect_eq(md_at(&md, (39 * 13 % 100) * 1024), 41, "the last write is there");
	cr_expect_eq(counters(f).cached_bytes, 0);
	cr_assert_eq(power(f, "off"), 0);
	cr_expect_eq(md_at(&md, (39 * 13 % 100) * 1024), 41, "kept is durable: a cut now loses none of them");
	cr_assert_eq(sfs_fail_close(f), 0);
}

static const char *hook_op;
static int hook_n, hook_calls, hook_fail;

static int hook(const char *op, int n)
{
	if (strcmp(op, hook_op) != 0)
		return 0;
	if (hook_n > 0 && n != hook_n)
		return 0;
	if (hook_n < 0 && ++hook_calls != -hook_n)   /* "disk-save": its -hook_n-th call */
		return 0;
	if (hook_fail)
		return -EIO;
	_exit(0);
}

/* The disk and listing an uninterrupted cut of the workload gives. */
static void reference(unsigned char *disk, char **listing)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	size_t n;

	cr_assert_eq(sfs_fail_policy_set(f, "random:0.5", 10, NULL, 0), 0);
	workload(f);
	cr_assert_eq(power(f, "off:77"), 0);
	memcpy(disk, md.data, DISK);
	cr_assert_eq(sfs_fail_bad_get(f, listing, &n), 0);
	cr_assert_eq(sfs_fail_close(f), 0);
	tmp_rm_below(ts.statefd);
	memset(md.data, 0, DISK);
}

/* The disk is want, else the first byte that differs is named. */
static void expect_disk(const unsigned char *want, const char *what)
{
	size_t i = 0;

	while (i < DISK && md.data[i] == want[i])
		i++;
	cr_expect_eq(i, DISK, "%s: the disk is not the cut's: byte %zu is 0x%02x, not 0x%02x", what, i,
		     i < DISK ? md.data[i] : 0, i < DISK ? want[i] : 0);
}

/* The state directory holds NAME.disk saying power off and nothing pending, and an empty log. */
static void expect_cut_done(const char *what)
{
	char text[4096];
	struct stat st;

	cr_assert_gt(sfs_read_small_file(ts.statefd, "d.disk", text, sizeof(text)), 0, "%s", what);
	cr_expect(strstr(text, "power off\n") && !strstr(text, "\ncut "), "%s: %s", what, text);
	cr_expect(fstatat(ts.statefd, "d.undo", &st, 0) < 0 || st.st_size == SFS_UNDO_HDR_LEN, "%s: the log is empty",
		  what);
}

static void crash_at(const char *op, int n, const unsigned char *want, const char *listing)
{
	char what[64], *got;
	struct sfs_fail *f;
	pid_t pid;
	int status;
	size_t len;
	bool after;

	snprintf(what, sizeof(what), "crash at %s %d", op, n);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		f = open_f(SFS_WC_VOLATILE);
		cr_assert_eq(sfs_fail_policy_set(f, "random:0.5", 10, NULL, 0), 0);
		workload(f);
		hook_op = op;
		hook_n = n;
		hook_calls = 0;
		hook_fail = 0;
		sfs_step_hook = hook;
		power(f, "off:77");
		_exit(3);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child did not stop there", what);
	/* the commit is step 2, the end of the first save */
	after = !strcmp(op, "cut") ? n >= 2 : n <= -2;
	logcap_clear(&cap);
	f = open_f(SFS_WC_VOLATILE);
	if (after) {
		cr_expect_str_eq(sfs_fail_power(f), "off", "%s", what);
		expect_disk(want, what);
		cr_assert_eq(sfs_fail_bad_get(f, &got, &len), 0);
		cr_expect_str_eq(got, listing, "%s", what);
		free(got);
		expect_cut_done(what);
	} else {
		cr_expect_str_eq(sfs_fail_power(f), "on", "%s", what);
		cr_expect_eq(counters(f).kept_at_start, 40, "%s", what);
		cr_expect_eq(md_at(&md, (39 * 13 % 100) * 1024), 41, "%s: every write kept", what);
	}
	cr_assert_eq(sfs_fail_close(f), 0);
	tmp_rm_below(ts.statefd);
	memset(md.data, 0, DISK);
}

Test(fail, a_crash_at_each_step_of_the_cut)
{
	unsigned char *want = malloc(DISK);
	char *listing;

	reference(want, &listing);
	cr_assert_neq(listing[0], '\0', "the reference damages something");
	for (int n = 1; n <= 5; n++)
		crash_at("cut", n, want, listing);
	crash_at("disk-save", -1, want, listing);   /* inside the commit's save */
	crash_at("disk-save", -2, want, listing);   /* inside the last save */
	free(listing);
	free(want);
}

Test(fail, a_failure_at_each_step_of_the_cut)
{
	unsigned char *want = malloc(DISK);
	char *listing, *got, err[512], what[64];
	size_t len;

	reference(want, &listing);
	for (int n = 1; n <= 5; n++) {
		struct sfs_fail *f = open_f(SFS_WC_VOLATILE);

		cr_assert_eq(sfs_fail_policy_set(f, "random:0.5", 10, NULL, 0), 0);
		workload(f);
		hook_op = "cut";
		hook_n = n;
		hook_calls = 0;
		hook_fail = 1;
		sfs_step_hook = hook;
		err[0] = '\0';
		cr_expect_eq(sfs_fail_power_set(f, "off:77", 6, err, sizeof(err)), -EIO, "step %d", n);
		sfs_step_hook = NULL;
		if (n == 1) {
			cr_expect_str_eq(err, "d: the power cut could not be recorded in d.disk: Input/output error");
			cr_expect_str_eq(sfs_fail_power(f), "on", "before the commit: no cut");
			cr_expect_eq(counters(f).power_cuts, 0);
			cr_expect_eq(counters(f).cached_bytes > 0, 1, "the cache as it was");
			cr_assert_eq(power(f, "off:77"), 0, "and a cut works after");
		} else {
			cr_expect(strstr(err, "the power is off, but the cut is not yet applied whole"), "step %d: %s", n, err);
			cr_expect_str_eq(sfs_fail_power(f), "off");
			cr_assert_eq(power(f, "on"), 0, "power on finishes it");
		}
		snprintf(what, sizeof(what), "a failure at step %d", n);
		expect_disk(want, what);
		cr_assert_eq(sfs_fail_bad_get(f, &got, &len), 0);
		cr_expect_str_eq(got, listing, "step %d", n);
		free(got);
		cr_assert_eq(sfs_fail_close(f), 0);
		tmp_rm_below(ts.statefd);
		memset(md.data, 0, DISK);
	}
	free(listing);
	free(want);
}

/* ---- bad sectors ---- */

Test(fail, bad_sectors_fail_reads_and_heal)
{
	struct sfs_fail *f = open_f(SFS_WC_NONE);
	struct sfs_fail_io io;
	char err[512];

	cr_assert_eq(sfs_fail_bad_set(f, "+8-15 +100:sticky", 17, err, sizeof(err)), 0, "%s", err);
	cr_expect(exists("d.disk"));
	cr_expect_eq(rd(f, 0, 4096), 0);
	cr_expect_eq(req(f, SFS_FAIL_READ, 0, 8192, 0, 0, &io), -EIO);
	cr_expect(io.bad_lba == 8 && io.bad_kind == SFS_BAD_PLAIN);
	cr_expect_eq(counters(f).media_errors, 1);
	cr_expect_eq(counters(f).bad_sectors, 9);
	cr_assert_eq(wr(f, 4096, 2048, 7), 0);
	cr_expect_eq(rd(f, 4096, 2048), 0, "healed by the write");
	cr_expect_eq(rd(f, 6144, 512), -EIO, "the rest is still bad");
	cr_assert_eq(req(f, SFS_FAIL_ZERO, 6144, 2048, 0, 0, NULL), 0);
	cr_assert_eq(wr(f, 100 * 512, 512, 7), 0);
	cr_expect_eq(rd(f, 100 * 512, 512), -EIO, "sticky");
	expect_listing(f, "100-100:sticky\n");
	cr_assert_eq(sfs_fail_close(f), 0);
	f = open_f(SFS_WC_NONE);
	expect_listing(f, "100-100:sticky\n");   /* the healing was saved */
	cr_expect_eq(sfs_fail_bad_set(f, "+1 +2-1", 7, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "bad_sectors: '+2-1': END 1 is before START 2");
	cr_assert_eq(sfs_fail_bad_set(f, "clear", 5, err, sizeof(err)), 0);
	cr_expect(!exists("d.disk"));
	cr_assert_eq(sfs_fail_close(f), 0);
}

Test(fail, a_cut_damages_flushed_neighbours)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	struct sfs_fail_io io;

	cr_assert_eq(wr(f, 0, 8192, 1), 0);
	cr_assert_eq(fl(f), 0);                  /* the redo blocks 0-15, flushed */
	cr_assert_eq(wr(f, 4096 + 512, 512, 2), 0);
	cr_assert_eq(power(f, "off"), 0);
	cr_assert_eq(power(f, "on"), 0);
	cr_expect_eq(rd(f, 0, 4096), 0);
	cr_expect_eq(req(f, SFS_FAIL_READ, 4096, 512, 0, 0, &io), -EIO, "flushed long before, and unreadable");
	cr_expect(io.bad_lba == 8 && io.bad_kind == SFS_BAD_DAMAGED);
	expect_listing(f, "8-15:damaged\n");
	cr_assert_eq(wr(f, 4096 + 512, 512, 3), 0);
	cr_expect_eq(rd(f, 4096, 512), -EIO, "a part does not heal it");
	cr_assert_eq(wr(f, 4096, 4096, 3), 0);
	cr_expect_eq(rd(f, 4096, 4096), 0, "the whole physical sector does");
	cr_assert_eq(sfs_fail_close(f), 0);
}

/* ---- hostile state ---- */

Test(fail, damaged_logs)
{
	struct sfs_fail *f;
	char err[512];
	int fd;

	/* no cut under way: removed, its writes kept */
	tmp_write_file(ts.statefd, "d.undo", "garbage garbage garbage garbage garbage garbage garbage garbage!", 64);
	f = open_f(SFS_WC_VOLATILE);
	cr_expect(logcap_lines(&cap, "d.undo: removed: not an undo log", NULL, NULL), "%s", cap.buf);
	cr_assert_eq(sfs_fail_close(f), 0);
	/* a cut under way needs it: refused */
	f = open_f(SFS_WC_VOLATILE);
	workload(f);
	hook_op = "cut";
	hook_n = 3;
	hook_calls = 0;
	hook_fail = 1;
	sfs_step_hook = hook;
	cr_expect_eq(power(f, "off"), -EIO);
	sfs_step_hook = NULL;
	sfs_fail_close(f);
	fd = openat(ts.statefd, "d.undo", O_RDWR);
	cr_assert_eq(pwrite(fd, "X", 1, 40), 1);
	close(fd);
	cr_expect_eq(try_open(SFS_WC_VOLATILE, &f, err, sizeof(err)), -EUCLEAN);
	cr_expect_str_eq(err, "d.undo: not an undo log (its header is damaged)");
}

Test(fail, a_log_without_a_volatile_cache_is_settled)
{
	struct sfs_fail *f;
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		f = open_f(SFS_WC_VOLATILE);
		workload(f);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	f = open_f(SFS_WC_NONE);                 /* the sidecar says none now */
	cr_expect_eq(counters(f).kept_at_start, 40);
	cr_expect(!exists("d.undo"));
	cr_assert_eq(wr(f, 0, 512, 5), 0);
	cr_assert_eq(power(f, "off"), 0);
	cr_expect_eq(md_at(&md, 0), 5, "without a volatile cache a cut loses nothing");
	cr_assert_eq(sfs_fail_close(f), 0);
}

Test(fail, a_damaged_state_file_is_refused)
{
	struct sfs_fail *f;
	char err[512];

	tmp_write_file(ts.statefd, "d.disk", "sectorfs-disk 1\npower sideways\n", 31);
	cr_expect_eq(try_open(SFS_WC_NONE, &f, err, sizeof(err)), -EUCLEAN);
	cr_expect_str_eq(err, "d.disk: line 3: no crc32c line: the file is cut short");
	cr_expect_null(f);
}

/* A disk that ends inside a physical sector: the damage of a cut there stops at its end, and
 * the state saved with it opens again. */
Test(fail, damage_at_the_end_of_an_odd_disk)
{
	struct sfs_fail *f;

	disk_size = DISK - 512;
	f = open_f(SFS_WC_VOLATILE);
	cr_assert_eq(wr(f, DISK - 1024, 512, 1), 0);
	cr_assert_eq(power(f, "off"), 0);
	expect_listing(f, "504-510:damaged\n");
	cr_assert_eq(sfs_fail_close(f), 0);
	f = open_f(SFS_WC_VOLATILE);
	expect_listing(f, "504-510:damaged\n");
	cr_assert_eq(sfs_fail_close(f), 0);
}

/* ---- requests from several threads ---- */

struct writer {
	struct sfs_fail *f;
	int id;
	unsigned done;             /* writes that completed */
	int last;                  /* the error that stopped it */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (unsigned i = 0;; i++) {
		uint64_t off = (uint64_t)w->id * 32768 + (i % 8) * 4096;
		int rc = w->id == 4 ? fl(w->f) : wr(w->f, off, 4096, 1 + (int)(i % 200));

		if (rc < 0) {
			w->last = rc;
			return NULL;
		}
		w->done++;
	}
}

/* Four writers and a flusher run until a trigger cuts the power under them: the cut waits
 * for the requests in flight, every request after it fails with EIO, and nothing deadlocks. */
Test(fail, a_trigger_cuts_under_concurrent_requests)
{
	struct sfs_fail *f = open_f(SFS_WC_VOLATILE);
	struct sfs_fail_cutinfo last;
	struct writer w[5];
	pthread_t t[5];
	unsigned writes = 0;

	cr_assert_eq(power(f, "cut-after-writes:2000"), 0);
	for (int i = 0; i < 5; i++) {
		w[i] = (struct writer){ .f = f, .id = i };
		cr_assert_eq(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_expect_eq(w[i].last, -EIO, "thread %d stopped with %d", i, w[i].last);
		if (i < 4)
			writes += w[i].done;
	}
	cr_expect_str_eq(sfs_fail_power(f), "off");
	cr_expect_geq(writes, 2000, "the trigger's writes all completed");
	cr_expect_leq(writes, 2000 + 3, "at most one more write in flight on each other thread");
	cr_assert_eq(sfs_fail_last_cut(f, &last), 0);
	cr_expect_leq(last.rep.unflushed, writes);
	sfs_wc_report_free(&last.rep);
	cr_expect_eq(counters(f).cached_bytes, 0, "the cut emptied the cache");
	cr_assert_eq(power(f, "on"), 0);
	cr_expect_eq(wr(f, 0, 4096, 9), 0);
	cr_assert_eq(sfs_fail_close(f), 0);
}

/* A grown disk takes bad sectors in its new part. */
Test(fail, the_list_follows_a_grow)
{
	struct sfs_fail *f = open_f(SFS_WC_NONE);
	char err[512];

	cr_expect_eq(sfs_fail_bad_set(f, "+600", 4, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "bad_sectors: '+600': sector 600 is past the end of the disk (last: 511)");
	sfs_fail_resize(f, 2 * DISK);
	cr_assert_eq(sfs_fail_bad_set(f, "+600", 4, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rd(f, 600 * 512, 512), -EIO);
	cr_assert_eq(sfs_fail_close(f), 0);
	disk_size = 2 * DISK;
	f = open_f(SFS_WC_NONE);
	expect_listing(f, "600-600\n");
	cr_assert_eq(sfs_fail_close(f), 0);
}
