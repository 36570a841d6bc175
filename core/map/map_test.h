/* SPDX-License-Identifier: MIT */
/*
 * map_test.h - the tests' view of the allocation map: what the unit
 * tests look at beside map.h, which holds what the rest of sectorfs
 * uses, and fs/ and tools/ never need.
 */
#ifndef SFS_MAP_TEST_H
#define SFS_MAP_TEST_H

#include <stddef.h>

#include "map.h"

/* The map file's descriptor (do not close): test_faults aims its failures at it. */
int sfs_map_fd(const struct sfs_map *m);

/* What map_calloc calls instead of calloc when set: test_limits makes each allocation of a
 * map's life fail in turn. */
extern void *(*map_calloc_hook)(size_t n, size_t size);

#endif
