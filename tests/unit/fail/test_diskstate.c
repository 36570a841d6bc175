/* SPDX-License-Identifier: MIT */
/*
 * test_diskstate.c - NAME.disk, a disk's power state, cut under way and
 * bad-sector list (core/fail/diskstate.c).
 *
 * Proves: a state saved and loaded again is the same (power, cut with its
 * seed and policy, every range and kind), and its text is the documented
 * one; the default state has no file (saving it removes the file); a file
 * that is not one is refused with its name, the line and the reason (a
 * wrong first line, an unknown line, a bad range, a cut without a seed, a
 * changed byte, a missing checksum, text after it); a FIFO or a symlink is
 * refused; a save that fails, or a crash, between writing the temporary
 * file and renaming it leaves the old file whole (and, after the crash, a
 * temporary file the store's next open removes).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/crc32c.h"
#include "fail/diskstate.h"
#include "util/step_test.h"
#include "util/tmpfile.h"
#include "fixtures/tmpstore.h"

#define F "d.disk"

static struct tmpstore ts;

static void setup(void)
{
	tmpstore_make(&ts, "diskstate", true);
}

static void teardown(void)
{
	sfs_step_hook = NULL;
	tmpstore_destroy(&ts);
}

TestSuite(diskstate, .init = setup, .fini = teardown, .timeout = 60);

static void sample(struct sfs_diskstate *ds)
{
	char err[256];

	sfs_disk_init(ds, 512, 4096, 1 << 20);
	ds->power_off = true;
	ds->cut_pending = true;
	ds->cut = (struct sfs_wc_cut){ .policy = SFS_WC_RANDOM, .p = 0.25, .seed = 18446744073709551615ull };
	cr_assert_eq(sfs_bad_apply(&ds->bad, "+100-107 +200:sticky +9:damaged", 31, NULL, err, sizeof(err)), 0, "%s",
		     err);
}

static bool same(const struct sfs_diskstate *a, const struct sfs_diskstate *b)
{
	return a->power_off == b->power_off && a->cut_pending == b->cut_pending &&
	       (!a->cut_pending || (a->cut.seed == b->cut.seed && a->cut.policy == b->cut.policy && a->cut.p == b->cut.p)) &&
	       sfs_ext_equal(&a->bad.ext, &b->bad.ext);
}

static int load(struct sfs_diskstate *ds, char *err, size_t errlen)
{
	sfs_disk_init(ds, 512, 4096, 1 << 20);
	return sfs_disk_load(ts.statefd, F, ds, err, errlen);
}

Test(diskstate, round_trip)
{
	struct sfs_diskstate a, b;
	char err[256] = "", text[512];
	ssize_t n;

	sample(&a);
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	n = sfs_read_small_file(ts.statefd, F, text, sizeof(text));
	cr_assert_gt(n, 0);
	{
		static const char want[] = "sectorfs-disk 1\npower off\ncut 18446744073709551615 random:0.25\n"
					   "bad 8-15:damaged\nbad 100-107\nbad 200-200:sticky\ncrc32c ";

		cr_expect_eq(strncmp(text, want, sizeof(want) - 1), 0, "%s", text);
		cr_expect_eq((size_t)n, sizeof(want) - 1 + 9, "8 hex digits and a newline after it");
	}
	cr_assert_eq(load(&b, err, sizeof(err)), 0, "%s", err);
	cr_expect(same(&a, &b));
	sfs_disk_free(&b);
	a.cut_pending = false;
	a.power_off = false;
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	cr_assert_eq(load(&b, err, sizeof(err)), 0, "%s", err);
	cr_expect(same(&a, &b));
	sfs_disk_free(&b);
	sfs_disk_free(&a);
}

Test(diskstate, the_default_has_no_file)
{
	struct sfs_diskstate a;
	struct stat st;
	char err[256];

	sample(&a);
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	sfs_disk_free(&a);
	sfs_disk_init(&a, 512, 4096, 1 << 20);
	cr_assert(sfs_disk_is_default(&a));
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	cr_expect_eq(fstatat(ts.statefd, F, &st, 0), -1, "the file is gone");
	cr_expect_eq(load(&a, err, sizeof(err)), -ENOENT);
	cr_expect(sfs_disk_is_default(&a));
	sfs_disk_free(&a);
}

/* Write text (with its checksum line appended when sum) as the file. */
static void plant(const char *text, bool sum)
{
	char buf[1024];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s", text);

	if (sum)
		snprintf(buf + n, sizeof(buf) - n, "crc32c %08x\n", sfs_crc32c(0, buf, n));
	tmp_write_file(ts.statefd, F, buf, strlen(buf));
}

