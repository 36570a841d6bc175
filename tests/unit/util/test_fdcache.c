/* SPDX-License-Identifier: MIT */
/*
 * test_fdcache.c - the bounded cache of open descriptors
 * (core/util/fdcache.c).
 *
 * Each slot of these tests owns a pipe (two descriptors) and remembers
 * the inode of the pipe it opened, so that a descriptor closed under a
 * user (and its number reused by another slot's pipe) is caught: while
 * pinned, a slot's descriptors must still be that pipe.
 *
 * Proves: idle slots are closed least recently used first and only to
 * make room; a pinned slot is never closed, even when every slot is
 * pinned and the budget is passed; the budget is kept again once pins
 * drop; an open that fails with EMFILE is answered by closing an idle
 * slot and trying again; a close that refuses (a failed flush) keeps the
 * slot open and usable; sfs_fdslot_lock holds a slot open; detach closes;
 * sfs_fdcache_close_idle closes the slots idle since before its time,
 * longest idle first, and no pinned, recently used, busy or refusing one
 * (a refusal is not tried again in a loop);
 * eight threads pinning, checking and unpinning random slots never see a
 * descriptor closed under them, and the cache ends within its budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/clock.h"
#include "util/fdcache.h"

struct pslot {
	struct sfs_fdslot slot;          /* first: the callbacks cast back */
	int fds[2];
	ino_t ino;
	int opens, closes;
	int fail_open;                   /* the next opens fail with -EMFILE this many times */
	bool refuse_close;
};

static int p_open(struct sfs_fdslot *s)
{
	struct pslot *p = (struct pslot *)s;
	struct stat st;

	if (p->fail_open > 0) {
		p->fail_open--;
		return -EMFILE;
	}
	if (pipe(p->fds) < 0)
		return -errno;
	fstat(p->fds[0], &st);
	p->ino = st.st_ino;
	p->opens++;
	return 2;
}

static int p_close(struct sfs_fdslot *s, bool force)
{
	struct pslot *p = (struct pslot *)s;

	if (p->refuse_close && !force)
		return -EIO;
	close(p->fds[0]);
	close(p->fds[1]);
	p->fds[0] = p->fds[1] = -1;
	p->closes++;
	return 0;
}

/* Are p's descriptors open and still its pipe? */
static bool intact(const struct pslot *p)
{
	struct stat a, b;

	return p->fds[0] >= 0 && fstat(p->fds[0], &a) == 0 && fstat(p->fds[1], &b) == 0 &&
	       a.st_ino == p->ino && b.st_ino == p->ino && S_ISFIFO(a.st_mode);
}

#define NSLOTS 8

static struct sfs_fdcache *cache;
static struct pslot slots[NSLOTS];

static void setup_budget(unsigned budget)
{
	cr_assert_eq(sfs_fdcache_new(budget, &cache), 0);
	for (int i = 0; i < NSLOTS; i++) {
		slots[i] = (struct pslot){ .fds = { -1, -1 } };
		sfs_fdslot_init(&slots[i].slot, cache, p_open, p_close, 2);
	}
}

static void teardown(void)
{
	if (!cache)
		return;
	for (int i = 0; i < NSLOTS; i++)
		sfs_fdslot_detach(&slots[i].slot);
	sfs_fdcache_free(cache);
	cache = NULL;
}

static unsigned used(void)
{
	struct sfs_fdcache_usage u;

	sfs_fdcache_usage(cache, &u);
	return u.used;
}

TestSuite(fdcache, .fini = teardown, .timeout = 60);

/* Slots from to to - 1 pinned and unpinned in turn: open, idle, the first
 * the least recently used. */
static void open_idle(int from, int to)
{
	for (int i = from; i < to; i++) {
		cr_assert_eq(sfs_fdslot_pin(&slots[i].slot), 0, "pin slot %d", i);
		sfs_fdslot_unpin(&slots[i].slot, false);
	}
}

