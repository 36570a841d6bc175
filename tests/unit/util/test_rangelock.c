/* SPDX-License-Identifier: MIT */
/*
 * test_rangelock.c - unit tests of core/util/rangelock.c.
 *
 * Readers of a range share it, a writer excludes every overlapping reader
 * and writer, ranges that only touch do not conflict, disjoint ranges go
 * on while others wait, a waiting request is woken when what blocked it
 * unlocks, in arrival order among conflicting ones, and a writer gets its
 * range under a continuous stream of overlapping readers.  Last, threads
 * taking random ranges keep, per 512-byte slot, a counter of readers and
 * writers inside: a writer never finds anyone there, a reader never finds
 * a writer.  Tests that need a request to wait start it in a thread and
 * look at the lock's counts (sfs_rangelock_count) to know it is queued.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/rangelock_test.h"

static struct sfs_rangelock rl;

static void setup(void)
{
	cr_assert_eq(sfs_rangelock_init(&rl), 0);
}

static void teardown(void)
{
	sfs_rangelock_destroy(&rl);
}

TestSuite(rangelock, .init = setup, .fini = teardown, .timeout = 60);

static unsigned held_now(void)
{
	unsigned h, w;

	sfs_rangelock_count(&rl, &h, &w);
	return h;
}

static unsigned waiting_now(void)
{
	unsigned h, w;

	sfs_rangelock_count(&rl, &h, &w);
	return w;
}

/* Wait (up to 10 s) until n requests wait; false if they never do. */
static bool until_waiting(unsigned n)
{
	for (int i = 0; i < 10000; i++) {
		if (waiting_now() == n)
			return true;
		usleep(1000);
	}
	return false;
}

/* ---- a request taken in a thread of its own ---- */

struct req {
	pthread_t th;
	struct sfs_range r;
	uint64_t off, len;
	bool excl;
	atomic_int got;      /* 1 once the lock returned 0, -errno if it failed */
	atomic_int release;  /* the test sets it: unlock and end */
};

static void *req_main(void *arg)
{
	struct req *q = arg;
	int rc = sfs_rangelock_lock(&rl, &q->r, q->off, q->len, q->excl);

	atomic_store(&q->got, rc == 0 ? 1 : rc);
	if (rc < 0)
		return NULL;
	while (!atomic_load(&q->release))
		usleep(200);
	sfs_rangelock_unlock(&rl, &q->r);
	return NULL;
}

static void req_start(struct req *q, uint64_t off, uint64_t len, bool excl)
{
	q->off = off;
	q->len = len;
	q->excl = excl;
	atomic_store(&q->got, 0);
	atomic_store(&q->release, 0);
	cr_assert_eq(pthread_create(&q->th, NULL, req_main, q), 0);
}

/* Wait (up to 10 s) until q holds its range. */
static bool req_granted(struct req *q)
{
	for (int i = 0; i < 10000; i++) {
		if (atomic_load(&q->got) != 0)
			return atomic_load(&q->got) == 1;
		usleep(1000);
	}
	return false;
}

static void req_end(struct req *q)
{
	atomic_store(&q->release, 1);
	pthread_join(q->th, NULL);
}

/* ---- arguments ---- */

Test(rangelock, empty_and_overflowing_ranges_are_refused)
{
	struct sfs_range r;

	cr_expect_eq(sfs_rangelock_lock(&rl, &r, 0, 0, false), -EINVAL);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 4096, 0, true), -EINVAL);
	cr_expect_eq(sfs_rangelock_lock(&rl, &r, UINT64_MAX - 511, 512, true), -EINVAL);
	cr_expect_eq(sfs_rangelock_lock(&rl, &r, UINT64_MAX, 2, false), -EINVAL);
	cr_expect_eq(held_now(), 0);
	cr_expect_eq(sfs_rangelock_lock(&rl, &r, UINT64_MAX - 512, 512, true), 0, "the last bytes below 2^64");
	sfs_rangelock_unlock(&rl, &r);
}

Test(rangelock, destroy_refuses_while_held)
{
	struct sfs_rangelock l;
	struct sfs_range r;

	cr_assert_eq(sfs_rangelock_init(&l), 0);
	cr_assert_eq(sfs_rangelock_lock(&l, &r, 0, 512, false), 0);
	cr_expect_eq(sfs_rangelock_destroy(&l), -EBUSY);
	sfs_rangelock_unlock(&l, &r);
	cr_expect_eq(sfs_rangelock_destroy(&l), 0);
}

