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

/* Print the figures for people, or as one JSON object (0 or 1). */
void redo_print_text(const struct redo_result *s);
int redo_print_json(const struct redo_result *s);

#endif
