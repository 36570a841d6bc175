/* SPDX-License-Identifier: MIT */
/*
 * run.c - worker threads under a watching main thread (run.h).
 *
 * bench_run() starts the workers with every catchable signal blocked (so
 * a Ctrl-C never lands in a thread that is inside a FUSE request, which
 * the kernel would then interrupt), holds them at a gate, takes the start
 * time and opens it.  The main thread then sleeps on a
 * condition variable in steps of at most 100 ms: it calls the tick hook
 * (the progress line), sets r->stop when the time is up or a signal came,
 * and wakes at once when the last worker returns.  Each worker stamps its
 * return time; the run lasts from the start to the last stamp, so the
 * main thread's wake-up delay is never part of a measurement.
 */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "run.h"
#include "toolutil.h"

struct slot {
	struct bench_run *r;
	unsigned idx;
};

static void *trampoline(void *p)
{
	struct slot *s = p;
	struct bench_run *r = s->r;
	uint64_t end, prev;

	pthread_mutex_lock(&r->lock);
	while (!r->go)
		pthread_cond_wait(&r->gate, &r->lock);
	pthread_mutex_unlock(&r->lock);
	r->worker(r, s->idx, r->arg);
	end = sfs_now_ns();
	prev = atomic_load(&r->t_end);
	while (end > prev && !atomic_compare_exchange_weak(&r->t_end, &prev, end))
		;
	pthread_mutex_lock(&r->lock);
	if (atomic_fetch_sub(&r->running, 1) == 1)
		pthread_cond_signal(&r->done);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Start the workers, every signal blocked in them; the number started (rc: the error that
 * stopped the others, which are then told to stop). */
static unsigned start_workers(struct bench_run *r, pthread_t *tids, struct slot *slots, int *rc)
{
	sigset_t all, old;
	unsigned n;

	*rc = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (n = 0; n < r->nthreads; n++) {
		slots[n].r = r;
		slots[n].idx = n;
		atomic_fetch_add(&r->running, 1);
		*rc = pthread_create(&tids[n], NULL, trampoline, &slots[n]);
		if (*rc) {
			atomic_fetch_sub(&r->running, 1);
			/* the ones started see stop before their first I/O */
			tool_error("cannot start worker thread %u: %s", n + 1, strerror(*rc));
			atomic_store(&r->stop, true);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

/* Open the gate and watch until the last worker returns: the tick, the clock, the signals. */
static void watch(struct bench_run *r)
{
	uint64_t limit = (uint64_t)(r->seconds * 1e9), now, step;
	struct timespec ts;

	pthread_mutex_lock(&r->lock);
	r->t0 = sfs_now_ns();
	r->go = true;
	pthread_cond_broadcast(&r->gate);
	while (atomic_load(&r->running) > 0) {
		now = sfs_now_ns();
		if (tool_interrupted && !atomic_load(&r->stop)) {
			r->interrupted = true;
			atomic_store(&r->stop, true);
		}
		if (limit && now - r->t0 >= limit)
			atomic_store(&r->stop, true);
		step = 100000000ull;
		if (limit && !atomic_load(&r->stop) && limit - (now - r->t0) < step)
			step = limit - (now - r->t0);
		if (r->tick && !atomic_load(&r->stop)) {
			pthread_mutex_unlock(&r->lock);
			r->tick(r, r->arg);
			pthread_mutex_lock(&r->lock);
			if (atomic_load(&r->running) == 0)
				break;
		}
		ts = sfs_deadline_ts(step);
		pthread_cond_timedwait(&r->done, &r->lock, &ts);
	}
	pthread_mutex_unlock(&r->lock);
}

int bench_run(struct bench_run *r)
{
	pthread_t tids[r->nthreads ? r->nthreads : 1];
	struct slot slots[r->nthreads ? r->nthreads : 1];
	pthread_condattr_t ca;
	unsigned n;
	int rc;

	atomic_init(&r->stop, false);
	atomic_init(&r->running, 0);
	atomic_init(&r->t_end, 0);
	r->interrupted = false;
	r->go = false;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->done, &ca);
	pthread_cond_init(&r->gate, &ca);
	pthread_condattr_destroy(&ca);

	n = start_workers(r, tids, slots, &rc);
	watch(r);
	for (unsigned i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	r->t1 = atomic_load(&r->t_end);
	if (r->t1 < r->t0)
		r->t1 = r->t0;
	if (tool_interrupted)
		r->interrupted = true;
	pthread_cond_destroy(&r->gate);
	pthread_cond_destroy(&r->done);
	pthread_mutex_destroy(&r->lock);
	return rc ? -1 : 0;
}

double bench_run_seconds(const struct bench_run *r)
{
	return (double)(r->t1 - r->t0) / 1e9;
}
