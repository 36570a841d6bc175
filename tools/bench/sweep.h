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
	double flush_us;                /* mean fdatasync after a 4 KiB write; 0: not measured */
	double flush_med_us;            /* their median (what --profile-out takes); 0: not measured */
	unsigned nflush;                /* fdatasyncs timed */
	struct sweep_test *tests;
	unsigned ntests;
};

/* 4 KiB IOPS at one queue depth (0: not measured), for --profile-out. */
#define SWEEP_CHAN_XFER 4096u   /* --profile-out: the channels from I/O of this size ... */

struct sweep_chan {
	unsigned qd;
	double read_iops, write_iops;
};

/* Write the device profile the sweep s (QD1), the queue-depth tests ch and the flush time
 * measured (sweep_profile.c); 0, or 1 (printed). */
int sweep_profile_write(const struct sweep_result *s, const struct sweep_chan *ch, unsigned nch,
			double flush_us, const char *file);

/* Print the replay check of s against the sweep JSON in src (floor: the sweep JSON of an image
 * without a profile, or NULL); 0 when every size above the floor agrees within tol (0.1 =
 * 10%), else 1. */
int sweep_compare(const struct sweep_result *s, const char *src, const char *floor, double tol);

/* The chart of a struct sweep_result (bench_chart_fn): paired write/read bars of MB/s per size,
 * refused and skipped sizes marked. */
bench_chart_fn sweep_chart;

/* Print the table and the bar chart, the CSV rows, or the JSON object (0 or 1). */
void sweep_print_text(const struct sweep_result *s);
void sweep_print_csv(const struct sweep_result *s);
int sweep_print_json(const struct sweep_result *s);

#endif
