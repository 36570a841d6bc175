/* SPDX-License-Identifier: MIT */
/*
 * step.h - the steps of the store's multi-file operations, for tests.
 *
 * Create, grow, rename and unlink, and the tools' make and inflate, each
 * change several files in a fixed order (written down in store.c, grow.c
 * and storemake.c).  Between two steps they call
 * sfs_step(op, n); when a test has set sfs_step_hook, a non-zero return
 * (a negative errno) makes the operation fail right there, as if step n
 * had failed, and a hook that never returns (_exit in a forked child)
 * stops it there, as a crash would.  Unset, it costs one load.
 */
#ifndef SFS_STEP_H
#define SFS_STEP_H

/* The hook: 0 to go on, or a negative errno to fail the operation after step n. */
extern int (*sfs_step_hook)(const char *op, int n);

/* Called after step n of op: 0, or the hook's negative errno. */
static inline int sfs_step(const char *op, int n)
{
	return sfs_step_hook ? sfs_step_hook(op, n) : 0;
}

#endif