/* ---- who conflicts with whom ---- */

Test(rangelock, readers_share)
{
	struct sfs_range a, b, c, w;

	cr_assert_eq(sfs_rangelock_lock(&rl, &a, 0, 4096, false), 0);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &b, 0, 4096, false), 0, "the same range");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &c, 512, 512, false), 0, "a range inside it");
	cr_expect_eq(held_now(), 3);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &w, 512, 512, true), -EBUSY, "a writer inside the readers");
	cr_expect_eq(held_now(), 3, "a refused trylock holds nothing");
	cr_expect_eq(waiting_now(), 0);
	sfs_rangelock_unlock(&rl, &a);
	sfs_rangelock_unlock(&rl, &b);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &w, 512, 512, true), -EBUSY, "one reader is left");
	sfs_rangelock_unlock(&rl, &c);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &w, 512, 512, true), 0, "no reader is left");
	sfs_rangelock_unlock(&rl, &w);
	cr_expect_eq(held_now(), 0);
}

Test(rangelock, writers_exclude_everything_overlapping)
{
	struct sfs_range w, r;

	cr_assert_eq(sfs_rangelock_lock(&rl, &w, 4096, 4096, true), 0);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 4096, 4096, true), -EBUSY, "the same range, writer");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 4096, 4096, false), -EBUSY, "the same range, reader");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 6144, 512, false), -EBUSY, "inside");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 0, 65536, false), -EBUSY, "around");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 0, 4097, true), -EBUSY, "the first byte");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 8191, 1, false), -EBUSY, "the last byte");
	sfs_rangelock_unlock(&rl, &w);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 6144, 512, true), 0, "after the unlock");
	sfs_rangelock_unlock(&rl, &r);
}

Test(rangelock, touching_ranges_do_not_conflict)
{
	struct sfs_range a, b, c, d;

	cr_assert_eq(sfs_rangelock_lock(&rl, &a, 512, 512, true), 0);
	cr_expect_eq(sfs_rangelock_trylock(&rl, &b, 0, 512, true), 0, "the sector before");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &c, 1024, 3072, true), 0, "the sectors after");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &d, 511, 2, false), -EBUSY, "two bytes across the edge");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &d, 4096, 4096, false), 0, "the next page, a reader");
	cr_expect_eq(held_now(), 4);
	sfs_rangelock_unlock(&rl, &a);
	sfs_rangelock_unlock(&rl, &b);
	sfs_rangelock_unlock(&rl, &c);
	sfs_rangelock_unlock(&rl, &d);
}

/* ---- waiting ---- */

Test(rangelock, overlapping_request_waits_until_unlock)
{
	struct sfs_range w;
	struct req q;

	cr_assert_eq(sfs_rangelock_lock(&rl, &w, 0, 4096, true), 0);
	req_start(&q, 2048, 4096, false);
	cr_assert(until_waiting(1), "the reader is not queued");
	usleep(50000);
	cr_expect_eq(atomic_load(&q.got), 0, "a reader got a range a writer holds");
	sfs_rangelock_unlock(&rl, &w);
	cr_expect(req_granted(&q), "the reader was not woken by the unlock");
	cr_expect_eq(waiting_now(), 0);
	cr_expect_eq(held_now(), 1);
	req_end(&q);
	cr_expect_eq(held_now(), 0);
}

Test(rangelock, writer_waits_for_readers)
{
	struct sfs_range a, b;
	struct req q;

	cr_assert_eq(sfs_rangelock_lock(&rl, &a, 0, 4096, false), 0);
	cr_assert_eq(sfs_rangelock_lock(&rl, &b, 4096, 4096, false), 0);
	req_start(&q, 0, 8192, true);
	cr_assert(until_waiting(1));
	sfs_rangelock_unlock(&rl, &a);
	usleep(50000);
	cr_expect_eq(atomic_load(&q.got), 0, "the writer passed a reader still holding");
	sfs_rangelock_unlock(&rl, &b);
	cr_expect(req_granted(&q));
	req_end(&q);
}

