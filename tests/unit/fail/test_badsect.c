/* SPDX-License-Identifier: MIT */
/*
 * test_badsect.c - the bad-sector list (core/fail/badsect.c).
 *
 * Proves: each command form (+S, +S-E, +S-E:sticky, +S-E:damaged widened
 * to physical sectors, -S-E, clear, several at once) does what
 * badsect.h says; every malformed command is refused with a message naming
 * it and what is wrong, and leaves the list as it was (all or none); the
 * listing, prefixed with '+', rebuilds the same list; a read touching any
 * kind fails with the first bad LBA; a write heals plain sectors it
 * covers, never sticky ones, and a damaged physical sector only when it
 * covers it whole; the list holds at most SFS_BAD_MAX_RANGES ranges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fail/badsect.h"

static struct sfs_badsect b;

static void setup(void)
{
	sfs_bad_init(&b, 512, 4096, 1000);   /* 512e, 1000 sectors */
}

static void teardown(void)
{
	sfs_bad_free(&b);
}

TestSuite(badsect, .init = setup, .fini = teardown);

static int apply(const char *v, char *err, size_t errlen)
{
	return sfs_bad_apply(&b, v, strlen(v), NULL, err, errlen);
}

static void expect_listing(const char *want)
{
	char *s = NULL;
	size_t n = 0;

	cr_assert_eq(sfs_bad_format(&b, &s, &n), 0);
	cr_expect_str_eq(s, want);
	cr_expect_eq(n, strlen(want));
	free(s);
}

