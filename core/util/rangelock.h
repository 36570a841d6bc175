/* SPDX-License-Identifier: MIT */
/*
 * rangelock.h - shared and exclusive locks on byte ranges.
 *
 * What a disk guarantees and a page cache does not: a read racing a
 * write of the same sector returns the old sector or the new one, never
 * a mix.  An image takes the range of each request in one of these locks
 * (see image/io.c for when): readers of a range share it, a writer excludes
 * every reader and writer whose range overlaps its own, and ranges that
 * do not overlap never wait for each other (ranges are half-open, so
 * [0, 512) and [512, 1024) do not overlap).
 *
 * Requests are served in arrival order among those that conflict: a
 * request waits for every earlier request it conflicts with, held or
 * still waiting, and for nothing else.  So a writer waits only for the
 * readers already there, never for readers that come after it, however
 * many keep coming; and since a request never waits for a later one,
 * range locks cannot deadlock among themselves.
 *
 * The caller owns the struct sfs_range of each lock it takes (on its
 * stack, typically) until it unlocks: taking a lock allocates nothing.
 * The lock keeps its requests in one list under one mutex; a waiter
 * sleeps on a condition variable of its own and the unlock that makes it
 * grantable wakes it alone.  The list is as long as the requests in
 * flight (the daemon's worker threads, 64 by default), which is what
 * each lock and unlock scans.
 *
 * Functions that can fail return 0 or a negative errno.
 */
#ifndef SFS_RANGELOCK_H
#define SFS_RANGELOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* One request: a range held or waited for.  Opaque to callers. */
struct sfs_range {
	uint64_t start, end;          /* [start, end) */
	bool excl;                    /* a writer */
	bool waiting;                 /* not granted yet */
	pthread_cond_t *wake;         /* the waiter's own, while waiting */
	struct sfs_range *prev, *next;
};

struct sfs_rangelock {
	pthread_mutex_t mu;
	struct sfs_range *head, *tail; /* every request, held or waiting, oldest first */
	unsigned held, waiting;
};

/* Make rl an empty lock: 0, or the negative errno of pthread_mutex_init. */
int sfs_rangelock_init(struct sfs_rangelock *rl);

/* Free rl: 0, or -EBUSY (and nothing freed) while a range is held or waited for. */
int sfs_rangelock_destroy(struct sfs_rangelock *rl);

/* Take [off, off+len) in rl, shared (excl false) or exclusive, waiting as
 * long as an earlier conflicting request is there; r records the hold
 * until sfs_rangelock_unlock.  0, or -EINVAL (nothing taken) when len is 0
 * or the range passes 2^64, -ENOMEM/-EAGAIN when there is no condition
 * variable to wait on. */
int sfs_rangelock_lock(struct sfs_rangelock *rl, struct sfs_range *r, uint64_t off, uint64_t len, bool excl);

/* Release the range r holds in rl (taken by a lock that returned 0, or a trylock of
 * rangelock_test.h);
 * wakes the waiters that no longer conflict with anything earlier.  Cannot fail. */
void sfs_rangelock_unlock(struct sfs_rangelock *rl, struct sfs_range *r);

#endif
