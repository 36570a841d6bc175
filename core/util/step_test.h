/* SPDX-License-Identifier: MIT */
/*
 * step_test.h - the tests' view of the steps (step.h): the hook that
 * test_steps.c and test_storemake.c set to cut an operation after each of
 * its steps in turn.  A non-zero return (a negative errno) makes the
 * operation fail right there, as if step n had failed, and a hook that
 * never returns (_exit in a forked child) stops it there, as a crash
 * would.  Unset (NULL), a step costs one call and one load.  Nothing in
 * fs/ or tools/ includes this.
 */
#ifndef SFS_STEP_IMPL_H
#define SFS_STEP_IMPL_H

#include "step.h"

/* The hook: 0 to go on, or a negative errno to fail the operation after step n. */
extern int (*sfs_step_hook)(const char *op, int n);

#endif
