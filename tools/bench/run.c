/* SPDX-License-Identifier: MIT */
/*
 * run.c - worker threads under a watching main thread, and the latency
 * histogram they fill.
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
 *
 * The histogram is log-linear, as HdrHistogram is: values below 64 ns
 * have a bucket each, above that every power of two is cut into 32
 * buckets, so a percentile is off by at most 1/64 of the value.  Count,
 * sum (mean) and max are exact.  1920 buckets cover all of uint64_t.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"

/* ---- histogram ---- */

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < 2 * BENCH_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);                 /* >= 6 */
	return (e - 5) * BENCH_HIST_SUB + (unsigned)(v >> (e - 5));
}

/* The middle of bucket i. */
static double bucket_mid(unsigned i)
{
	unsigned shift;
	uint64_t m;

	if (i < 2 * BENCH_HIST_SUB)
		return i;
	shift = i / BENCH_HIST_SUB - 1;
	m = i % BENCH_HIST_SUB + BENCH_HIST_SUB;
	return ((double)m + 0.5) * (double)(1ull << shift);
}

void bench_hist_init(struct bench_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void bench_hist_add(struct bench_hist *h, uint64_t ns)
{
	unsigned i = bucket_of(ns);

	h->b[i < BENCH_HIST_BUCKETS ? i : BENCH_HIST_BUCKETS - 1]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += (double)ns;
}

void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
}

double bench_hist_mean_us(const struct bench_hist *h)
{
	return h->count ? h->sum / (double)h->count / 1e3 : 0;
}

double bench_hist_pct_us(const struct bench_hist *h, double p)
{
	uint64_t want, seen = 0;
	double v;

	if (!h->count)
		return 0;
	want = (uint64_t)((double)h->count * p / 100.0 + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			v = bucket_mid(i);
			/* never outside what was seen */
			if (v > (double)h->max)
				v = (double)h->max;
			if (v < (double)h->min)
				v = (double)h->min;
			return v / 1e3;
		}
	}
	return (double)h->max / 1e3;
}

json_t *bench_hist_json(const struct bench_hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "count", json_integer((json_int_t)h->count));
	json_object_set_new(o, "mean_us", bench_jreal(bench_hist_mean_us(h)));
	json_object_set_new(o, "p50_us", bench_jreal(bench_hist_pct_us(h, 50)));
	json_object_set_new(o, "p99_us", bench_jreal(bench_hist_pct_us(h, 99)));
	json_object_set_new(o, "max_us", bench_jreal((double)h->max / 1e3));
	return o;
}

/* ---- worker threads ---- */

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
	end = tool_now_ns();
	prev = atomic_load(&r->t_end);
	while (end > prev && !atomic_compare_exchange_weak(&r->t_end, &prev, end))
		;
	pthread_mutex_lock(&r->lock);
	if (atomic_fetch_sub(&r->running, 1) == 1)
		pthread_cond_signal(&r->done);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void deadline_in(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ns / 1000000000ull);
	ts->tv_nsec += (long)(ns % 1000000000ull);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int bench_run(struct bench_run *r)
{
	pthread_t tids[r->nthreads ? r->nthreads : 1];
	struct slot slots[r->nthreads ? r->nthreads : 1];
	uint64_t limit = (uint64_t)(r->seconds * 1e9), now, step;
	pthread_condattr_t ca;
	sigset_t all, old;
	struct timespec ts;
	unsigned n;
	int rc = 0;

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

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (n = 0; n < r->nthreads; n++) {
		slots[n].r = r;
		slots[n].idx = n;
		atomic_fetch_add(&r->running, 1);
		rc = pthread_create(&tids[n], NULL, trampoline, &slots[n]);
		if (rc) {
			atomic_fetch_sub(&r->running, 1);
			/* the ones started see stop before their first I/O */
			bench_error("cannot start worker thread %u: %s", n + 1, strerror(rc));
			atomic_store(&r->stop, true);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&r->lock);
	r->t0 = tool_now_ns();
	r->go = true;
	pthread_cond_broadcast(&r->gate);
	while (atomic_load(&r->running) > 0) {
		now = tool_now_ns();
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
		deadline_in(&ts, step);
		pthread_cond_timedwait(&r->done, &r->lock, &ts);
	}
	pthread_mutex_unlock(&r->lock);
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
