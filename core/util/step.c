/* SPDX-License-Identifier: MIT */
/*
 * step.c - the point between two steps of a multi-file operation
 * (step.h), and the hook through which a test cuts it there
 * (step_test.h).
 */
#include <stddef.h>

#include "step_test.h"

int (*sfs_step_hook)(const char *op, int n);

int sfs_step(const char *op, int n)
{
	return sfs_step_hook ? sfs_step_hook(op, n) : 0;
}
