/* SPDX-License-Identifier: MIT */
/*
 * test_histogram.c - the log-linear histogram of core/util/histogram.h and the
 * percentile walk of core/util/histogram.c, on their own (test_stats.c tests
 * them as the stats use them, against sorted samples).
 *
 * Proves: below 2^(s+1) a value has a bucket of its own, and above it
 * every bucket's midpoint lies within 1/2^(s+1) of each value in it, for
 * the stats' cut (s = 4) and the bench's (s = 5); sfs_hist_at_rank finds
 * the bucket where the counts reach the rank (skipping empty buckets),
 * reports its midpoint clamped to the smallest and largest value
 * recorded, and reports the largest for a rank in the open-ended last
 * bucket or past every count.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/histogram.h"

#define NB 64u

static uint64_t hist[NB];

static void setup(void)
{
	memset(hist, 0, sizeof(hist));
}

TestSuite(histogram, .init = setup);

/* Put v into hist (s = 2, NB buckets). */
static void add(uint64_t v, uint64_t n)
{
	hist[sfs_hist_bucket(v, 2, NB)] += n;
}

Test(histogram, midpoint_within_half_a_bucket)
{
	static const unsigned cuts[] = { 4, 5 };

	for (unsigned c = 0; c < 2; c++) {
		unsigned s = cuts[c], nb = 40u << s;

		for (uint64_t v = 0; v < (2ull << s); v++)
			cr_assert_eq(sfs_hist_bucket_mid(sfs_hist_bucket(v, s, nb), s), v, "s=%u: %llu exact", s,
				     (unsigned long long)v);
		for (unsigned k = s + 1; k < 36; k++) {
			uint64_t vs[3] = { 1ull << k, (1ull << k) + (1ull << (k - 1)) + 3, (2ull << k) - 1 };

			for (unsigned i = 0; i < 3; i++) {
				uint64_t v = vs[i], mid = sfs_hist_bucket_mid(sfs_hist_bucket(v, s, nb), s);
				uint64_t d = mid > v ? mid - v : v - mid;

				cr_assert_leq(d << (s + 1), v, "s=%u: %llu read as %llu", s, (unsigned long long)v,
					      (unsigned long long)mid);
			}
		}
	}
}

Test(histogram, at_rank_walks_to_the_bucket_of_the_rank)
{
	add(3, 2);                  /* ranks 1-2: exact bucket 3 */
	add(100, 5);                /* ranks 3-7: the bucket of 100, [96, 112) */
	add(1000, 1);               /* rank 8 */
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 1, 0, UINT64_MAX), 3);
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 2, 0, UINT64_MAX), 3);
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 3, 0, UINT64_MAX), 104, "the midpoint of [96, 112)");
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 7, 0, UINT64_MAX), 104);
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 8, 0, UINT64_MAX), 960, "the midpoint of [896, 1024)");
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 9, 0, 1000), 1000, "past every count: the largest");
}

Test(histogram, at_rank_clamps_to_what_was_recorded)
{
	add(100, 1);
	add(940, 1);                /* [896, 1024), midpoint 960 */
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 1, 100, 940), 104, "inside: the midpoint");
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 1, 110, 940), 110, "never below the smallest");
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 2, 100, 940), 940, "never above the largest");
}

Test(histogram, last_bucket_is_open_ended)
{
	uint64_t big = 1ull << 62;

	cr_assert_eq(sfs_hist_bucket(big, 2, NB), NB - 1, "past the regular range: the last bucket");
	add(5, 1);
	add(big, 1);
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 1, 5, big), 5);
	cr_expect_eq(sfs_hist_at_rank(hist, NB, 2, 2, 5, big), big, "the largest value recorded");
}