Test(fdcache, idle_slots_evicted_least_recently_used_first)
{
	setup_budget(6);             /* three pipes */
	open_idle(0, 3);
	cr_expect_eq(used(), 6);
	for (int i = 0; i < 3; i++)
		cr_expect(intact(&slots[i]), "slot %d closed while the budget had room", i);
	/* slot 0 used again: now slot 1 is the least recently used */
	open_idle(0, 1);
	cr_assert_eq(sfs_fdslot_pin(&slots[3].slot), 0);
	cr_expect_eq(slots[1].closes, 1, "slot 1, used longest ago, is the one closed");
	cr_expect_eq(slots[0].closes, 0);
	cr_expect_eq(slots[2].closes, 0);
	cr_expect(intact(&slots[3]));
	sfs_fdslot_unpin(&slots[3].slot, false);
	cr_expect_eq(used(), 6);
	/* an evicted slot opens again on its next pin */
	cr_assert_eq(sfs_fdslot_pin(&slots[1].slot), 0);
	cr_expect(intact(&slots[1]));
	cr_expect_eq(slots[1].opens, 2);
	sfs_fdslot_unpin(&slots[1].slot, false);
	cr_expect_eq(slots[2].closes, 1, "then slot 2 was the least recently used");
}

Test(fdcache, pinned_slot_never_closed)
{
	struct sfs_fdcache_usage u;

	setup_budget(4);             /* two pipes */
	cr_assert_eq(sfs_fdslot_pin(&slots[0].slot), 0);
	for (int i = 1; i < NSLOTS; i++) {
		cr_assert_eq(sfs_fdslot_pin(&slots[i].slot), 0);
		cr_expect(intact(&slots[0]), "pinned slot 0 closed to open slot %d", i);
		sfs_fdslot_unpin(&slots[i].slot, false);
	}
	cr_expect_eq(slots[0].closes, 0);
	/* every slot pinned: the budget is passed rather than a pinned slot closed */
	for (int i = 1; i < NSLOTS; i++)
		cr_assert_eq(sfs_fdslot_pin(&slots[i].slot), 0);
	for (int i = 0; i < NSLOTS; i++)
		cr_expect(intact(&slots[i]), "slot %d", i);
	sfs_fdcache_usage(cache, &u);
	cr_expect_eq(u.used, 2 * NSLOTS);
	cr_expect_eq(u.pinned, NSLOTS);
	for (int i = 0; i < NSLOTS; i++)
		sfs_fdslot_unpin(&slots[i].slot, false);
	cr_expect_leq(used(), 4, "back within the budget once unpinned: %u", used());
}

Test(fdcache, emfile_answered_by_evicting)
{
	setup_budget(100);
	open_idle(0, 3);
	/* room by the budget, but the system says EMFILE twice: two idle slots go */
	slots[5].fail_open = 2;
	cr_assert_eq(sfs_fdslot_pin(&slots[5].slot), 0);
	cr_expect(intact(&slots[5]));
	cr_expect_eq(slots[0].closes + slots[1].closes + slots[2].closes, 2);
	cr_expect_eq(slots[0].closes, 1, "least recently used first");
	sfs_fdslot_unpin(&slots[5].slot, false);
	/* nothing idle left to close: the error comes back, and nothing stays pinned */
	cr_assert_eq(sfs_fdslot_pin(&slots[2].slot), 0);
	cr_assert_eq(sfs_fdslot_pin(&slots[5].slot), 0);
	slots[6].fail_open = 1;
	cr_expect_eq(sfs_fdslot_pin(&slots[6].slot), -EMFILE);
	cr_expect_eq(slots[6].slot.pins, 0);
	sfs_fdslot_unpin(&slots[2].slot, false);
	sfs_fdslot_unpin(&slots[5].slot, false);
}

Test(fdcache, refused_close_keeps_slot_open)
{
	setup_budget(2);
	open_idle(0, 1);
	slots[0].refuse_close = true;
	cr_assert_eq(sfs_fdslot_pin(&slots[1].slot), 0);
	cr_expect(intact(&slots[0]), "a slot whose close failed was closed anyway");
	cr_expect(intact(&slots[1]));
	sfs_fdslot_unpin(&slots[1].slot, false);
	cr_assert_eq(sfs_fdslot_pin(&slots[0].slot), 0);
	cr_expect(intact(&slots[0]));
	cr_expect_eq(slots[0].opens, 1, "still the first open");
	sfs_fdslot_unpin(&slots[0].slot, false);
	slots[0].refuse_close = false;
}