Test(rangelock, disjoint_ranges_go_on_while_others_wait)
{
	struct sfs_range w, r;
	struct req q, d;

	cr_assert_eq(sfs_rangelock_lock(&rl, &w, 0, 512, true), 0);
	req_start(&q, 0, 512, true);                   /* waits for w */
	cr_assert(until_waiting(1));
	req_start(&d, 512, 512, true);                  /* touches both, overlaps neither */
	cr_expect(req_granted(&d), "a writer of the next sector waited for a writer of this one");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &r, 1 << 20, 4096, true), 0, "far away");
	cr_expect_eq(waiting_now(), 1);
	sfs_rangelock_unlock(&rl, &r);
	req_end(&d);
	cr_expect_eq(atomic_load(&q.got), 0);
	sfs_rangelock_unlock(&rl, &w);
	cr_expect(req_granted(&q));
	req_end(&q);
}

Test(rangelock, conflicting_requests_are_served_in_arrival_order)
{
	struct sfs_range r;
	struct req w1, r2, w3;

	cr_assert_eq(sfs_rangelock_lock(&rl, &r, 0, 4096, false), 0);
	req_start(&w1, 0, 4096, true);
	cr_assert(until_waiting(1));
	req_start(&r2, 512, 512, false);
	cr_assert(until_waiting(2));
	req_start(&w3, 512, 512, true);
	cr_assert(until_waiting(3));
	sfs_rangelock_unlock(&rl, &r);
	cr_expect(req_granted(&w1));
	usleep(20000);
	cr_expect_eq(atomic_load(&r2.got), 0, "a reader passed the writer queued before it");
	cr_expect_eq(atomic_load(&w3.got), 0);
	req_end(&w1);
	cr_expect(req_granted(&r2));
	usleep(20000);
	cr_expect_eq(atomic_load(&w3.got), 0, "a writer passed the reader queued before it");
	req_end(&r2);
	cr_expect(req_granted(&w3));
	req_end(&w3);
	cr_expect_eq(held_now(), 0);
	cr_expect_eq(waiting_now(), 0);
}

Test(rangelock, queued_writer_blocks_later_readers)
{
	struct sfs_range r, later;
	struct req w;

	cr_assert_eq(sfs_rangelock_lock(&rl, &r, 0, 4096, false), 0);
	req_start(&w, 0, 4096, true);
	cr_assert(until_waiting(1));
	cr_expect_eq(sfs_rangelock_trylock(&rl, &later, 0, 512, false), -EBUSY,
		     "a reader came after a waiting writer and shared the range with the first reader");
	cr_expect_eq(sfs_rangelock_trylock(&rl, &later, 4096, 512, false), 0, "a reader beside them");
	sfs_rangelock_unlock(&rl, &later);
	sfs_rangelock_unlock(&rl, &r);
	cr_expect(req_granted(&w));
	req_end(&w);
}

/* A stream of readers that is never empty: two threads pass [0, 4096)
 * between them, each holding it 1 ms, then asking the other to take it
 * and unlocking only once the other holds it too (or after 2 ms).  A lock
 * that let a reader share with the readers already there while a writer
 * waits would keep every writer out for as long as the stream runs. */
struct relay {
	atomic_int stop, turn;
	atomic_int holding[2];
	atomic_ulong rounds;
};

struct relay_arg {
	struct relay *rel;
	int me;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *relay_reader(void *arg)
{
	struct relay_arg *a = arg;
	struct relay *rel = a->rel;
	struct sfs_range r;

	while (!atomic_load(&rel->stop)) {
		double t0;

		if (atomic_load(&rel->turn) != a->me) {
			usleep(50);
			continue;
		}
		if (sfs_rangelock_lock(&rl, &r, 0, 4096, false) < 0)
			break;
		atomic_store(&rel->holding[a->me], 1);
		atomic_fetch_add(&rel->rounds, 1);
		usleep(1000);
		atomic_store(&rel->turn, !a->me);
		t0 = now_ms();
		while (!atomic_load(&rel->holding[!a->me]) && now_ms() - t0 < 2 && !atomic_load(&rel->stop))
			usleep(50);
		atomic_store(&rel->holding[a->me], 0);
		sfs_rangelock_unlock(&rl, &r);
	}
	return NULL;
}

Test(rangelock, writer_not_starved_by_a_stream_of_readers)
{
	struct relay rel = { 0 };
	struct relay_arg args[2] = { { &rel, 0 }, { &rel, 1 } };
	pthread_t th[2];
	double worst = 0;
	int late = 0;

	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, relay_reader, &args[i]), 0);
	while (atomic_load(&rel.rounds) < 10)
		usleep(1000);
	/* Each writer waits for the reader holding when it comes (3 ms at
	 * most) and not for the one after: 20 writers, each given 1 s. */
	for (int k = 0; k < 20 && !late; k++) {
		double t0 = now_ms(), t;
		struct req q;

		req_start(&q, 1024, 512, true);
		while (atomic_load(&q.got) == 0 && now_ms() - t0 < 1000)
			usleep(200);
		t = now_ms() - t0;
		worst = t > worst ? t : worst;
		if (atomic_load(&q.got) != 1) {
			late++;
			atomic_store(&rel.stop, 1);  /* end the stream, so the writer gets in */
		}
		req_end(&q);
		usleep(3000);
	}
	cr_log_info("longest writer wait %.1f ms", worst);
	cr_expect_eq(late, 0, "a writer waited 1 s for a stream of readers (%lu rounds)", atomic_load(&rel.rounds));
	atomic_store(&rel.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	cr_expect_gt(atomic_load(&rel.rounds), 30, "the readers went on between the writers");
}

