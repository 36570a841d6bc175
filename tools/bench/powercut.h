/* SPDX-License-Identifier: MIT */
/*
 * powercut.h - what the powercut command (powercut.c) hands its reports
 * (powercut_report.c): the parameters, and the counts of each
 * configuration in each repeat.
 */
#ifndef SFS_BENCH_POWERCUT_H
#define SFS_BENCH_POWERCUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

#define PC_NCONF 4
#define PC_MAX_REPEAT 20
#define PC_MAX_ROUNDS 1000
#define PC_MAX_WRITES 1000

/* One configuration: a drive and the redo block written to it. */
struct pc_conf {
	const char *name;        /* the image's, "e512-unsafe" */
	const char *label;       /* for people, "512e, rmw_power_safe false, 512 B" */
	const char *chart;       /* on the chart, at most 31 characters */
	const char *sector;      /* "512e", "4kn" */
	const char *rmw;         /* "false", "true", NULL (not set: logical = physical) */
	unsigned block;
};

extern const struct pc_conf pc_confs[PC_NCONF];

/* What the rounds of one configuration in one repeat found. */
struct pc_counts {
	bool ran;
	unsigned rounds;                /* that ran */
	unsigned damaged_rounds;        /* with a flushed block lost or unreadable */
	unsigned last_lost;             /* whose unflushed last write the cut lost */
	uint64_t flushed;               /* blocks whose fdatasync returned before the cut */
	uint64_t lost, unreadable;      /* of them: holding other data, failing with EIO */
	uint64_t damaged_sectors;       /* the cuts' count */
};

struct pc_result {
	const struct testbed *tb;
	unsigned rounds, repeat, nrep, max_writes;
	uint64_t seed;
	const char *policy;
	struct pc_counts c[PC_MAX_REPEAT][PC_NCONF];
	bool interrupted;
};

enum pc_fig { PC_DAMAGED_ROUNDS, PC_FLUSHED, PC_LOST, PC_UNREADABLE, PC_HURT, PC_SECTORS, PC_NFIG };

/* Figure f of configuration i over the repeats that ran: its median, min and max. */
double pc_median(const struct pc_result *r, int i, enum pc_fig f, double *min, double *max);

/* The figures of a struct pc_result: the table, the JSON object, the chart (per configuration,
 * the median flushed blocks lost or unreadable and sectors damaged). */
extern const struct bench_figures powercut_figures;

#endif
