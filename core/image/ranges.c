/* SPDX-License-Identifier: MIT */
/*
 * ranges.c - requests on a range of blocks rather than on data: discard,
 * write-zeroes and allocate (fallocate through the mount; a loop device's
 * discard and write-zeroes).  Each takes the range exclusively, then
 * walks its blocks under their stripe locks as io.c's first writes do.
 * Blocks never written read as zeros already and are left alone by a
 * discard or a write-zeroes; of a written block a thin discard frees it
 * whole (its bit cleared, the next flush records it, the backing range
 * punched), anything else zeroes the part in the range; an allocate
 * zeroes and sets the bits of blocks never written.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fail/fail.h"
#include "internal.h"
#include "util/clock.h"

enum range_op { OP_DISCARD, OP_ZERO, OP_ALLOCATE };

/* Apply op to every block touching [off, off+len), each under its stripe lock. */
static int range_op(struct sfs_image *im, uint64_t off, uint64_t len, enum range_op op)
{
	struct sfs_geom g = image_cur_geom(im);
	uint64_t first, last;
	struct sfs_fail *f;
	struct sfs_fail_io fio;
	struct image_hold r;
	int rc;

	if (len == 0)
		return 0;
	rc = image_range_lock(im, &r, off, len, true, false);
	if (rc < 0)
		return rc;
	/* an allocation changes no byte a read sees (sfs_image_allocate checks the power) */
	f = op == OP_ALLOCATE ? NULL : image_fail(im);
	fio = (struct sfs_fail_io){ .op = op == OP_DISCARD ? SFS_FAIL_DISCARD : SFS_FAIL_ZERO, .off = off, .len = len };
	if (f && (rc = sfs_fail_begin(f, &fio)) < 0) {
		image_range_unlock(im, &r);
		return rc;
	}
	sfs_geom_block_span(&g, off, len, &first, &last);
	for (uint64_t b = first; b <= last && rc == 0; b++) {
		pthread_mutex_t *lk = image_stripe_of(im, b);
		uint64_t bs, be, s, e;

		sfs_geom_block_range(&g, b, &bs, &be);
		s = bs < off ? off : bs;
		e = be > off + len ? off + len : be;
		pthread_mutex_lock(lk);
		if (b >= sfs_map_nblocks(im->map)) {
			/* a growing image gave back the room this range was in (trim) */
			pthread_mutex_unlock(lk);
			break;
		}
		if (op == OP_ALLOCATE) {
			if (!sfs_map_test(im->map, b)) {
				rc = image_zero_backing(im, bs, be - bs);
				if (rc == 0)
					sfs_map_set(im->map, b);
			}
		} else if (!sfs_map_test(im->map, b)) {
			/* never written: reads as zeros already */
		} else if (op == OP_DISCARD && im->sc.prov == SFS_PROV_THIN && s == bs && e == be) {
			sfs_map_clear(im->map, b);
			image_mark_dirty(im);
			if (fallocate(im->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)bs, (off_t)(be - bs)) < 0 && errno != EOPNOTSUPP)
				rc = -errno;
		} else {
			rc = image_zero_backing(im, s, e - s);
		}
		pthread_mutex_unlock(lk);
	}
	if (f)
		sfs_fail_end(f, &fio, rc);
	image_range_unlock(im, &r);
	return rc;
}

int image_allocate_range(struct sfs_image *im, uint64_t off, uint64_t len)
{
	return range_op(im, off, len, OP_ALLOCATE);
}

/* Discard and write-zeroes: the I/O rules and their counters, then the blocks. */
static int checked_range_op(struct sfs_image *im, uint64_t off, uint64_t len, enum range_op op)
{
	struct sfs_geom g = image_vis_geom(im);
	struct sfs_stats *st;
	int rc = sfs_geom_check_write(&g, off, len);

	sfs_stats_cell_enter(&im->stats);
	if ((st = image_stats_of(im))) {
		if (rc == -EINVAL)
			sfs_stats_misaligned(st, op == OP_DISCARD ? SFS_OP_DISCARD : SFS_OP_WRITE_ZEROES, off, len);
		else if (rc == -ENOSPC)
			sfs_stats_out_of_range(st, op == OP_DISCARD ? SFS_OP_DISCARD : SFS_OP_WRITE_ZEROES,
					       off, len);
		else if (op == OP_DISCARD)
			sfs_stats_discard(st, len);
		else
			sfs_stats_write_zeroes(st, len);
	}
	sfs_stats_cell_leave(&im->stats);
	return rc < 0 ? rc : range_op(im, off, len, op);
}

int sfs_image_discard(struct sfs_image *im, uint64_t off, uint64_t len)
{
	struct sfs_geom g = image_vis_geom(im);

	/* a growing image: past what its writes reached nothing was written, as past the end of a
	 * file being copied (cp --sparse=always punches its holes there): only the rest is discarded */
	if (sfs_image_growing(im) && sfs_geom_check_write(&g, off, len) == -ENOSPC) {
		if (off >= g.size)
			return 0;
		len = g.size - off;
	}
	return checked_range_op(im, off, len, OP_DISCARD);
}

int sfs_image_write_zeroes(struct sfs_image *im, uint64_t off, uint64_t len)
{
	return checked_range_op(im, off, len, OP_ZERO);
}

int sfs_image_allocate(struct sfs_image *im, uint64_t off, uint64_t len)
{
	struct sfs_geom g = image_vis_geom(im);
	struct sfs_fail *f = image_fail(im);

	if (off > g.size || len > g.size - off)
		return -ENOSPC;
	if (f && strcmp(sfs_fail_power(f), "off") == 0)
		return -EIO;
	return range_op(im, off, len, OP_ALLOCATE);
}
