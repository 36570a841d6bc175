/* SPDX-License-Identifier: MIT */
/*
 * redo.h - what the redo command (redo.c) hands its reports
 * (redo_report.c): the log writer's state and figures.
 */
#ifndef SFS_BENCH_REDO_H
#define SFS_BENCH_REDO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"

enum dist_kind { DIST_FIXED, DIST_UNIFORM, DIST_EXP };

struct dist {
	enum dist_kind kind;
	uint64_t a, b;          /* fixed: a; uniform: a..b; exp: mean a, capped at b */
};

/* The shared state of clients and log writer; lock guards pend* to failed and the figures. */
struct redo {
	struct bench_disk d;
	unsigned block, clients;
	uint64_t log_size, cap;
	struct dist dist;
	const char *dist_spec;          /* as given, for the reports */
	unsigned char *pattern;         /* record contents */
	unsigned char *pend, *spare;    /* the log buffer clients append to, the writer's */
	uint64_t pend_len, pend_recs;
	uint64_t submitted, durable;    /* commit sequence numbers */
	unsigned active;                /* clients still running */
	bool writer_gone;               /* the writer has left: append nothing more */
	int failed;                     /* errno of a failed log write */
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	/* the log writer's figures (under lock) */
	uint64_t commits, log_writes, redo_bytes, bytes_written, wraps, head;
	struct bench_hist write_lat;
	struct bench_hist *commit_lat;  /* one per client */
	struct bench_progress prog;
};

/* Print the figures for people, or as one JSON object (0 or 1). */
void redo_print_text(const struct redo *s, const struct bench_hist *commit_lat, double secs);
int redo_print_json(const struct redo *s, const struct bench_hist *commit_lat, double secs,
		    bool interrupted);

#endif
