/* SPDX-License-Identifier: MIT */
/*
 * fast.c - the plans of the fast path (fast.h): a read or an
 * overwrite that is one backing transfer, or a flush that is one
 * fdatasync of the backing file, which the caller does itself.
 *
 * A plan walks the same rules as io.c's do_read and do_write, in the
 * same order (alignment, then range, each refusal counted), and stops at
 * the first thing that is not one plain transfer: that request is SLOW
 * and nothing of it has been counted, so the blocking path can take it
 * from the start.  An ISSUE is counted among the requests in flight
 * without a range from the plan to fast_end, as the blocking calls count
 * theirs for the whole call.  A flush is sfs_image_flush when the map has
 * nothing to write: the data's fdatasync alone (sfs_map_flush writes no
 * page and syncs no map then).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "util/clock.h"
#include "internal.h"
#include "fast.h"

/* What image.c would do that one plan cannot (a profile's wait, a growing size), or the page
 * cache's merging for a handle without O_DIRECT. */
static bool slow_image(const struct sfs_image *im, size_t len, uint64_t off, bool direct)
{
	if (!direct && (off % im->geom.lss || len % im->geom.lss))
		return true;
	return im->model || image_fail(im) || __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&im->ranged, __ATOMIC_ACQUIRE);
}

/* A plan ends: a request that is not ISSUE leaves the stats cell it entered (an ISSUE leaves
 * it in sfs_image_fast_end). */
static enum sfs_fast planned(struct sfs_image *im, enum sfs_fast r)
{
	if (r != SFS_FAST_ISSUE)
		sfs_stats_cell_leave(&im->stats);
	return r;
}

/* Are the blocks of [off, off+len) all allocated (1), none (0), or some (-1)? */
static int span_state(struct sfs_image *im, const struct sfs_geom *g, uint64_t off, uint64_t len)
{
	uint64_t first, last;
	bool set;

	sfs_geom_block_span(g, off, len, &first, &last);
	set = sfs_map_test(im->map, first);
	for (uint64_t b = first + 1; b <= last; b++)
		if (sfs_map_test(im->map, b) != set)
			return -1;
	return set;
}

/* Can the O_DIRECT descriptor take len bytes at off from or into buf as they are? */
static bool direct_ok(const struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	return im->dfd >= 0 && off % im->dio_off == 0 && len % im->dio_off == 0 &&
	       (uintptr_t)buf % im->dio_mem == 0;
}

static enum sfs_fast plan_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, struct sfs_fast_io *io,
			       ssize_t *res)
{
	struct sfs_geom g = image_vis_geom(im);
	struct sfs_stats *st;
	uint64_t t0 = im->stats.on ? sfs_now_ns() : 0;
	size_t n;
	int rc, state;

	rc = sfs_geom_check_read(&g, off, len, &n);
	if (rc < 0 || n == 0) {
		if (rc < 0 && (st = image_stats_of(im)))
			sfs_stats_misaligned(st, SFS_OP_READ, off, len);
		*res = rc;
		return SFS_FAST_DONE;
	}
	if (!image_count_unranged(im))
		return SFS_FAST_SLOW;
	state = span_state(im, &g, off, n);
	if (state == 0) {
		/* never written: zeros, as do_read gives them, without touching the backing file */
		memset(buf, 0, n);
		image_uncount_unranged(im);
		if ((st = image_stats_of(im)))
			sfs_stats_read(st, off, n, sfs_now_ns() - t0);
		*res = (ssize_t)n;
		return SFS_FAST_DONE;
	}
	if (state < 0 || !direct_ok(im, buf, n, off)) {
		image_uncount_unranged(im);
		return SFS_FAST_SLOW;
	}
	*io = (struct sfs_fast_io){ .fd = im->dfd, .off = off, .len = n, .op = SFS_FAST_READ, .im = im, .t0 = t0 };
	return SFS_FAST_ISSUE;
}

static enum sfs_fast plan_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off,
				struct sfs_fast_io *io, ssize_t *res)
{
	struct sfs_geom g = image_vis_geom(im);
	struct sfs_stats *st;
	uint64_t t0 = im->stats.on ? sfs_now_ns() : 0;
	int rc;

