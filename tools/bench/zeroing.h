/* SPDX-License-Identifier: MIT */
/*
 * zeroing.h - what the zeroing command (zeroing.c) hands its reports
 * (zeroing_report.c): the parameters, and the figures of each image in
 * each pass of each repeat.  Image i is zeroing_prov(i) with zero_offload
 * zeroing_offload(i); 4 and 5, the eagerzeroedthick ones, together make
 * the one baseline: the median time per write of all their runs.
 */
#ifndef SFS_BENCH_ZEROING_H
#define SFS_BENCH_ZEROING_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "hist.h"

#define ZEROING_NIMG 6
#define ZEROING_MAX_REPEAT 20
#define ZEROING_MAX_WRITES 65536

static inline const char *zeroing_prov(int i)
{
	static const char *const provs[3] = { "thin", "zeroedthick", "eagerzeroedthick" };

	return provs[i / 2];
}

static inline bool zeroing_offload(int i)
{
	return i % 2 == 0;
}

/* One image written once. */
struct zeroing_image {
	bool ran, done;                 /* done: the whole image was written */
	uint64_t writes, bytes;
	double secs;
	struct bench_hist lat;
	struct bench_hist lat_new;      /* the writes that start in a new block */
	/* the latencies (us) of the first ZEROING_MAX_WRITES writes, those that start a block and
	 * the others apart (malloc'd) */
	float *new_us, *over_us;
	unsigned nnew, nover;
	/* the daemon's counters: the change over the pass, or (alloc, total) after it */
	json_int_t st_writes, st_bytes, st_first, st_over, st_zeroed, st_alloc, st_total;
};

struct zeroing_result {
	const struct testbed *tb;
	uint64_t xfer, block, size;
	const char *sector;
	const char *profile;            /* the images' device profile, NULL for none */
	unsigned repeat;                /* asked */
	unsigned nrep;                  /* repeats that ran, the last maybe in part */
	char names[ZEROING_MAX_REPEAT][ZEROING_NIMG][64];
	struct zeroing_image img[ZEROING_MAX_REPEAT][2][ZEROING_NIMG];   /* by repeat, pass */
	bool interrupted;
};

/* The figures of a struct zeroing_result: the two tables, the JSON object, the chart (the IOPS
 * of each configuration in each pass from its typical time per write, what the overhead
 * compares, grouped, each bar labelled with its overhead). */
extern const struct bench_figures zeroing_figures;

#endif
