/* SPDX-License-Identifier: MIT */
/*
 * step.h - the steps of the store's multi-file operations.
 *
 * Create, grow, rename and unlink, and the tools' make and inflate, each
 * change several files in a fixed order (written down in store.c, grow.c
 * and store/make.c).  Between two steps they call sfs_step(op, n), which
 * is where a test cuts them (step_test.h, the tests' view): there a
 * failure makes the operation fail as if step n had failed, and a crash
 * stops it as a power cut would.  Without a test it does nothing.
 */
#ifndef SFS_STEP_H
#define SFS_STEP_H

/* Called after step n of op: 0 to go on, or a negative errno to fail the operation there. */
int sfs_step(const char *op, int n);

#endif
