/* SPDX-License-Identifier: MIT */
/*
 * test_crash_sample.c - the crash explorer's points (tools/bench/
 * crash_sample.c): their names and the sample of a run.
 *
 * Proves: every trigger a report prints parses back to the same point
 * (seconds to the millisecond), and what is not one is refused (no seed,
 * K of 0 or not a number, a negative or endless time, a seed past 2^64-1,
 * blanks or a sign before the seed, trailing text); a sample takes one K
 * from each equal stratum of 1..W, in order, never twice, and every K
 * when it may take more than there are; what a small kind cannot take
 * goes to the others; the end is one point; the same seed gives the same
 * sample and another seed another; a run without writes or flushes gives
 * no point of those kinds; times fall within the run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "crash.h"

static struct crash_point pts[256];

static unsigned sample(bool w, bool f, bool s, bool e, long long writes, long long flushes, double secs,
		       unsigned n, uint64_t seed)
{
	bool on[CRASH_NKINDS] = { false };

	on[CRASH_WRITES] = w;
	on[CRASH_FLUSHES] = f;
	on[CRASH_SECONDS] = s;
	on[CRASH_END] = e;
	memset(pts, 0, sizeof(pts));
	return crash_sample(on, writes, flushes, secs, n, seed, pts);
}

static unsigned count(unsigned n, enum crash_kind k)
{
	unsigned c = 0;

	for (unsigned i = 0; i < n; i++)
		c += pts[i].kind == k;
	return c;
}

Test(crash_sample, triggers_round_trip)
{
	struct crash_point p = { .kind = CRASH_WRITES, .k = 17, .seed = 42 }, q;
	const struct crash_point all[] = {
		{ .kind = CRASH_WRITES, .k = 1, .seed = 0 },
		{ .kind = CRASH_FLUSHES, .k = 123456789012ull, .seed = UINT64_MAX },
		{ .kind = CRASH_SECONDS, .at = 1.5, .seed = 7 },
		{ .kind = CRASH_SECONDS, .at = 0, .seed = 7 },
		{ .kind = CRASH_END, .seed = 4052577513ull },
	};
	char t[64], s[96];

	cr_assert_str_eq(crash_trigger(&p, t, sizeof(t)), "cut-after-writes:17");
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		snprintf(s, sizeof(s), "%llu:%s", (unsigned long long)all[i].seed, crash_trigger(&all[i], t, sizeof(t)));
		cr_assert_eq(crash_parse_point(s, &q), 0, "%s", s);
		cr_assert_eq(q.kind, all[i].kind, "%s", s);
		cr_assert_eq(q.k, all[i].k, "%s", s);
		cr_assert_eq(q.seed, all[i].seed, "%s", s);
		cr_assert_float_eq(q.at, all[i].at, 1e-9, "%s", s);
	}
	cr_assert_eq(crash_parse_point("0x2a:cut-at-end", &q), 0);
	cr_assert_eq(q.seed, 42);
}

Test(crash_sample, malformed_points_refused)
{
	static const char *const bad[] = {
		"", "12", "12:", ":cut-at-end", "x:cut-at-end", " 1:cut-at-end", "-1:cut-at-end", "+1:cut-at-end",
		"18446744073709551616:cut-at-end", "1:cut-after-writes:0", "1:cut-after-writes:",
		"1:cut-after-writes:-3", "1:cut-after-writes:5x", "1:cut-after-flushes:0x10",
		"1:cut-after-seconds:", "1:cut-after-seconds:-1", "1:cut-after-seconds:nan",
		"1:cut-after-seconds:inf", "1:cut-after-seconds:1e7", "1:cut-at-endx", "1:cut-after-bytes:3",
		"1:cut-after-writes:99999999999999999999",
	};
	struct crash_point q;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(crash_parse_point(bad[i], &q), -1, "'%s' accepted", bad[i]);
}

Test(crash_sample, one_k_in_each_stratum)
{
	unsigned n = sample(true, false, false, false, 1000, 0, 1, 10, 1);

	cr_assert_eq(n, 10);
	for (unsigned j = 0; j < n; j++) {
		cr_assert_eq(pts[j].kind, CRASH_WRITES);
		cr_assert(pts[j].k >= 1 + j * 100 && pts[j].k <= (j + 1) * 100, "point %u: K %llu", j,
			  (unsigned long long)pts[j].k);
	}
}

Test(crash_sample, every_k_when_fewer_than_asked)
{
	unsigned n = sample(true, true, false, true, 7, 3, 1, 50, 9);

	cr_assert_eq(n, 11, "7 writes + 3 flushes + the end, not %u", n);
	for (unsigned j = 0; j < 7; j++)
		cr_assert_eq(pts[j].k, j + 1);
	for (unsigned j = 0; j < 3; j++)
		cr_assert(pts[7 + j].kind == CRASH_FLUSHES && pts[7 + j].k == j + 1);
	cr_assert_eq(pts[10].kind, CRASH_END);
}

Test(crash_sample, a_small_kind_leaves_its_share_to_the_others)
{
	unsigned n = sample(true, true, false, true, 100, 3, 1, 20, 1);

	cr_assert_eq(n, 20);
	cr_assert_eq(count(n, CRASH_FLUSHES), 3);
	cr_assert_eq(count(n, CRASH_WRITES), 16);
	cr_assert_eq(count(n, CRASH_END), 1);
}

Test(crash_sample, seeded)
{
	struct crash_point a[20];
	unsigned n = sample(true, true, true, true, 500, 80, 2.0, 20, 5);
	bool differ = false;

	memcpy(a, pts, sizeof(a));
	cr_assert_eq(sample(true, true, true, true, 500, 80, 2.0, 20, 5), n);
	cr_assert_eq(memcmp(a, pts, sizeof(a)), 0, "the same seed gave another sample");
	sample(true, true, true, true, 500, 80, 2.0, 20, 6);
	for (unsigned i = 0; i < n; i++)
		differ |= a[i].k != pts[i].k || a[i].at != pts[i].at || a[i].seed != pts[i].seed;
	cr_assert(differ, "seeds 5 and 6 gave the same sample");
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			cr_assert(a[i].kind != a[j].kind || a[i].k != a[j].k || a[i].at != a[j].at,
				  "points %u and %u are the same", i, j);
}

Test(crash_sample, times_within_the_run)
{
	unsigned n = sample(false, false, true, false, 0, 0, 0.4, 8, 3);

	cr_assert_eq(n, 8);
	for (unsigned j = 0; j < n; j++)
		cr_assert(pts[j].kind == CRASH_SECONDS && pts[j].at >= j * 0.05 && pts[j].at < (j + 1) * 0.05,
			  "time %u: %f", j, pts[j].at);
}

Test(crash_sample, nothing_to_cut)
{
	cr_assert_eq(sample(true, true, false, false, 0, 0, 1, 20, 1), 0);
	cr_assert_eq(sample(false, false, true, false, 0, 0, 0, 5, 1), 0, "a run of no time has no times");
	cr_assert_eq(sample(true, false, false, true, 0, 0, 1, 20, 1), 1, "the end is always there");
	cr_assert_eq(sample(true, false, false, true, 50, 0, 1, 1, 1), 1, "one point: the end");
	cr_assert_eq(pts[0].kind, CRASH_END);
}