Test(badsect, commands)
{
	char err[256] = "";
	bool changed;

	cr_assert_eq(apply("+5", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(apply("+10-19", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(apply("+30-31:sticky", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(apply("+41:damaged", err, sizeof(err)), 0, "%s", err);
	expect_listing("5-5\n10-19\n30-31:sticky\n40-47:damaged\n");
	cr_expect_eq(sfs_bad_count(&b, SFS_BAD_ANY), 1 + 10 + 2 + 8);
	cr_assert_eq(apply("-12-13\n-5", err, sizeof(err)), 0, "%s", err);
	expect_listing("10-11\n14-19\n30-31:sticky\n40-47:damaged\n");
	cr_assert_eq(apply("+12, +13", err, sizeof(err)), 0, "%s", err);
	expect_listing("10-19\n30-31:sticky\n40-47:damaged\n");
	cr_assert_eq(sfs_bad_apply(&b, "+12", 3, &changed, err, sizeof(err)), 0);
	cr_expect(!changed, "adding what is there changes nothing");
	cr_assert_eq(sfs_bad_apply(&b, "clear\n", 6, &changed, err, sizeof(err)), 0);
	cr_expect(changed);
	expect_listing("");
	cr_assert_eq(apply("+999", err, sizeof(err)), 0, "the last sector");
}

Test(badsect, bad_commands_name_what_is_wrong)
{
	static const struct { const char *v, *msg; } cases[] = {
		{ "5", "bad_sectors: '5': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "+", "bad_sectors: '+': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "+x", "bad_sectors: '+x': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "+5-", "bad_sectors: '+5-': END is not a number" },
		{ "+9-5", "bad_sectors: '+9-5': END 5 is before START 9" },
		{ "+1000", "bad_sectors: '+1000': sector 1000 is past the end of the disk (last: 999)" },
		{ "+5-1000", "bad_sectors: '+5-1000': sector 1000 is past the end of the disk (last: 999)" },
		{ "+5:rotten", "bad_sectors: '+5:rotten': unknown kind 'rotten' (sticky or damaged)" },
		{ "-5:sticky", "bad_sectors: '-5:sticky': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "+18446744073709551616", "bad_sectors: '+18446744073709551616': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "+1 +2 +3x", "bad_sectors: '+3x': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
		{ "clearall", "bad_sectors: 'clearall': expected +START[-END][:sticky|:damaged], -START[-END] or clear" },
	};
	char err[256];

	cr_assert_eq(apply("+100-109", err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(apply(cases[i].v, err, sizeof(err)), -EINVAL, "'%s' accepted", cases[i].v);
		cr_expect_str_eq(err, cases[i].msg);
		expect_listing("100-109\n");   /* all or none: '+1 +2 +3x' added nothing */
	}
	cr_expect_eq(sfs_bad_apply(&b, "+1\0+2", 5, NULL, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "bad_sectors: a NUL byte in the value");
}

Test(badsect, the_listing_adds_back_the_same_list)
{
	struct sfs_badsect c;
	char err[256], *s, *cmds;
	size_t n, k = 0;

	cr_assert_eq(apply("+1-3 +8:sticky +17:damaged +100-200 +300-300:sticky", err, sizeof(err)), 0);
	cr_assert_eq(sfs_bad_format(&b, &s, &n), 0);
	cmds = malloc(2 * n + 2);
	for (char *p = s; *p; p++) {            /* each line, prefixed with '+' */
		if (p == s || p[-1] == '\n')
			cmds[k++] = '+';
		cmds[k++] = *p;
	}
	sfs_bad_init(&c, 512, 4096, 1000);
	cr_assert_eq(sfs_bad_apply(&c, cmds, k, NULL, err, sizeof(err)), 0, "%s", err);
	cr_expect(sfs_ext_equal(&c.ext, &b.ext));
	sfs_bad_free(&c);
	free(cmds);
	free(s);
}

Test(badsect, reads_fail_writes_heal)
{
	char err[256];
	uint64_t lba = 0;
	unsigned kind = 0;
	bool changed;

	cr_assert_eq(apply("+10-11 +20:sticky +33:damaged", err, sizeof(err)), 0);
	cr_expect_eq(sfs_bad_check_read(&b, 0, 5120, NULL, NULL), 0, "sectors 0-9 are fine");
	cr_expect_eq(sfs_bad_check_read(&b, 0, 5632, &lba, &kind), -EIO);
	cr_expect(lba == 10 && kind == SFS_BAD_PLAIN);
	cr_expect_eq(sfs_bad_check_read(&b, 20 * 512, 512, &lba, &kind), -EIO);
	cr_expect(lba == 20 && kind == SFS_BAD_STICKY);
	cr_expect_eq(sfs_bad_check_read(&b, 38 * 512, 4096, &lba, &kind), -EIO);
	cr_expect(lba == 38 && kind == SFS_BAD_DAMAGED, "the damaged physical sector is 32-39, got %llu",
		  (unsigned long long)lba);
	/* a write heals the plain sectors it covers, and only those */
	cr_assert_eq(sfs_bad_heal(&b, 10 * 512, 512, &changed), 0);
	cr_expect(changed);
	cr_expect_eq(sfs_bad_check_read(&b, 10 * 512, 512, NULL, NULL), 0);
	cr_expect_eq(sfs_bad_check_read(&b, 11 * 512, 512, NULL, NULL), -EIO);
	/* sticky stays */
	cr_assert_eq(sfs_bad_heal(&b, 16 * 512, 4096, &changed), 0);
	cr_expect(!changed);
	cr_expect_eq(sfs_bad_check_read(&b, 20 * 512, 512, NULL, NULL), -EIO);
	/* damaged: a part of the physical sector is not enough, the whole of it is */
	cr_assert_eq(sfs_bad_heal(&b, 33 * 512, 3584, &changed), 0);
	cr_expect(!changed, "a write of 7 of its 8 sectors does not heal it");
	cr_assert_eq(sfs_bad_heal(&b, 36 * 512, 4096, &changed), 0);
	cr_expect(!changed, "nor one across it and the next");
	cr_assert_eq(sfs_bad_heal(&b, 28 * 512, 8192, &changed), 0);
	cr_expect(changed);
	cr_expect_eq(sfs_bad_check_read(&b, 32 * 512, 4096, NULL, NULL), 0);
	expect_listing("11-11\n20-20:sticky\n");
}

Test(badsect, damage_covers_physical_sectors)
{
	cr_assert_eq(sfs_bad_damage(&b, 4096 + 512, 512), 0);
	cr_assert_eq(sfs_bad_damage(&b, 20480 - 512, 1024), 0);
	expect_listing("8-15:damaged\n32-47:damaged\n");
	cr_expect_eq(sfs_bad_count(&b, SFS_BAD_DAMAGED), 24);
}

Test(badsect, at_most_so_many_ranges)
{
	char err[256];
	char *v = malloc(SFS_BAD_MAX_RANGES * 12ull + 32);
	size_t n = 0;
	struct sfs_badsect big;

	sfs_bad_init(&big, 512, 512, 4ull * SFS_BAD_MAX_RANGES);
	for (unsigned i = 0; i <= SFS_BAD_MAX_RANGES; i++)
		n += (size_t)sprintf(v + n, "+%u ", 2 * i);
	cr_expect_eq(sfs_bad_apply(&big, v, n, NULL, err, sizeof(err)), -E2BIG);
	cr_expect_str_eq(err, "bad_sectors: more than 65536 ranges");
	cr_expect_eq(big.ext.n, 0, "all or none");
	sfs_bad_free(&big);
	free(v);
}

/* A disk whose size is not a whole number of physical sectors: damage never reaches past its
 * end, so what is listed (and saved) can be added back. */
Test(badsect, damage_stops_at_the_end_of_the_disk)
{
	struct sfs_badsect odd, c;
	char err[256], *s, cmd[64];
	size_t n;

	sfs_bad_init(&odd, 512, 4096, 1001);
	cr_assert_eq(sfs_bad_apply(&odd, "+1000:damaged", 13, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sfs_bad_damage(&odd, 996 * 512, 512), 0);
	cr_assert_eq(sfs_bad_format(&odd, &s, &n), 0);
	cr_expect_str_eq(s, "992-1000:damaged\n");
	snprintf(cmd, sizeof(cmd), "+%.*s", (int)n - 1, s);
	sfs_bad_init(&c, 512, 4096, 1001);
	cr_expect_eq(sfs_bad_apply(&c, cmd, strlen(cmd), NULL, err, sizeof(err)), 0, "%s", err);
	free(s);
	sfs_bad_free(&c);
	sfs_bad_free(&odd);
}

Test(badsect, a_disk_without_sectors)
{
	struct sfs_badsect z;
	char err[256];

	sfs_bad_init(&z, 512, 512, 0);
	cr_expect_eq(sfs_bad_apply(&z, "+0", 2, NULL, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "bad_sectors: '+0': the disk has no sectors");
	cr_expect_eq(sfs_bad_apply(&z, "clear", 5, NULL, err, sizeof(err)), 0);
	sfs_bad_free(&z);
}