Test(diskstate, bad_files_are_refused_by_line)
{
	static const struct { const char *text; bool sum; const char *msg; } cases[] = {
		{ "power off\n", true, F ": line 1: not a sectorfs disk state (expected 'sectorfs-disk 1')" },
		{ "sectorfs-disk 1\npower maybe\n", true, F ": line 2: expected 'power', 'cut', 'bad' or 'crc32c'" },
		{ "sectorfs-disk 1\npower on\nbad 9-5\n", true, F ": line 3: bad_sectors: '+9-5': END 5 is before START 9" },
		{ "sectorfs-disk 1\nbad 2000000000\n", true,
		  F ": line 2: bad_sectors: '+2000000000': sector 2000000000 is past the end of the disk (last: 1048575)" },
		{ "sectorfs-disk 1\ncut x lose-all\n", true, F ": line 2: the cut's seed is not a number" },
		{ "sectorfs-disk 1\ncut 5\n", true, F ": line 2: expected 'cut SEED POLICY'" },
		{ "sectorfs-disk 1\ncut 5 random:2\n", true,
		  F ": line 2: power cut policy 'random:2': P must be a number from 0 to 1" },
		{ "sectorfs-disk 1\npower off\n", false, F ": line 3: no crc32c line: the file is cut short" },
		{ "sectorfs-disk 1\npower off", false, F ": line 2: the last line has no newline" },
		{ "sectorfs-disk 1\npower off\ncrc32c 00000000\n", false, F ": line 3: checksum mismatch: the file is damaged" },
	};
	struct sfs_diskstate ds;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plant(cases[i].text, cases[i].sum);
		err[0] = '\0';
		cr_expect_eq(load(&ds, err, sizeof(err)), -EUCLEAN, "case %zu accepted", i);
		cr_expect_str_eq(err, cases[i].msg);
		cr_expect(sfs_disk_is_default(&ds), "refused: untouched");
		sfs_disk_free(&ds);
	}
	/* a changed byte */
	sample(&ds);
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &ds), 0);
	sfs_disk_free(&ds);
	{
		int fd = openat(ts.statefd, F, O_RDWR);

		cr_assert_eq(pwrite(fd, "9", 1, 50), 1);
		close(fd);
	}
	cr_expect_eq(load(&ds, err, sizeof(err)), -EUCLEAN);
	cr_expect_str_eq(err, F ": line 7: checksum mismatch: the file is damaged");
	sfs_disk_free(&ds);
	/* text after the checksum */
	plant("sectorfs-disk 1\npower off\n", true);
	{
		int fd = openat(ts.statefd, F, O_WRONLY | O_APPEND);

		cr_assert_eq(write(fd, "power on\n", 9), 9);
		close(fd);
	}
	cr_expect_eq(load(&ds, err, sizeof(err)), -EUCLEAN);
	cr_expect_str_eq(err, F ": line 4: text after the crc32c line");
	sfs_disk_free(&ds);
}

Test(diskstate, fifos_and_symlinks_are_refused)
{
	struct sfs_diskstate ds;
	char err[256];

	cr_assert_eq(mkfifoat(ts.statefd, F, 0600), 0);
	cr_expect_eq(load(&ds, err, sizeof(err)), -EPERM);
	cr_expect_str_eq(err, F ": not a regular file");
	sfs_disk_free(&ds);
	cr_assert_eq(unlinkat(ts.statefd, F, 0), 0);
	cr_assert_eq(symlinkat("/etc/passwd", ts.statefd, F), 0);
	cr_expect_eq(load(&ds, err, sizeof(err)), -EPERM);
	sfs_disk_free(&ds);
}

static int fail_hook(const char *op, int n)
{
	return !strcmp(op, "disk-save") && n == 1 ? -EIO : 0;
}

static int crash_hook(const char *op, int n)
{
	if (!strcmp(op, "disk-save") && n == 1)
		_exit(0);
	return 0;
}

/* The names in the state directory other than F, as one string. */
static void others(char *out, size_t len)
{
	int fd = openat(ts.statefd, ".", O_RDONLY | O_DIRECTORY);
	DIR *d = fdopendir(fd);
	struct dirent *e;
	size_t n = 0;

	out[0] = '\0';
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, F))
			n += (size_t)snprintf(out + n, len - n, "%s ", e->d_name);
	closedir(d);
}

Test(diskstate, a_failed_or_crashed_save_keeps_the_old_file)
{
	struct sfs_diskstate a, b;
	char err[256], names[256];
	pid_t pid;
	int status;

	sample(&a);
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	a.power_off = false;
	sfs_step_hook = fail_hook;
	cr_expect_eq(sfs_disk_save(ts.statefd, F, &a), -EIO);
	sfs_step_hook = NULL;
	others(names, sizeof(names));
	cr_expect_str_eq(names, "", "no temporary file left");
	cr_assert_eq(load(&b, err, sizeof(err)), 0, "%s", err);
	cr_expect(b.power_off, "the old state");
	sfs_disk_free(&b);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		sfs_step_hook = crash_hook;
		sfs_disk_save(ts.statefd, F, &a);
		_exit(3);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child did not stop at the step");
	cr_assert_eq(load(&b, err, sizeof(err)), 0, "%s", err);
	cr_expect(b.power_off, "the old state");
	sfs_disk_free(&b);
	others(names, sizeof(names));
	cr_expect(sfs_tmp_is_ours(names), "a temporary file for the next open to remove: '%s'", names);
	sfs_disk_free(&a);
}

/* A full list (SFS_BAD_MAX_RANGES ranges) loads in far less than a second: its lines are added
 * one by one, not each by copying the list so far (that took 3.7 s here, and 17 s of a daemon's
 * start, whose copies went through mmap and page faults). */
Test(diskstate, a_full_list_loads_at_once, .timeout = 2)
{
	struct sfs_diskstate a, b;
	char err[256] = "";

	sfs_disk_init(&a, 512, 512, 1 << 20);
	for (uint64_t i = 0; i < SFS_BAD_MAX_RANGES; i++)
		cr_assert_eq(sfs_ext_set(&a.bad.ext, 2 * i, 2 * i + 1, SFS_BAD_PLAIN), 0);
	cr_assert_eq(sfs_disk_save(ts.statefd, F, &a), 0);
	sfs_disk_init(&b, 512, 512, 1 << 20);
	cr_assert_eq(sfs_disk_load(ts.statefd, F, &b, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(b.bad.ext.n, SFS_BAD_MAX_RANGES);
	cr_expect(same(&a, &b));
	sfs_disk_free(&a);
	sfs_disk_free(&b);
}
