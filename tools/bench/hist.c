/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the latency histogram of sectorfs-bench (hist.h).
 *
 * Log-linear, core's (histogram.h): values below 64 ns have a bucket each,
 * above that every power of two is cut into 32 buckets, so a percentile
 * is off by at most 1/64 of the value.  Count, sum (mean) and max are
 * exact.  1920 buckets cover all of uint64_t.
 */
#include <string.h>

#include "common.h"
#include "hist.h"
#include "util/histogram.h"

void bench_hist_init(struct bench_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void bench_hist_add(struct bench_hist *h, uint64_t ns)
{
	h->b[sfs_hist_bucket(ns, BENCH_HIST_SUB_BITS, BENCH_HIST_BUCKETS)]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += (double)ns;
}

void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
}

double bench_hist_mean_us(const struct bench_hist *h)
{
	return h->count ? h->sum / (double)h->count / 1e3 : 0;
}

double bench_hist_pct_us(const struct bench_hist *h, double p)
{
	uint64_t want;

	if (!h->count)
		return 0;
	want = (uint64_t)((double)h->count * p / 100.0 + 0.999999);
	if (want < 1)
		want = 1;
	/* never outside what was seen */
	return (double)sfs_hist_at_rank(h->b, BENCH_HIST_BUCKETS, BENCH_HIST_SUB_BITS, want, h->min, h->max) / 1e3;
}

json_t *bench_hist_json(const struct bench_hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "count", json_integer((json_int_t)h->count));
	json_object_set_new(o, "mean_us", bench_jreal(bench_hist_mean_us(h)));
	json_object_set_new(o, "p50_us", bench_jreal(bench_hist_pct_us(h, 50)));
	json_object_set_new(o, "p99_us", bench_jreal(bench_hist_pct_us(h, 99)));
	json_object_set_new(o, "max_us", bench_jreal((double)h->max / 1e3));
	return o;
}
