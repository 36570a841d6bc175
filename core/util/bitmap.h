/* SPDX-License-Identifier: MIT */
/*
 * bitmap.h - a bitmap in memory: bits in an array of 64-bit words, with no
 * file behind it (the allocation map's bits and its pages' dirty bits).
 *
 *   word    0                       1                        ...
 *   bit   63 ............ 1 0     127 ........... 65 64
 *
 * Bit i is bit i % 64 of word i / 64.  The caller owns the array and its
 * length; no function here allocates, and none checks an index against a
 * length it is not given.  Test, set and clear are atomic (acquire loads,
 * release read-modify-writes) and take no lock, so readers and writers of
 * other bits, or of the same bit, may run at once; a set and a clear of
 * the same bit at once leave either.  sfs_bitmap_keep is the one plain
 * write, for a bitmap no one else uses yet.
 */
#ifndef SFS_BITMAP_H
#define SFS_BITMAP_H

#include <stdbool.h>
#include <stdint.h>

/* Is bit i set? */
bool sfs_bitmap_test(const uint64_t *w, uint64_t i);

/* Set bit i: true when it was clear (this call set it). */
bool sfs_bitmap_set(uint64_t *w, uint64_t i);

/* Clear bit i: true when it was set (this call cleared it). */
bool sfs_bitmap_clear(uint64_t *w, uint64_t i);

/* Set bits [first, end) (whole words at a time where the range covers them): how many of them
 * were clear. */
uint64_t sfs_bitmap_set_range(uint64_t *w, uint64_t first, uint64_t end);

/* How many of bits [0, nbits) are set. */
uint64_t sfs_bitmap_count(const uint64_t *w, uint64_t nbits);

/* Clear every bit from nbits on in the nwords words of w, so that the first nbits are all it
 * holds.  Not atomic: precondition, no one else uses w yet. */
void sfs_bitmap_keep(uint64_t *w, uint64_t nbits, uint64_t nwords);

/* The first bit >= from, below nbits, that is set (set true) or clear (set false); nbits when
 * there is none. */
uint64_t sfs_bitmap_next(const uint64_t *w, uint64_t nbits, uint64_t from, bool set);

/* Is any bit of the nwords words of w set? */
bool sfs_bitmap_any(const uint64_t *w, uint64_t nwords);

#endif
