/* SPDX-License-Identifier: MIT */
/*
 * model.c - the drive model that holds each request back to the time the
 * profiled drive would take (the profiles themselves: profile.c).
 *
 * The queue is N channels, each with the model time it is free again:
 *
 *     arrival t0 ─┐   channel 0  [busy ..... free_at0]
 *                 ├─▶ channel k = argmin free_at      start = max(t0, free_at_k)
 *                 │   ...                             done  = start + cost
 *                 └─  channel N-1                     free_at_k = done
 *
 * so up to N requests overlap and further ones wait, and throughput stops
 * scaling with queue depth at N, as on a real drive.  See model.h.
 *
 * The wait sleeps on a futex word, wake_seq, with the completion time as
 * its timeout, so that a stop or an interrupt can wake it: the waker
 * changes the state (stopping, or the request's interrupted flag that the
 * hook reads), then bumps wake_seq and wakes every sleeper; a sleeper
 * reads wake_seq before it looks at the state, so a change made after it
 * looked makes its sleep return at once (the word moved) or wakes it.
 */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/units.h"

unsigned sfs_model_partial_sectors(uint32_t pss, uint64_t off, uint64_t len)
{
	uint64_t end = off + len, s, e;

	if (!len || !pss)
		return 0;
	s = off / pss;
	e = (end - 1) / pss;
	if (s == e)
		return (off % pss || end % pss) ? 1 : 0;
	return (off % pss ? 1 : 0) + (end % pss ? 1 : 0);
}

/* ---- the model ---- */

struct sfs_model {
	struct sfs_profile p;
	uint32_t pss;
	struct sfs_model_clock clk;
	pthread_mutex_t lk;
	uint64_t *free_at;       /* p.channels model times */
	uint64_t nreq;           /* requests queued so far (lk): the latency spikes' numbers */
};

/* The default clock: clock.h's. */
static uint64_t mono_now(void *arg)
{
	(void)arg;
	return sfs_now_ns();
}

/* The last SPIN_NS of a wait are spun rather than slept, by at most spin_max threads at once (one
 * less than the CPUs, at least one): a timer's wake-up comes 30-80 us late (median) on a busy
 * virtual machine, which would add that much to every request of a fast profile (a SATA SSD's
 * 12 us write); spinning the last 100 us takes the median to under a microsecond.  Threads
 * beyond spin_max sleep to the end, so a deep queue does not spin every CPU.  SFS_XP_NOSPIN=1 in
 * the environment (for experiments) sleeps every wait to its end. */
#define SPIN_NS 100000ull

static atomic_uint spinners;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static unsigned spin_max(void)
{
	static atomic_uint max;
	unsigned v = atomic_load_explicit(&max, memory_order_relaxed);

	if (!v) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		const char *no = getenv("SFS_XP_NOSPIN");   /* experiments: every wait slept */

		v = no && *no == '1' ? UINT_MAX : n > 2 ? (unsigned)n - 1 : 1;
		atomic_store_explicit(&max, v, memory_order_relaxed);
	}
	return v;
}

/* ---- the wait, and what ends it early ---- */

static uint32_t wake_seq;           /* the futex word: bumped by every wake */
static int stopping;                /* sfs_model_stop was called (atomic) */
static int (*interrupted_hook)(void);   /* atomic */

#define HOOK_MIN_NS 1000000ull      /* waits this long ask the hook before they start */

void sfs_model_set_interrupted(int (*fn)(void))
{
	__atomic_store_n(&interrupted_hook, fn, __ATOMIC_RELEASE);
}

static bool interrupted(void)
{
	int (*fn)(void) = __atomic_load_n(&interrupted_hook, __ATOMIC_ACQUIRE);

	return fn && fn();
}

