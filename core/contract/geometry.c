/* SPDX-License-Identifier: MIT */
/*
 * geometry.c - the I/O rules of a disk, checked in one place.
 *
 * A request [off, off+len) is legal when both ends are multiples of the
 * logical sector.  Alignment is checked before range, as the Linux block
 * layer does: a misaligned request past the end is EINVAL, not ENOSPC.
 *
 *        0                                   size
 *        |-----------------------------------|
 *  read  [====)            ok
 *  read                              [=======|===)  shortened to size
 *  read                                      |  [==)  0 bytes
 *  write                             [=======|===)  ENOSPC, nothing written
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "geometry.h"
#include "util/log.h"
#include "util/units.h"

static const struct sector_format {
	const char *name;
	uint32_t lss, pss;
} sector_formats[] = {
	{ "512n", 512, 512 },
	{ "512e", 512, 4096 },
	{ "4kn", 4096, 4096 },
};
#define NSECTOR (sizeof(sector_formats) / sizeof(sector_formats[0]))

static const char *const prov_names[] = {
	[SFS_PROV_THIN] = "thin",
	[SFS_PROV_ZEROEDTHICK] = "zeroedthick",
	[SFS_PROV_EAGERZEROEDTHICK] = "eagerzeroedthick",
};
#define NPROV (sizeof(prov_names) / sizeof(prov_names[0]))

static inline int misaligned(const struct sfs_geom *g, uint64_t off, uint64_t len)
{
	uint64_t mask = g->lss - 1;

	return ((off | len) & mask) != 0;
}

int sfs_geom_check_read(const struct sfs_geom *g, uint64_t off, size_t len, size_t *len_out)
{
	if (misaligned(g, off, len))
		return -EINVAL;
	if (off >= g->size)
		*len_out = 0;
	else if (len > g->size - off)
		*len_out = g->size - off;
	else
		*len_out = len;
	return 0;
}

int sfs_geom_check_write(const struct sfs_geom *g, uint64_t off, uint64_t len)
{
	if (misaligned(g, off, len))
		return -EINVAL;
	if (off > g->size || len > g->size - off)
		return -ENOSPC;
	return 0;
}

bool sfs_geom_is_rmw(const struct sfs_geom *g, uint64_t off, uint64_t len)
{
	uint64_t mask = g->pss - 1;

	if (g->pss <= g->lss || len == 0)
		return false;
	return ((off | len) & mask) != 0;
}

enum sfs_align_class sfs_geom_align_class(uint64_t off, uint64_t len)
{
	uint64_t v = off | len;

	if (v == 0 || (v & 4095) == 0)
		return SFS_ALIGN_4K;
	if ((v & 2047) == 0)
		return SFS_ALIGN_2K;
	if ((v & 1023) == 0)
		return SFS_ALIGN_1K;
	return SFS_ALIGN_512;
}

uint64_t sfs_geom_nblocks(const struct sfs_geom *g)
{
	return (g->size + g->block_size - 1) / g->block_size;
}

uint64_t sfs_geom_size_max(uint64_t block_size)
{
	assert(sfs_is_pow2(block_size) && block_size <= SFS_BLOCK_MAX);
	return SFS_BLOCKS_MAX * block_size;
}

/* "the maximum SIZE for a block size of BLOCK (...)" into buf, for the messages. */
static void largest_text(uint64_t block_size, char *buf, size_t len)
{
	char max[32], bs[32];

	sfs_format_iec(sfs_geom_size_max(block_size), max, sizeof(max));
	sfs_format_iec(block_size, bs, sizeof(bs));
	snprintf(buf, len, "the maximum %s for a block size of %s (2^30 blocks: an open image's "
		 "allocation map is held in memory)", max, bs);
}

void sfs_geom_block_span(const struct sfs_geom *g, uint64_t off, uint64_t len,
			 uint64_t *first, uint64_t *last)
{
	*first = off / g->block_size;
	*last = (off + len - 1) / g->block_size;
}

void sfs_geom_block_range(const struct sfs_geom *g, uint64_t blk, uint64_t *start, uint64_t *end)
{
	*start = blk * g->block_size;
	*end = *start + g->block_size;
	if (*end > g->size)
		*end = g->size;
}

const char *sfs_prov_name(enum sfs_prov p)
{
	return (unsigned)p < NPROV ? prov_names[p] : NULL;
}

int sfs_prov_parse(const char *s, enum sfs_prov *out)
{
	for (size_t i = 0; i < NPROV; i++)
		if (strcmp(s, prov_names[i]) == 0) {
			*out = (enum sfs_prov)i;
			return 0;
		}
	return -EINVAL;
}

enum sfs_grow_verdict sfs_geom_grow_verdict(const struct sfs_geom *g, uint64_t new_size)
{
	if (new_size < g->size)
		return SFS_GROW_SHRINKS;
	if (new_size > sfs_geom_size_max(g->block_size))
		return SFS_GROW_TOO_LARGE;
	if (new_size % g->lss)
		return SFS_GROW_UNALIGNED;
	return new_size == g->size ? SFS_GROW_SAME : SFS_GROW_YES;
}