/* ---- stress ---- */

#define SLOTS 128                      /* 512-byte slots: [0, 64 KiB) */
#define WRITER (1u << 16)              /* a writer's share of a slot's counter */
#define THREADS 8
#define ROUNDS 20000

static atomic_uint slot[SLOTS];

struct stress {
	unsigned seed;
	unsigned long bad, waited, wrote;
};

static pthread_barrier_t start;

static void *stress_main(void *arg)
{
	struct stress *st = arg;
	struct sfs_range r;

	pthread_barrier_wait(&start);         /* all at once, not one after the other */

	for (int i = 0; i < ROUNDS; i++) {
		unsigned s = (unsigned)rand_r(&st->seed) % SLOTS;
		unsigned n = 1 + (unsigned)rand_r(&st->seed) % 8;
		bool excl = rand_r(&st->seed) % 4 == 0;
		unsigned add = excl ? WRITER : 1;

		if (s + n > SLOTS)
			n = SLOTS - s;
		if (sfs_rangelock_trylock(&rl, &r, s * 512ull, n * 512ull, excl) == -EBUSY) {
			st->waited++;
			if (sfs_rangelock_lock(&rl, &r, s * 512ull, n * 512ull, excl) < 0) {
				st->bad++;
				break;
			}
		}
		for (unsigned k = s; k < s + n; k++) {
			unsigned was = atomic_fetch_add(&slot[k], add);

			if (excl ? was != 0 : was >= WRITER)
				st->bad++;
		}
		for (volatile int spin = 0; spin < 200; spin++)
			;
		/* now and then give the core away while holding: on a machine with few
		 * cores the others then run into the range instead of taking turns */
		if (i % 16 == 0)
			sched_yield();
		for (unsigned k = s; k < s + n; k++)
			atomic_fetch_sub(&slot[k], add);
		st->wrote += excl;
		sfs_rangelock_unlock(&rl, &r);
	}
	return NULL;
}

Test(rangelock, stress_mutual_exclusion)
{
	struct stress st[THREADS];
	pthread_t th[THREADS];
	unsigned long bad = 0, waited = 0, wrote = 0;

	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		st[i] = (struct stress){ .seed = 1234u + (unsigned)i };
		cr_assert_eq(pthread_create(&th[i], NULL, stress_main, &st[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		bad += st[i].bad;
		waited += st[i].waited;
		wrote += st[i].wrote;
	}
	pthread_barrier_destroy(&start);
	cr_expect_eq(bad, 0, "%lu times a thread found a writer in its range, or anyone in a writer's", bad);
	cr_log_info("%lu of %d requests waited", waited, THREADS * ROUNDS);
	cr_expect_gt(waited, 100, "only %lu of %d requests had to wait: the threads hardly raced", waited,
		     THREADS * ROUNDS);
	cr_expect_gt(wrote, 0);
	for (int k = 0; k < SLOTS; k++)
		cr_expect_eq(atomic_load(&slot[k]), 0, "slot %d", k);
	cr_expect_eq(held_now(), 0);
	cr_expect_eq(waiting_now(), 0);
	cr_expect_eq(sfs_rangelock_destroy(&rl), 0);
	cr_assert_eq(sfs_rangelock_init(&rl), 0);
}
