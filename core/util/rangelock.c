/* SPDX-License-Identifier: MIT */
/*
 * rangelock.c - shared and exclusive locks on byte ranges (rangelock.h).
 *
 * Every request, held or waiting, is in one list in arrival order:
 *
 *   head                                                         tail
 *    [0,4096) R held -> [8192,8704) W held -> [512,1024) W waits -> [0,512) R waits
 *
 * Two requests conflict when their ranges overlap and one of them is a
 * writer.  A request is granted when nothing before it in the list
 * conflicts with it.  Above, the writer of [512,1024) waits for the
 * reader of [0,4096); the reader of [0,512) does not conflict with that
 * reader, but it waits too, behind the writer it comes after.  Waiting
 * or held makes no difference to who is blocked: an entry blocks every
 * later conflicting one until it unlocks.  This is the whole contract:
 *
 *   - readers share: a reader waits only for overlapping writers;
 *   - a writer waits for every overlapping request before it, and no
 *     later request can pass it, so it is not starved;
 *   - disjoint ranges never wait for each other;
 *   - a request only waits for earlier ones, so there is no cycle.
 *
 * Only an unlock can make a waiter grantable, and only a waiter after the
 * unlocked entry whose range overlaps it: those alone are re-tested, and
 * each one granted is signalled on its own condition variable.
 */
#include <errno.h>
#include <stddef.h>

#include "dlist.h"
#include "rangelock_test.h"

static bool conflicts(const struct sfs_range *a, const struct sfs_range *b)
{
	return a->start < b->end && b->start < a->end && (a->excl || b->excl);
}

/* Does anything before r (or the whole list, when r is not in it) conflict with r? */
static bool blocked(const struct sfs_rangelock *rl, const struct sfs_range *r)
{
	for (const struct sfs_range *e = rl->head; e && e != r; e = e->next)
		if (conflicts(e, r))
			return true;
	return false;
}

static void append(struct sfs_rangelock *rl, struct sfs_range *r)
{
	SFS_DLIST_PUSH_BACK(rl->head, rl->tail, r);
}

static int set_range(struct sfs_range *r, uint64_t off, uint64_t len, bool excl)
{
	if (len == 0 || off + len < off)
		return -EINVAL;
	r->start = off;
	r->end = off + len;
	r->excl = excl;
	r->waiting = false;
	r->wake = NULL;
	return 0;
}

int sfs_rangelock_init(struct sfs_rangelock *rl)
{
	int rc = pthread_mutex_init(&rl->mu, NULL);

	rl->head = rl->tail = NULL;
	rl->held = rl->waiting = 0;
	return -rc;
}

int sfs_rangelock_destroy(struct sfs_rangelock *rl)
{
	pthread_mutex_lock(&rl->mu);
	if (rl->head) {
		pthread_mutex_unlock(&rl->mu);
		return -EBUSY;
	}
	pthread_mutex_unlock(&rl->mu);
	pthread_mutex_destroy(&rl->mu);
	return 0;
}

/* Take r at once if nothing conflicts; else wait for it when wait is set. */
static int take(struct sfs_rangelock *rl, struct sfs_range *r, uint64_t off, uint64_t len, bool excl, bool wait)
{
	pthread_cond_t wake;
	int rc = set_range(r, off, len, excl);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&rl->mu);
	if (!blocked(rl, r)) {
		append(rl, r);
		rl->held++;
		pthread_mutex_unlock(&rl->mu);
		return 0;
	}
	if (!wait || (rc = pthread_cond_init(&wake, NULL)) != 0) {
		pthread_mutex_unlock(&rl->mu);
		return wait ? -rc : -EBUSY;
	}
	r->wake = &wake;
	r->waiting = true;
	append(rl, r);
	rl->waiting++;
	while (r->waiting)
		pthread_cond_wait(&wake, &rl->mu);
	pthread_mutex_unlock(&rl->mu);
	pthread_cond_destroy(&wake);
	return 0;
}

int sfs_rangelock_lock(struct sfs_rangelock *rl, struct sfs_range *r, uint64_t off, uint64_t len, bool excl)
{
	return take(rl, r, off, len, excl, true);
}

int sfs_rangelock_trylock(struct sfs_rangelock *rl, struct sfs_range *r, uint64_t off, uint64_t len, bool excl)
{
	return take(rl, r, off, len, excl, false);
}

void sfs_rangelock_unlock(struct sfs_rangelock *rl, struct sfs_range *r)
{
	struct sfs_range *after;

	pthread_mutex_lock(&rl->mu);
	after = r->next;
	SFS_DLIST_REMOVE(rl->head, rl->tail, r);
	rl->held--;
	/* Only waiters after r that overlap it were blocked by it. */
	for (struct sfs_range *w = after; w && rl->waiting; w = w->next) {
		if (!w->waiting || w->start >= r->end || r->start >= w->end || blocked(rl, w))
			continue;
		w->waiting = false;
		rl->waiting--;
		rl->held++;
		pthread_cond_signal(w->wake);
	}
	pthread_mutex_unlock(&rl->mu);
}

void sfs_rangelock_count(struct sfs_rangelock *rl, unsigned *held, unsigned *waiting)
{
	pthread_mutex_lock(&rl->mu);
	*held = rl->held;
	*waiting = rl->waiting;
	pthread_mutex_unlock(&rl->mu);
}