int sfs_geom_grow_check(const struct sfs_geom *g, uint64_t new_size, char *why, size_t len)
{
	enum sfs_grow_verdict v = sfs_geom_grow_verdict(g, new_size);
	unsigned long long n = new_size;
	char largest[160];

	if (why && len)
		why[0] = '\0';
	if (v == SFS_GROW_YES || v == SFS_GROW_SAME)
		return v == SFS_GROW_SAME;
	if (v == SFS_GROW_TOO_LARGE) {
		if (why) {
			largest_text(g->block_size, largest, sizeof(largest));
			snprintf(why, len, "size %llu is larger than %s", n, largest);
		}
		return -EFBIG;
	}
	if (why && v == SFS_GROW_SHRINKS)
		snprintf(why, len, "cannot shrink from %llu to %llu bytes: a disk only grows",
			 (unsigned long long)g->size, n);
	else if (why)
		snprintf(why, len, "size %llu is not a multiple of the logical sector size %u", n, g->lss);
	return -EINVAL;
}

/*
 * The rules between values, shared by the sidecar parser, sfs_sidecar_validate
 * and the map header's check; messages name the file and the key.
 * Sector sizes come in as 64-bit so the parser can check a JSON integer
 * before narrowing it.
 */
static int check_sector(uint64_t v, const char *key, const char *fname,
			char *err, size_t errlen)
{
	if (!sfs_is_pow2(v) || v < SFS_SECTOR_MIN || v > SFS_SECTOR_MAX)
		return sfs_key_err(err, errlen, fname, key, -EINVAL,
			       "%" PRIu64 " is not a power of two from %u to %u",
			       v, SFS_SECTOR_MIN, SFS_SECTOR_MAX);
	return 0;
}

/* v, the value of key, is not smaller than floor, the what of the geometry: 0, or -EINVAL with
 * the message in err. */
static int check_not_below(uint64_t v, uint64_t floor, const char *key, const char *what,
			   const char *fname, char *err, size_t errlen)
{
	if (v < floor)
		return sfs_key_err(err, errlen, fname, key, -EINVAL,
			       "%" PRIu64 " is smaller than the %s %" PRIu64, v, what, floor);
	return 0;
}

/* size is at most the largest disk of blocks of block bytes (of any block size when block is
 * not one): 0, or -EFBIG with the message in err.  Checked before the other rules of size, as
 * the grow rule does: 2^63 - 1 is too large before it is off the sector. */
static int check_size_max(uint64_t size, uint64_t block, const char *fname, char *err, size_t errlen)
{
	char largest[160];

	if (!sfs_is_pow2(block) || block > SFS_BLOCK_MAX)
		block = SFS_BLOCK_MAX;
	if (size <= sfs_geom_size_max(block))
		return 0;
	largest_text(block, largest, sizeof(largest));
	return sfs_key_err(err, errlen, fname, "size", -EFBIG, "%" PRIu64 " is larger than %s", size,
			   largest);
}

int sfs_geom_validate(uint64_t size, uint64_t lss, uint64_t pss, uint64_t block, const char *fname,
		      char *err, size_t errlen)
{
	int rc;

	if ((rc = check_sector(lss, "logical_sector_size", fname, err, errlen)) ||
	    (rc = check_sector(pss, "physical_sector_size", fname, err, errlen)) ||
	    (rc = check_not_below(pss, lss, "physical_sector_size", "logical sector size", fname,
				  err, errlen)))
		return rc;
	if ((rc = check_size_max(size, block, fname, err, errlen)))
		return rc;
	if (size % lss)
		return sfs_key_err(err, errlen, fname, "size", -EINVAL,
			       "%" PRIu64 " is not a multiple of the logical sector size %" PRIu64,
			       size, lss);
	if (!sfs_is_pow2(block))
		return sfs_key_err(err, errlen, fname, "block_size", -EINVAL,
			       "%" PRIu64 " is not a power of two", block);
	if ((rc = check_not_below(block, pss, "block_size", "physical sector size", fname, err,
				  errlen)))
		return rc;
	if (block > SFS_BLOCK_MAX)
		return sfs_key_err(err, errlen, fname, "block_size", -EINVAL,
			       "%" PRIu64 " is larger than the maximum 64M", block);
	return 0;
}

int sfs_sector_parse(const char *s, uint32_t *lss, uint32_t *pss)
{
	for (size_t i = 0; i < NSECTOR; i++)
		if (strcasecmp(s, sector_formats[i].name) == 0) {
			*lss = sector_formats[i].lss;
			*pss = sector_formats[i].pss;
			return 0;
		}
	return -EINVAL;
}

const char *sfs_sector_name(uint32_t lss, uint32_t pss)
{
	for (size_t i = 0; i < NSECTOR; i++)
		if (sector_formats[i].lss == lss && sector_formats[i].pss == pss)
			return sector_formats[i].name;
	return NULL;
}
