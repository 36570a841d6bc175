/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - every image's statistics in the Prometheus text exposition
 * format (version 0.0.4), for MNT/.stats/metrics.
 *
 * The daemon collects one snapshot per image (sfs_metrics_add), then
 * renders them all at once: the format wants every sample of a metric
 * family in one group, so the file is written family by family, each
 * with its # HELP and # TYPE lines, one sample per image labelled
 * image="NAME" (escaped by sfs_escape_label).  Names follow the
 * Prometheus and OpenMetrics conventions: counters end in _total, units
 * are base units (bytes, seconds), latency classes are histograms with
 * cumulative le buckets, _sum and _count.  A collection keeps only what
 * it renders (the latency histograms already folded into the exposed
 * buckets), about 1.5 KiB per image.
 */
#ifndef SFS_METRICS_H
#define SFS_METRICS_H

#include <stddef.h>

#include "stats.h"

struct sfs_metrics;   /* a collection of image snapshots for one exposition */

/* Exposed latency buckets: le = 2^k ns for k from SFS_METRICS_LE_MIN to SFS_METRICS_LE_MAX (512 ns
 * to about 17 s), then +Inf.  Each is a boundary of the daemon's own histogram, so its counts are
 * exact. */
#define SFS_METRICS_LE_MIN 9
#define SFS_METRICS_LE_MAX 34

/* A new, empty collection; 0 or -ENOMEM. */
int sfs_metrics_new(struct sfs_metrics **out);

/* Free a collection (NULL is fine). */
void sfs_metrics_free(struct sfs_metrics *m);

/* Add one image: its snapshot and info (info->name and the values are copied; info->recent is not
 * used).  0 or -ENOMEM (the collection is unchanged). */
int sfs_metrics_add(struct sfs_metrics *m, const struct sfs_stats_snap *snap, const struct sfs_stats_info *info);

/* Render the collection, images in the order added, into a malloc'd NUL-terminated string (*out,
 * *len); with the daemon's start time as sectorfs_daemon_start_time_seconds.  0 or -ENOMEM. */
int sfs_metrics_render(const struct sfs_metrics *m, char **out, size_t *len);

#endif
