/* SPDX-License-Identifier: MIT */
/*
 * hist.h - a latency histogram in nanoseconds (hist.c): fixed size,
 * exact count, mean and max, percentiles within 1.6 %.
 */
#ifndef SFS_BENCH_HIST_H
#define SFS_BENCH_HIST_H

#include <stdint.h>

#include <jansson.h>

#define BENCH_HIST_SUB_BITS 5
#define BENCH_HIST_SUB (1u << BENCH_HIST_SUB_BITS)   /* buckets per power of two */
#define BENCH_HIST_BUCKETS (60 * BENCH_HIST_SUB)

struct bench_hist {
	uint64_t count, min, max;
	double sum;
	uint64_t b[BENCH_HIST_BUCKETS];
};

void bench_hist_init(struct bench_hist *h);
void bench_hist_add(struct bench_hist *h, uint64_t ns);
void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src);

/* Mean and the p-th percentile (0 < p <= 100) in microseconds; 0 when empty. */
double bench_hist_mean_us(const struct bench_hist *h);
double bench_hist_pct_us(const struct bench_hist *h, double p);

/* {"count", "mean_us", "p50_us", "p99_us", "max_us"} */
json_t *bench_hist_json(const struct bench_hist *h);

#endif
