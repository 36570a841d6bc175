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

/* Provisioning modes, as vmkfstools names them. */
enum sfs_prov {
	SFS_PROV_THIN = 0,
	SFS_PROV_ZEROEDTHICK = 1,
	SFS_PROV_EAGERZEROEDTHICK = 2,
};

#define SFS_SECTOR_MIN 512u
#define SFS_SECTOR_MAX 65536u
#define SFS_BLOCK_MAX (64ull << 20)
#define SFS_BLOCK_DEFAULT (1ull << 20)
/* The most blocks a disk has: 2^30.  An open image's allocation map is held whole in memory,
 * one bit a block (128 MiB at this count, its file 130 MiB), so the largest disk is 2^30 blocks
 * of its block size (sfs_geom_size_max): 512 GiB with 512-byte blocks, 4 TiB with 4 KiB ones,
 * 1 PiB with the default 1 MiB, 64 PiB with 64 MiB. */
#define SFS_BLOCKS_MAX (1ull << 30)
/* Largest disk size of any geometry: SFS_BLOCKS_MAX blocks of SFS_BLOCK_MAX, 2^56 bytes (64 PiB),
 * far from off_t's end. */
#define SFS_SIZE_MAX (SFS_BLOCKS_MAX * SFS_BLOCK_MAX)
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

/* The largest size of a disk of blocks of block_size bytes: SFS_BLOCKS_MAX of them.
 * Precondition: block_size a power of two, at most SFS_BLOCK_MAX. */
uint64_t sfs_geom_size_max(uint64_t block_size);

/* First and last block index touched by [off, off+len); len must be > 0. */
void sfs_geom_block_span(const struct sfs_geom *g, uint64_t off, uint64_t len,
			 uint64_t *first, uint64_t *last);

/* Byte range [*start, *end) of block blk, clipped to the disk size. */
void sfs_geom_block_range(const struct sfs_geom *g, uint64_t blk,
			  uint64_t *start, uint64_t *end);

/* Name of a provisioning mode ("thin", "zeroedthick", "eagerzeroedthick"), NULL for another value. */
const char *sfs_prov_name(enum sfs_prov p);

/* Parse a provisioning mode name; 0 or -EINVAL. */
int sfs_prov_parse(const char *s, enum sfs_prov *out);

/* Parse "512n", "512e" or "4kn" (case-insensitive) into sector sizes; 0 or -EINVAL. */
int sfs_sector_parse(const char *s, uint32_t *lss, uint32_t *pss);

/* Name of a sector format ("512n", "512e", "4kn") or NULL when it has none. */
const char *sfs_sector_name(uint32_t lss, uint32_t pss);

/* The grow rule: what a disk of geometry g becoming new_size bytes is.  A disk only grows,
 * to a multiple of its logical sector, at most sfs_geom_size_max(g->block_size). */
enum sfs_grow_verdict {
	SFS_GROW_YES = 0,        /* it grows */
	SFS_GROW_SAME,           /* it is that size already */
	SFS_GROW_SHRINKS,        /* smaller than it is */
	SFS_GROW_TOO_LARGE,      /* past sfs_geom_size_max(g->block_size) */
	SFS_GROW_UNALIGNED,      /* not a multiple of the logical sector */
};

enum sfs_grow_verdict sfs_geom_grow_verdict(const struct sfs_geom *g, uint64_t new_size);

/* The grow rule as a result, with why refused in why (len bytes; why may be NULL), e.g. "size
 * 1000 is not a multiple of the logical sector size 512".
 * Returns 0 (it grows) or 1 (that size already), else:
 *   -EFBIG   larger than the largest disk of g's block size (a file past its maximum size)
 *   -EINVAL  smaller than g, or not a multiple of the logical sector */
int sfs_geom_grow_check(const struct sfs_geom *g, uint64_t new_size, char *why, size_t len);

/* The geometry rules of the contract: sectors powers of two from 512 to 65536, physical >=
 * logical, size a multiple of the logical sector, block_size a power of two from the physical
 * sector to 64M, and size at most sfs_geom_size_max(block).  Messages name fname, the key and
 * the reason ("disk.json: key 'size': 1000 is not a multiple of the logical sector size 512").
 * Returns 0, else:
 *   -EFBIG   size larger than the largest disk of that block size
 *   -EINVAL  any other rule broken */
int sfs_geom_validate(uint64_t size, uint64_t lss, uint64_t pss, uint64_t block, const char *fname,
		      char *err, size_t errlen);

#endif
