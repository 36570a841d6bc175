/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - the helper threads of the event loops (see helpers.c): what
 * a loop cannot do without blocking, done on a thread that may block.
 */
#ifndef SFS_HELPERS_H
#define SFS_HELPERS_H

#include "log.h"

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

#endif
