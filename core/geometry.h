/* SPDX-License-Identifier: MIT */
/*
 * geometry.h - disk geometry and the I/O rules, checked in one place.
 *
 * Every read, write, discard and zeroing that reaches an image passes
 * through these checks first:
 *   - offset and length must be multiples of the logical sector (EINVAL);
 *   - reads at or past the end return nothing, reads that straddle the
 *     end are shortened;
 *   - writes (and discards, zeroing) that reach past the end fail with
 *     ENOSPC as a whole.
 * Alignment is checked before range, as a block device does.
 */
#ifndef SFS_GEOMETRY_H
#define SFS_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfs_geom {
	uint64_t size;        /* disk size in bytes */
	uint32_t lss;         /* logical sector size */
	uint32_t pss;         /* physical sector size */
	uint64_t block_size;  /* allocation unit */
};

/* Alignment classes of the alignment histogram. */
enum sfs_align_class {
	SFS_ALIGN_512 = 0,   /* largest power of two dividing offset and length is 512 (or less) */
	SFS_ALIGN_1K = 1,
	SFS_ALIGN_2K = 2,
	SFS_ALIGN_4K = 3,    /* 4 KiB or more: would run on a 4Kn disk */
	SFS_ALIGN_NCLASS = 4,
};

/* Check a read: 0 with *len_out set (0 at/after end, shortened across it), or -EINVAL. */
int sfs_geom_check_read(const struct sfs_geom *g, uint64_t off, size_t len,
			size_t *len_out);

/* Check a write or other modifying range: 0, -EINVAL (misaligned) or -ENOSPC (past the end). */
int sfs_geom_check_write(const struct sfs_geom *g, uint64_t off, uint64_t len);

/* True when an aligned write covers some physical sector only in part (read-modify-write). */
bool sfs_geom_is_rmw(const struct sfs_geom *g, uint64_t off, uint64_t len);

/* Alignment class of an I/O: the largest power of two dividing both off and len. */
enum sfs_align_class sfs_geom_align_class(uint64_t off, uint64_t len);

/* Number of allocation blocks of the disk (last one may be partial). */
uint64_t sfs_geom_nblocks(const struct sfs_geom *g);

/* First and last block index touched by [off, off+len); len must be > 0. */
void sfs_geom_block_span(const struct sfs_geom *g, uint64_t off, uint64_t len,
			 uint64_t *first, uint64_t *last);

/* Byte range [*start, *end) of block blk, clipped to the disk size. */
void sfs_geom_block_range(const struct sfs_geom *g, uint64_t blk,
			  uint64_t *start, uint64_t *end);

#endif
