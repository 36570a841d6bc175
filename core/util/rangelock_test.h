/* SPDX-License-Identifier: MIT */
/*
 * rangelock_test.h - the tests' view of the range lock (rangelock.h):
 * a take that never waits, and the counts of held and waiting requests,
 * with which test_rangelock.c probes conflicts without blocking and knows
 * when a request in another thread is queued.  The image only ever waits
 * (sfs_rangelock_lock); nothing in fs/ or tools/ includes this.
 */
#ifndef SFS_RANGELOCK_IMPL_H
#define SFS_RANGELOCK_IMPL_H

#include "rangelock.h"

/* As sfs_rangelock_lock but never waits: -EBUSY (nothing taken) when it would. */
int sfs_rangelock_trylock(struct sfs_rangelock *rl, struct sfs_range *r, uint64_t off, uint64_t len,
			  bool excl);

/* How many requests hold a range and how many wait, right now. */
void sfs_rangelock_count(struct sfs_rangelock *rl, unsigned *held, unsigned *waiting);

#endif
