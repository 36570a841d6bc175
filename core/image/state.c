/* SPDX-License-Identifier: MIT */
/*
 * state.c - the few words of an image's state that its I/O, its backing
 * transfers and its size all read or set (internal.h): its live stats,
 * made at the first I/O or unpacked after an idle time (stats/cell.h); whether the backing file was written since the last
 * flush; whether it is growing, and the size it then shows.  They live
 * here, below io.c, backing.c and size.c, so that none of those needs
 * another for them.
 */
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* The image's live stats, made (or unpacked) at need (stats/cell.h); NULL without stats (or out
 * of memory). */
struct sfs_stats *image_stats_of(struct sfs_image *im)
{
	return sfs_stats_cell_get(&im->stats);
}

/* The backing file was written: the next flush (or the eviction) must sync it. */
void image_mark_dirty(struct sfs_image *im)
{
	if (!__atomic_load_n(&im->dirty, __ATOMIC_RELAXED))
		__atomic_store_n(&im->dirty, 1, __ATOMIC_RELEASE);
}

/* A write of a growing image reached end: the disk shows at least that much. */
void image_extend_visible(struct sfs_image *im, uint64_t end)
{
	uint64_t cur = __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE);

	while (cur < end && !__atomic_compare_exchange_n(&im->vsize, &cur, end, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
		;
}

bool sfs_image_growing(const struct sfs_image *im)
{
	return __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE);
}
