/* SPDX-License-Identifier: MIT */
/*
 * extents.h - a set of disjoint half-open ranges [start, end) of 64-bit
 * positions, each with a non-zero tag, kept sorted in one array.
 *
 *   v[0]           v[1]                 v[2]
 *   [10,20) tag 1  [20,24) tag 4  ...   [90,91) tag 1
 *
 * Neighbours that touch and carry the same tag are merged, so the array is
 * the shortest description of the set.  Setting a range overwrites the
 * tags under it (tag 0 clears it), splitting the extents it cuts into.
 * Lookups are binary searches; a change moves the tail of the array, so a
 * change costs O(n): meant for lists of up to some ten thousand ranges
 * (bad sectors, what a power cut settled), not for a map of a disk.
 *
 * The bad-sector list (badsect.h) keeps logical sectors in it, the power
 * cut (wcache.c) byte ranges.
 */
#ifndef SFS_EXTENTS_H
#define SFS_EXTENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfs_ext {
	uint64_t start, end;   /* start < end */
	unsigned tag;          /* != 0 */
};

struct sfs_extents {
	struct sfs_ext *v;
	size_t n, cap;
};

/* An empty set (no allocation). */
void sfs_ext_init(struct sfs_extents *e);

/* Free the set's array; the set is empty and usable again. */
void sfs_ext_free(struct sfs_extents *e);

/* Tag [start, end) with tag (0: remove it from the set), whatever it held before.
 * 0 (also for start >= end: nothing to do) or -ENOMEM with the set as it was. */
int sfs_ext_set(struct sfs_extents *e, uint64_t start, uint64_t end, unsigned tag);

/* The index of the first extent that ends after pos (n when none). */
size_t sfs_ext_find(const struct sfs_extents *e, uint64_t pos);

/* Does [start, end) meet an extent whose tag has a bit of mask?  Its first such position
 * into *first (may be NULL) when it does. */
bool sfs_ext_any(const struct sfs_extents *e, uint64_t start, uint64_t end, unsigned mask, uint64_t *first);

/* The positions in the set whose tag has a bit of mask. */
uint64_t sfs_ext_count(const struct sfs_extents *e, unsigned mask);

/* Remove from [start, end) the parts whose tag has a bit of mask.  0, or -ENOMEM with a part
 * of them removed. */
int sfs_ext_clear_tag(struct sfs_extents *e, uint64_t start, uint64_t end, unsigned mask);

/* Do a and b hold the same extents with the same tags? */
bool sfs_ext_equal(const struct sfs_extents *a, const struct sfs_extents *b);

/* Copy src into dst (emptied first).  0 or -ENOMEM (dst empty). */
int sfs_ext_copy(struct sfs_extents *dst, const struct sfs_extents *src);

#endif
