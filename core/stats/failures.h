/* SPDX-License-Identifier: MIT */
/*
 * failures.h - the failures of an image in its stats files
 * (failures.c), for the renderers of render.c.  Shown only for an
 * image with a failure state (struct sfs_stats_info's fail): an image
 * without one renders as it always did.
 */
#ifndef SFS_STATS_FAIL_H
#define SFS_STATS_FAIL_H

#include <stdio.h>

#include "stats.h"

struct json_t;

/* Set "failures" in the JSON object o from info->fail and info->last_cut (nothing when
 * info->fail is NULL).  0, or non-zero when a key could not be set (out of memory). */
int sfs_stats_fail_json(struct json_t *o, const struct sfs_stats_info *info);

/* The failure lines of the text file (none when info->fail is NULL). */
void sfs_stats_fail_text(FILE *f, const struct sfs_stats_info *info);

#endif