void sfs_model_wake(void)
{
	__atomic_add_fetch(&wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &wake_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void sfs_model_stop(void)
{
	__atomic_store_n(&stopping, 1, __ATOMIC_SEQ_CST);
	sfs_model_wake();
}

bool sfs_model_stopped(void)
{
	return __atomic_load_n(&stopping, __ATOMIC_ACQUIRE) != 0;
}

/* Sleep until t unless woken: the futex's absolute timeout is on CLOCK_MONOTONIC, clock.h's. */
static void sleep_on_seq(uint32_t seq, uint64_t t)
{
	struct timespec ts = sfs_ns_ts(t);

	syscall(SYS_futex, &wake_seq, FUTEX_WAIT_BITSET_PRIVATE, seq, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

int sfs_model_wait_until(uint64_t t)
{
	static __thread bool slack_set;
	uint64_t now = sfs_now_ns();
	bool woken = t > now + HOOK_MIN_NS;   /* a long wait asks the hook first */

	/* the default 50 us of timer slack would add up to 50 us to every modelled request */
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
		slack_set = true;
	}
	while (now < t) {
		/* the word before the state: a change after this look moves it */
		uint32_t seq = __atomic_load_n(&wake_seq, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&stopping, __ATOMIC_SEQ_CST))
			return -ESHUTDOWN;
		if (woken && interrupted())
			return -EINTR;
		if (t <= now + SPIN_NS)
			break;
		sleep_on_seq(seq, t - SPIN_NS);
		now = sfs_now_ns();
		woken = now < t - SPIN_NS;   /* early: woken (or a signal), so look again */
	}
	if (now >= t)
		return 0;
	if (spin_max() != UINT_MAX) {
		bool spin = atomic_fetch_add(&spinners, 1) < spin_max();

		while (spin && sfs_now_ns() < t)
			cpu_relax();
		atomic_fetch_sub(&spinners, 1);
		if (spin)
			return 0;
	}
	sfs_sleep_until_ns(t);
	return 0;
}

static int mono_sleep_until(void *arg, uint64_t t)
{
	(void)arg;
	return sfs_model_wait_until(t);
}

int sfs_model_new(const struct sfs_profile *p, uint32_t pss, const struct sfs_model_clock *clk,
		  struct sfs_model **out)
{
	struct sfs_model *m = calloc(1, sizeof *m);

	if (!m)
		return -ENOMEM;
	m->p = *p;
	if (m->p.channels < 1)
		m->p.channels = 1;
	m->pss = pss;
	m->clk = clk ? *clk : (struct sfs_model_clock){ mono_now, mono_sleep_until, NULL };
	m->free_at = calloc(m->p.channels, sizeof *m->free_at);
	if (!m->free_at) {
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lk, NULL);
	*out = m;
	return 0;
}

void sfs_model_free(struct sfs_model *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lk);
	free(m->free_at);
	free(m);
}

const struct sfs_profile *sfs_model_profile(const struct sfs_model *m)
{
	return &m->p;
}

uint64_t sfs_model_cost_ns(const struct sfs_model *m, const struct sfs_model_req *rq)
{
	const struct sfs_profile *p = &m->p;
	double us = 0;

	switch (rq->op) {
	case SFS_MODEL_FLUSH:
		us = p->flush_us;
		break;
	case SFS_MODEL_READ:
		us = sfs_profile_service_us(p, false, rq->len);
		break;
	case SFS_MODEL_WRITE: {
		uint32_t pss = rq->pss ? rq->pss : m->pss;
		unsigned parts = sfs_model_partial_sectors(pss, rq->off, rq->len);

		us = sfs_profile_service_us(p, true, rq->len);
		if (parts)
			us += parts * (p->partial_write_us >= 0 ? p->partial_write_us
				       : sfs_profile_service_us(p, false, pss));
		if (rq->zeroed && rq->offload)
			us += p->zero_offload_us +
			      (p->zero_offload_mb_s > 0 ? (double)rq->zeroed / p->zero_offload_mb_s : 0);
		else if (rq->zeroed)
			us += sfs_profile_service_us(p, true, rq->zeroed);
		break;
	}
	}
	/* no request is held longer, whatever the profile (NaN and infinities too) */
	if (!(us * 1000.0 < (double)SFS_MODEL_MAX_NS))
		return us > 0 || isnan(us) ? SFS_MODEL_MAX_NS : 0;
	return (uint64_t)llround(us * 1000.0);
}

uint64_t sfs_model_schedule(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns)
{
	uint64_t cost = sfs_model_cost_ns(m, rq), start, done;
	unsigned k = 0;

	pthread_mutex_lock(&m->lk);
	for (unsigned i = 1; i < m->p.channels; i++)
		if (m->free_at[i] < m->free_at[k])
			k = i;
	start = m->free_at[k] > t0_ns ? m->free_at[k] : t0_ns;
	done = start + cost + sfs_spike_extra_ns(&m->p.spike, m->nreq++);
	m->free_at[k] = done;
	pthread_mutex_unlock(&m->lk);
	return done;
}

int sfs_model_complete(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns, uint64_t *waited)
{
	uint64_t done = sfs_model_schedule(m, rq, t0_ns), now = m->clk.now(m->clk.arg), end;
	int rc;

	*waited = 0;
	if (done <= now)
		return 0;
	if (done - now > SFS_MODEL_MAX_NS)   /* a queue of slow requests: none waits longer either */
		done = now + SFS_MODEL_MAX_NS;
	rc = m->clk.sleep_until(m->clk.arg, done);
	end = m->clk.now(m->clk.arg);
	*waited = (end < done ? end : done) - now;   /* what the model added, less when cut short */
	return rc == -ESHUTDOWN ? rc : 0;
}
