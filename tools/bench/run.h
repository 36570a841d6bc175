/* SPDX-License-Identifier: MIT */
/*
 * run.h - worker threads started together under a watching main thread
 * (run.c), for the workloads of sectorfs-bench.
 */
#ifndef SFS_BENCH_RUN_H
#define SFS_BENCH_RUN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct bench_run;
typedef void (*bench_worker_fn)(struct bench_run *r, unsigned idx, void *arg);

struct bench_run {
	/* set by the caller */
	unsigned nthreads;
	bench_worker_fn worker;        /* called once per thread with its index */
	void *arg;
	double seconds;                /* stop after this long; 0: when the workers return */
	void (*tick)(struct bench_run *r, void *arg);  /* ~10 times a second in the main thread */
	/* set by bench_run() */
	atomic_bool stop;              /* workers poll it between I/Os */
	uint64_t t0, t1;               /* ns: start, last worker's return */
	bool interrupted;              /* a signal ended the run */
	/* private */
	atomic_uint running;
	_Atomic uint64_t t_end;
	bool go;                       /* the gate is open */
	pthread_mutex_t lock;
	pthread_cond_t gate, done;
};

/* Run r->nthreads workers, held at a gate and released together, until they return, the
 * time is up or a signal comes (r->stop is set; the workers finish their I/O and return).
 * Returns 0, or -1 (printed) when a thread cannot be created: the threads started then
 * return at once (stop is set before the gate opens). */
int bench_run(struct bench_run *r);

/* Seconds between start and the last worker's return. */
double bench_run_seconds(const struct bench_run *r);

#endif
