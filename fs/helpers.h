/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - the helper threads of the event loops (see helpers.c): what
 * a loop cannot do without blocking, done on a thread that may block, and
 * given back to the loop.
 */
#ifndef SFS_HELPERS_H
#define SFS_HELPERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util/log.h"

/* A piece of work; embed it in what it works on.  fn runs once, on a helper thread. */
struct sfs_job {
	void (*fn)(struct sfs_job *j);
	struct sfs_job *next;
};

/*
 * Get the helpers ready: threads start as jobs need them, up to max (>= 1),
 * and a thread that finds max_idle others waiting after its job ends.  0,
 * or -EBUSY when they are running already.
 */
int sfs_helpers_start(unsigned max, unsigned max_idle, const struct sfs_log *log);

/*
 * Queue j (first in, first out).  0, or -ENOMEM / -EAGAIN when no helper is
 * running and none could be started (logged; j was not queued), or
 * -ESHUTDOWN after sfs_helpers_stop.  Any thread.
 */
int sfs_helpers_submit(struct sfs_job *j);

/* Helpers busy with a job or waiting, now. */
unsigned sfs_helpers_count(void);

/*
 * Let each helper finish the job it has, drop the jobs still queued, join
 * the helpers.  Safe when never started, and more than once.
 */
void sfs_helpers_stop(void);

/*
 * A loop's inbox for what its helpers give back: the helper queues its
 * job (done with by the helpers now) and writes an eventfd, once for all
 * it queues before the loop takes them; the loop keeps a read of efd (into
 * val) on its ring and takes the queue when it completes.
 */
struct sfs_back {
	int efd;                       /* -1 before sfs_back_init */
	uint64_t val;
	atomic_bool woken;             /* efd written since the loop last took the queue */
	pthread_mutex_t lock;          /* guards done */
	struct sfs_job *done;
};

/* Make b's eventfd and lock.  0 or -errno. */
int sfs_back_init(struct sfs_back *b);

/* Close b's eventfd (safe when never made). */
void sfs_back_destroy(struct sfs_back *b);

/* Any thread: queue j for b's loop and wake the loop unless it is woken already. */
void sfs_back_give(struct sfs_back *b, struct sfs_job *j);

/* Any thread: wake b's loop with nothing queued (it then looks at what else it was asked). */
void sfs_back_poke(struct sfs_back *b);

/* b's loop, once its read of efd completed (before it reads efd again): the jobs given back
 * since it last took them, the last given first, linked by next.  The next give wakes it again. */
struct sfs_job *sfs_back_take(struct sfs_back *b);

#endif