	rc = sfs_geom_check_write(&g, off, len);
	if (rc < 0 || len == 0) {
		if (rc < 0 && (st = image_stats_of(im))) {
			if (rc == -EINVAL)
				sfs_stats_misaligned(st, SFS_OP_WRITE, off, len);
			else
				sfs_stats_out_of_range(st, SFS_OP_WRITE, off, len);
		}
		*res = rc;
		return SFS_FAST_DONE;
	}
	if (!image_count_unranged(im))
		return SFS_FAST_SLOW;
	if (span_state(im, &g, off, len) != 1 || !direct_ok(im, buf, len, off)) {
		image_uncount_unranged(im);
		return SFS_FAST_SLOW;
	}
	image_mark_dirty(im);
	*io = (struct sfs_fast_io){ .fd = im->dfd, .off = off, .len = len, .op = SFS_FAST_WRITE, .im = im,
				    .t0 = t0, .rmw = sfs_geom_is_rmw(&g, off, len) };
	return SFS_FAST_ISSUE;
}

/* A request may take the fast path: it enters the image's stats cell (planned leaves it). */
static bool enter(struct sfs_image *im, size_t len, uint64_t off, bool direct)
{
	if (slow_image(im, len, off, direct))
		return false;
	sfs_stats_cell_enter(&im->stats);
	return true;
}

enum sfs_fast sfs_image_fast_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, bool direct,
				  struct sfs_fast_io *io, ssize_t *res)
{
	assert(im && io && res && im->fd >= 0);   /* pinned: its files are open */
	return enter(im, len, off, direct) ? planned(im, plan_read(im, buf, len, off, io, res)) : SFS_FAST_SLOW;
}

enum sfs_fast sfs_image_fast_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off, bool direct,
				   struct sfs_fast_io *io, ssize_t *res)
{
	assert(im && io && res && im->fd >= 0);
	return enter(im, len, off, direct) ? planned(im, plan_write(im, buf, len, off, io, res)) : SFS_FAST_SLOW;
}

enum sfs_fast sfs_image_fast_flush(struct sfs_image *im, struct sfs_fast_io *io)
{
	assert(im && io && im->fd >= 0);
	if (im->model || image_fail(im) || __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&im->ranged, __ATOMIC_ACQUIRE) || !sfs_map_flushed(im->map))
		return SFS_FAST_SLOW;
	/* cleared first, as sfs_image_flush does: a write meanwhile marks it for the next flush */
	__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
	sfs_stats_cell_enter(&im->stats);
	*io = (struct sfs_fast_io){ .fd = im->fd, .op = SFS_FAST_SYNC, .im = im,
				    .t0 = im->stats.on ? sfs_now_ns() : 0 };
	return SFS_FAST_ISSUE;
}

/* How a transfer that ended with done completes its request, the stats cell still entered. */
static enum sfs_fast end_transfer(struct sfs_image *im, const struct sfs_fast_io *io, ssize_t done, ssize_t *res)
{
	struct sfs_stats *st;
	uint64_t lat;

	if (io->op == SFS_FAST_SYNC) {
		if (done != 0) {
			image_mark_dirty(im);     /* the blocking flush redoes it */
			return SFS_FAST_SLOW;
		}
	} else {
		image_uncount_unranged(im);
		if (done < 0 || (size_t)done != io->len)
			return SFS_FAST_SLOW;
	}
	if ((st = image_stats_of(im))) {
		lat = sfs_now_ns() - io->t0;
		if (io->op == SFS_FAST_SYNC)
			sfs_stats_flush(st, lat);
		else if (io->op == SFS_FAST_WRITE)
			sfs_stats_write(st, io->off, io->len, lat, false, io->rmw);
		else
			sfs_stats_read(st, io->off, io->len, lat);
	}
	*res = (ssize_t)io->len;
	return SFS_FAST_DONE;
}

enum sfs_fast sfs_image_fast_end(struct sfs_fast_io *io, ssize_t done, ssize_t *res)
{
	struct sfs_image *im = io->im;
	enum sfs_fast r;

	assert(im && res);
	io->im = NULL;
	r = end_transfer(im, io, done, res);
	sfs_stats_cell_leave(&im->stats);
	return r;
}
