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
#include <errno.h>

#include "geometry.h"

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
