/* SPDX-License-Identifier: MIT */
/*
 * checkstore.h - sectorfs-img check STORE (see checkstore.c).
 */
#ifndef SFS_IMG_CHECKSTORE_H
#define SFS_IMG_CHECKSTORE_H

#include <stdbool.h>

#include "common.h"

/* Is the image argument of this check command line a directory (a whole store)?  Then *dir. */
bool img_check_store_arg(int argc, char **argv, const char **dir);

/* Check every image of store and what a crash left in it; check_one is 'check STORE/NAME'
 * (called with its argv).  The OR of the fsck exit codes. */
int img_check_store(int argc, char **argv, const char *store, int (*check_one)(int, char **));

#endif
