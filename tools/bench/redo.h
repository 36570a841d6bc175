/* SPDX-License-Identifier: MIT */
/*
 * redo.h - what the redo command (redo.c) hands its reports
 * (redo_report.c): the parameters of the log and its figures.
 */
#ifndef SFS_BENCH_REDO_H
#define SFS_BENCH_REDO_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "hist.h"

struct redo_result {
	const struct bench_disk *d;
	unsigned block, clients;
	uint64_t log_size;
	const char *dist_spec;          /* the record sizes, as given */
	double secs;                    /* the run's length */
	bool interrupted;
	/* the log writer's figures */
	uint64_t commits, log_writes, redo_bytes, bytes_written, wraps;
	struct bench_hist write_lat;    /* pwrite + fdatasync */
	struct bench_hist commit_lat;   /* append to durable, every client's */
};

#define REDO_MAX_BLOCKS 4
#define REDO_MAX_REPEAT 20

/* Every run of every redo block: runs[b][k] is block b's k-th repeat. */
struct redo_set {
	unsigned nblocks, repeat, nrep;         /* nrep: repeats that ran (the last maybe in part) */
	struct redo_result runs[REDO_MAX_BLOCKS][REDO_MAX_REPEAT];
};

/* The run of block b whose commits/s is the median of its repeats (the lower middle one of an
 * even number), its commits/s spread (range over median, %), and its runs' commits/s. */
const struct redo_result *redo_median(const struct redo_set *set, unsigned b, double *spread_pct);

/* The figures of a struct redo_set, for people or as one JSON object: the median run of each
 * redo block with the spread over the repeats, and with several blocks their comparison; the
 * chart: commits/s of each redo block's median run, labelled with the median wastage. */
extern const struct bench_figures redo_figures;

#endif
