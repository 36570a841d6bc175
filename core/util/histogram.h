/* SPDX-License-Identifier: MIT */
/*
 * histogram.h - the log-linear histogram of sectorfs's latencies (the stats'
 * and sectorfs-bench's), as HdrHistogram cuts one.
 *
 * With 2^s sub-buckets per power of two (s = sub_bits):
 *
 *   v < 2^(s+1)             bucket v                          (exact)
 *   2^k <= v < 2^(k+1)      bucket (k-s+1)*2^s + (v >> (k-s) & (2^s-1))
 *                           width 2^(k-s), 1/2^s of its lower bound
 *
 * so the midpoint of a value's bucket is within 1/2^(s+1) of the value.
 * The stats use s = 4 in 640 buckets, the benchmark s = 5 over all of
 * uint64_t; each keeps its own counts and picks the rank of a percentile
 * its own way, and both read the value at that rank with
 * sfs_hist_at_rank (histogram.c): the midpoint of the rank's bucket.
 */
#ifndef SFS_HISTOGRAM_H
#define SFS_HISTOGRAM_H

#include <stdint.h>

/* The bucket of v, at most nbuckets - 1 (the last holds everything above). */
static inline unsigned sfs_hist_bucket(uint64_t v, unsigned sub_bits, unsigned nbuckets)
{
	uint64_t sub = 1ull << sub_bits, b;
	unsigned k;

	if (v < sub)
		return (unsigned)v;
	k = 63u - (unsigned)__builtin_clzll(v);
	b = (uint64_t)(k - sub_bits + 1) * sub + ((v >> (k - sub_bits)) & (sub - 1));
	return b < nbuckets ? (unsigned)b : nbuckets - 1;
}

/* The lowest value of bucket b (b may be one past the last: the end of its regular range). */
static inline uint64_t sfs_hist_bucket_low(unsigned b, unsigned sub_bits)
{
	unsigned sub = 1u << sub_bits, k;

	if (b < sub)
		return b;
	k = b / sub + sub_bits - 1;
	return (uint64_t)(sub + b % sub) << (k - sub_bits);
}

/* The midpoint of bucket b (b itself below 2^(s+1), where buckets are one value wide). */
static inline uint64_t sfs_hist_bucket_mid(unsigned b, unsigned sub_bits)
{
	uint64_t low = sfs_hist_bucket_low(b, sub_bits);

	return low + (sfs_hist_bucket_low(b + 1, sub_bits) - low) / 2;
}

/* The value at rank (1 for the smallest) of hist, nbuckets counts cut with sub_bits: the
 * midpoint of the first bucket where the counts up to it reach rank, clamped to [lo, hi] (the
 * smallest and largest value recorded, when known: else 0 and UINT64_MAX).  hi when that
 * bucket is the last (open-ended) or rank is past every count. */
uint64_t sfs_hist_at_rank(const uint64_t *hist, unsigned nbuckets, unsigned sub_bits, uint64_t rank,
			  uint64_t lo, uint64_t hi);

#endif
