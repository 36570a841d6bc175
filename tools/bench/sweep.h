/* SPDX-License-Identifier: MIT */
/*
 * sweep.h - what the sweep command (sweep.c) hands its reports
 * (sweep_report.c): the disk, the parameters and one struct sweep_test
 * per transfer size and direction, in the order they ran (write before
 * read).
 */
#ifndef SFS_BENCH_SWEEP_H
#define SFS_BENCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "hist.h"

enum sweep_status { ST_NOT_RUN, ST_OK, ST_REFUSED, ST_ERROR, ST_SKIPPED };

struct sweep_test {
	uint64_t xfer;
	bool write;
	enum sweep_status st;
	bool cut;                       /* stopped early by Ctrl-C */
	int err;                        /* errno of the failure */
	unsigned threads;
	unsigned failed;                /* I/Os that failed: one per thread at most */
	uint64_t ios, bytes;
	double secs;
	struct bench_hist lat;
};

struct sweep_result {
	const struct bench_disk *d;
	uint64_t min, max, span;
	unsigned qd;
	double seconds;                 /* per test */
	bool interrupted;
	struct sweep_test *tests;
	unsigned ntests;
};

/* Print the table and the bar chart, the CSV rows, or the JSON object (0 or 1). */
void sweep_print_text(const struct sweep_result *s);
void sweep_print_csv(const struct sweep_result *s);
int sweep_print_json(const struct sweep_result *s);

#endif
