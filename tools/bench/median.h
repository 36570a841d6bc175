/* SPDX-License-Identifier: MIT */
/*
 * median.h - the median of a set of figures (median.c), for the reports
 * of sectorfs-bench that sum up repeats or many latencies by it.
 */
#ifndef SFS_BENCH_MEDIAN_H
#define SFS_BENCH_MEDIAN_H

/* Sort v[0..n) ascending and return its median: the middle value, the mean of the two middle
 * ones when n is even, NAN when n is 0. */
double bench_median(double *v, unsigned n);

#endif