Test(fdcache, close_idle_closes_only_what_was_idle_long_enough)
{
	uint64_t mid;

	setup_budget(100);
	open_idle(0, 4);
	cr_assert_eq(sfs_fdslot_pin(&slots[4].slot), 0);     /* pinned since before */
	usleep(2000);
	mid = sfs_now_ns();
	usleep(2000);
	open_idle(5, 7);                                     /* idle, but only since after mid */
	slots[1].refuse_close = true;                         /* a failed flush */
	cr_assert(sfs_fdslot_lock(&slots[2].slot));           /* busy: its mutex held */
	cr_expect_eq(sfs_fdcache_close_idle(cache, mid), 2);
	cr_expect_eq(slots[0].closes, 1);
	cr_expect_eq(slots[3].closes, 1);
	cr_expect(intact(&slots[1]), "a slot whose close refused was closed");
	cr_expect(intact(&slots[2]), "a slot whose mutex was held was closed");
	cr_expect(intact(&slots[4]), "a pinned slot was closed");
	cr_expect(intact(&slots[5]) && intact(&slots[6]), "a slot idle since after the time was closed");
	sfs_fdslot_unlock(&slots[2].slot);
	slots[1].refuse_close = false;
	/* the refused one counts as idle from its refusal: not closed by a time before it */
	cr_expect_eq(sfs_fdcache_close_idle(cache, mid), 1);
	cr_expect_eq(slots[2].closes, 1);
	cr_expect(intact(&slots[1]));
	cr_expect_eq(sfs_fdcache_close_idle(cache, sfs_now_ns()), 3);
	cr_expect(intact(&slots[4]));
	cr_expect_eq(used(), 2);
	/* a closed slot opens again on its next pin */
	cr_assert_eq(sfs_fdslot_pin(&slots[0].slot), 0);
	cr_expect(intact(&slots[0]));
	cr_expect_eq(slots[0].opens, 2);
	sfs_fdslot_unpin(&slots[0].slot, false);
	sfs_fdslot_unpin(&slots[4].slot, false);
}

Test(fdcache, release_closes_at_once_and_lock_holds)
{
	setup_budget(100);
	cr_assert_eq(sfs_fdslot_pin(&slots[0].slot), 0);
	sfs_fdslot_unpin(&slots[0].slot, true);
	cr_expect_eq(slots[0].closes, 1);
	cr_expect_not(sfs_fdslot_is_open(&slots[0].slot));
	cr_expect_eq(used(), 0);

	/* a locked idle slot is skipped by an evictor */
	teardown();
	setup_budget(2);
	open_idle(0, 1);
	cr_assert(sfs_fdslot_lock(&slots[0].slot));
	cr_expect_eq(sfs_fdcache_make_room(cache, 2), -EMFILE);
	cr_expect(intact(&slots[0]));
	sfs_fdslot_unlock(&slots[0].slot);
	cr_expect_eq(sfs_fdcache_make_room(cache, 2), 0);
	cr_expect_eq(slots[0].closes, 1);
	cr_expect_not(sfs_fdslot_lock(&slots[0].slot));
	sfs_fdslot_unlock(&slots[0].slot);
}

struct worker_arg {
	unsigned seed;
	int bad;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;

	for (int i = 0; i < 4000; i++) {
		struct pslot *p = &slots[rand_r(&w->seed) % NSLOTS];
		char c = 'x';

		if (sfs_fdslot_pin(&p->slot) < 0) {
			w->bad++;
			continue;
		}
		/* use the descriptors: they must stay this slot's pipe until the unpin */
		if (!intact(p) || write(p->fds[1], &c, 1) != 1 || read(p->fds[0], &c, 1) != 1 || !intact(p))
			w->bad++;
		if (rand_r(&w->seed) % 4 == 0)
			sched_yield();
		sfs_fdslot_unpin(&p->slot, rand_r(&w->seed) % 16 == 0);
	}
	return NULL;
}

Test(fdcache, threads_never_see_descriptors_closed_under_them)
{
	pthread_t t[8];
	struct worker_arg a[8];
	struct sfs_fdcache_usage u;

	setup_budget(6);
	for (int i = 0; i < 8; i++) {
		a[i] = (struct worker_arg){ .seed = (unsigned)i * 7919u + 1, .bad = 0 };
		pthread_create(&t[i], NULL, worker, &a[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		cr_expect_eq(a[i].bad, 0, "thread %d saw %d descriptors closed, reused or failing", i, a[i].bad);
	}
	sfs_fdcache_usage(cache, &u);
	cr_expect_eq(u.pinned, 0);
	cr_expect_leq(u.used, 6, "used %u of a budget of 6 with nothing pinned", u.used);
	cr_expect_gt(u.evictions, 0);
	/* reads of the pipes in use prove the slots' counts agree with what is open */
	unsigned open = 0;

	for (int i = 0; i < NSLOTS; i++)
		open += sfs_fdslot_is_open(&slots[i].slot) ? 2 : 0;
	cr_expect_eq(open, u.used);
}
