/* SPDX-License-Identifier: MIT */
/*
 * import.c - a raw file copied into an image, sparse-aware (image.h,
 * sfs_image_import_raw).
 *
 * Only what SEEK_DATA reports is copied, widened to logical sectors:
 *
 *   raw file:  [data....][hole..........][data..]EOF
 *   disk:      [written ][never written  ][written0]    0 = zero padding
 *
 * Every write goes through sfs_image_write(), so the first write to a
 * block zeroes the rest of it and marks it, exactly as through the mount.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"
#include "image.h"

#define COPY_BYTES (4u << 20)          /* one read + write */

/* Next data extent [*data, *hole) of fd at or after pos, clipped to end; false when none. */
static bool next_extent(int fd, uint64_t pos, uint64_t end, bool *no_seek_data,
			uint64_t *data, uint64_t *hole)
{
	off_t d, h;

	if (pos >= end)
		return false;
	if (*no_seek_data) {
		*data = pos;
		*hole = end;
		return true;
	}
	d = lseek(fd, (off_t)pos, SEEK_DATA);
	if (d < 0) {
		if (errno != EINVAL && errno != EOPNOTSUPP)
			return false;          /* ENXIO: no data after pos */
		*no_seek_data = true;      /* filesystem without SEEK_DATA: all data */
		return next_extent(fd, pos, end, no_seek_data, data, hole);
	}
	if ((uint64_t)d >= end)
		return false;
	h = lseek(fd, d, SEEK_HOLE);
	*data = (uint64_t)d;
	*hole = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
	return true;
}

int sfs_image_import_raw(struct sfs_image *im, int src_fd, sfs_progress_fn fn, void *ctx)
{
	struct sfs_geom g = sfs_image_geom(im);
	uint64_t fsize, total = 0, done = 0, pos, data, hole, wrote_to = 0;
	bool no_seek = false;
	struct stat st;
	char *buf;
	int rc = 0;

	if (fstat(src_fd, &st) < 0)
		return -errno;
	fsize = (uint64_t)st.st_size;
	if (fsize > g.size || (fsize + g.lss - 1) / g.lss * g.lss > g.size)
		return -EFBIG;
	for (pos = 0; next_extent(src_fd, pos, fsize, &no_seek, &data, &hole); pos = hole)
		total += hole - data;
	if (fn && fn(ctx, 0, total))
		return -ECANCELED;
	buf = malloc(COPY_BYTES);
	if (!buf)
		return -ENOMEM;
	for (pos = 0; rc == 0 && next_extent(src_fd, pos, fsize, &no_seek, &data, &hole); pos = hole) {
		/* Widen to whole sectors; a sector shared with the previous extent is written once. */
		uint64_t s = data / g.lss * g.lss, e = (hole + g.lss - 1) / g.lss * g.lss;

		if (s < wrote_to)
			s = wrote_to;
		while (rc == 0 && s < e) {
			size_t n = e - s > COPY_BYTES ? COPY_BYTES : (size_t)(e - s);
			ssize_t w;

			rc = sfs_pread_zerofill(src_fd, buf, n, s);
			if (rc == 0) {
				w = sfs_image_write(im, buf, n, s);
				rc = w < 0 ? (int)w : 0;
			}
			s += n;
			wrote_to = s;
			done += n;
			if (rc == 0 && fn && fn(ctx, done < total ? done : total, total))
				rc = -ECANCELED;
		}
	}
	free(buf);
	if (rc == 0)
		return sfs_image_flush(im);
	sfs_image_flush(im);
	return rc;
}
