/* SPDX-License-Identifier: MIT */
/*
 * imgops.c - whole-image operations for tools (see imgops.h).
 *
 * Fill walks the runs of clear bits and hands them, at most 64 MiB at a
 * time, to sfs_image_allocate(), which zeroes each block (offloaded when
 * the image says so) and only then sets its bit: the crash-ordering rule
 * of allocmap.c holds at every step, and progress is reported between
 * chunks.  The map is flushed every 256 MiB, as the core's own eager
 * zeroing does, so an interrupted fill resumes close to where it stopped.
 *
 * Import copies only what SEEK_DATA reports, widened to logical sectors:
 *
 *   raw file:  [data....][hole..........][data..]EOF
 *   disk:      [written ][never written  ][written0]    0 = zero padding
 *
 * Every write goes through sfs_image_write(), so the first write to a
 * block zeroes the rest of it and marks it, exactly as through the mount.
 *
 * Changing the provisioning recorded in the map header has no allocmap
 * call; it is done by writing a complete new map under a temporary name
 * (tmpfile.h) and renaming it over the old one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "imgops.h"
#include "log.h"
#include "names.h"
#include "tmpfile.h"

#define CHUNK_BYTES (64ull << 20)      /* fill: progress granularity */
#define FLUSH_CHUNKS 4                 /* fill: flush the map every 256 MiB */
#define COPY_BYTES (4u << 20)          /* import: one read + write */

uint64_t sfs_blocks_bytes(const struct sfs_geom *g, uint64_t first, uint64_t end)
{
	uint64_t s0, e0, s1, e1;

	if (end <= first)
		return 0;
	sfs_geom_block_range(g, first, &s0, &e0);
	sfs_geom_block_range(g, end - 1, &s1, &e1);
	return e1 - s0;
}

uint64_t sfs_allocated_bytes(const struct sfs_map *m, const struct sfs_geom *g)
{
	uint64_t nb = sfs_map_nblocks(m), bytes = 0;

	for (uint64_t b = sfs_map_next_set(m, 0); b < nb;) {
		uint64_t e = sfs_map_next_clear(m, b);

		bytes += sfs_blocks_bytes(g, b, e);
		b = e < nb ? sfs_map_next_set(m, e) : nb;
	}
	return bytes;
}

int sfs_image_fill(struct sfs_image *im, sfs_progress_fn fn, void *ctx)
{
	struct sfs_map *m = sfs_image_map(im);
	struct sfs_geom g = sfs_image_geom(im);
	uint64_t nb = sfs_map_nblocks(m), chunk = CHUNK_BYTES / g.block_size;
	uint64_t total = sfs_blocks_bytes(&g, 0, nb) - sfs_allocated_bytes(m, &g), done = 0;
	unsigned chunks = 0;
	int rc;

	if (chunk == 0)
		chunk = 1;
	if (fn && fn(ctx, 0, total))
		return -ECANCELED;
	for (uint64_t b = sfs_map_next_clear(m, 0); b < nb;) {
		uint64_t e = sfs_map_next_set(m, b), s0, e0, len;

		if (e - b > chunk)
			e = b + chunk;
		sfs_geom_block_range(&g, b, &s0, &e0);
		len = sfs_blocks_bytes(&g, b, e);
		rc = sfs_image_allocate(im, s0, len);
		if (rc == 0 && ++chunks % FLUSH_CHUNKS == 0)
			rc = sfs_image_flush(im);      /* a crash loses at most 256 MiB of progress */
		if (rc < 0)
			return rc;
		done += len;
		if (fn && fn(ctx, done, total)) {
			sfs_image_flush(im);
			return -ECANCELED;
		}
		b = e < nb ? sfs_map_next_clear(m, e) : nb;
	}
	return sfs_image_flush(im);
}

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

int sfs_image_set_provisioning(struct sfs_image *im, int state_fd, enum sfs_prov prov,
			       uint32_t flags, char *err, size_t errlen)
{
	struct sfs_map *old = sfs_image_map(im), *nm = NULL;
	struct sfs_map_info info = *sfs_map_info(old);
	const char *name = sfs_image_name(im);
	char final[300], tmp[SFS_TMP_NAME_MAX];
	uint64_t nb;
	int rc;

	info.geom = sfs_image_geom(im);
	info.prov = prov;
	info.flags = flags;
	sfs_map_name(final, sizeof(final), name);
	rc = sfs_image_flush(im);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot flush before rewriting the map: %s", name,
			       strerror(-rc));
	rc = sfs_map_create_tmp(state_fd, &info, tmp, sizeof(tmp), &nm);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot write a new map: %s", name, strerror(-rc));
	nb = sfs_map_nblocks(old);
	for (uint64_t b = sfs_map_next_set(old, 0); b < nb;) {
		uint64_t e = sfs_map_next_clear(old, b);

		sfs_map_set_range(nm, b, e);
		b = e < nb ? sfs_map_next_set(old, e) : nb;
	}
	rc = sfs_map_flush(nm, sfs_image_fd(im));
	if (rc == 0)
		rc = sfs_tmp_install(sfs_map_fd(nm), state_fd, tmp, state_fd, final);
	else
		unlinkat(state_fd, tmp, 0);
	sfs_map_close(nm);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot replace the map: %s", name, strerror(-rc));
	return 0;
}
