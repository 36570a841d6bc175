/* SPDX-License-Identifier: MIT */
/*
 * histogram.c - reading a percentile out of a log-linear histogram
 * (histogram.h): the walk from the first bucket to the one that holds a
 * rank, shared by the stats (stats.c) and sectorfs-bench (tools/bench/hist.c).
 *
 *   counts   3   0   5   1   ...   2        rank 6: 3 + 0 + 5 reach it at
 *   bucket   0   1   2   3   ...   last     bucket 2, reported as its midpoint
 *
 * The true value of the rank lies in that bucket, so the midpoint is off
 * by at most half the bucket's width; clamping it to the smallest and
 * largest value recorded only brings it closer.  The last bucket holds
 * everything above the regular range, so it has no midpoint: a rank there
 * is reported as the largest value recorded.
 */
#include "histogram.h"

uint64_t sfs_hist_at_rank(const uint64_t *hist, unsigned nbuckets, unsigned sub_bits, uint64_t rank,
			  uint64_t lo, uint64_t hi)
{
	uint64_t seen = 0, mid;
	unsigned b;

	for (b = 0; b + 1 < nbuckets; b++) {
		seen += hist[b];
		if (seen >= rank)
			break;
	}
	if (b + 1 >= nbuckets)
		return hi;
	mid = sfs_hist_bucket_mid(b, sub_bits);
	return mid < lo ? lo : mid > hi ? hi : mid;
}
