/* SPDX-License-Identifier: MIT */
/*
 * size.c - the size of an image (image.h): grow in three steps
 * (prepare, commit, abort; grow.c journals them), trim of the room a
 * growing image reserved, the capacity and the size it shows, and a new
 * format for an image that holds nothing yet.
 *
 * A grow writes only past the old end, before any request can reach
 * there, and commits its new, clear blocks under every stripe lock, so it
 * takes no range lock (io.c); an eagerzeroedthick image is zeroed
 * again after it (zero.c).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"
#include "internal.h"
#include "stripes.h"
#include "util/units.h"

/* Under every stripe lock: the image's size is now size, and so is the size it shows unless it
 * is growing (a growing image shows what its writes reached). */
static void set_size_locked(struct sfs_image *im, uint64_t size, bool growing)
{
	__atomic_store_n(&im->geom.size, size, __ATOMIC_RELEASE);
	im->sc.size = size;
	if (!growing)
		__atomic_store_n(&im->vsize, size, __ATOMIC_RELEASE);
}

/* The end of a change of size made under every stripe lock with result rc: the locks released,
 * then the failure layer told of the new size when there is one.  rc. */
static int resized(struct sfs_image *im, int rc)
{
	image_unlock_stripes(im);
	if (rc == 0)
		image_fail_resize(im);
	return rc;
}

int sfs_image_grow_prepare(struct sfs_image *im, uint64_t new_size)
{
	struct sfs_geom g = image_cur_geom(im);
	uint64_t old = g.size;
	struct stat st;
	int rc = sfs_geom_grow_check(&g, new_size, NULL, 0);

	if (rc)
		return rc < 0 ? rc : 0;
	if (fstat(im->fd, &st) < 0)
		return -errno;
	/* the backing file first: a size past what its filesystem allows (EFBIG) costs no map pages */
	if ((uint64_t)st.st_size < new_size && ftruncate(im->fd, (off_t)new_size) < 0)
		rc = -errno;
	if (rc == 0)
		rc = sfs_map_grow_prepare(im->map, new_size);
	/* The old last block may be partial and allocated: what grows into it must read zero.
	 * Nothing past the old end is read or written until the commit, so no lock is needed. */
	if (rc == 0 && old % g.block_size && sfs_map_test(im->map, sfs_geom_nblocks(&g) - 1)) {
		uint64_t tail_end = (old / g.block_size + 1) * g.block_size;

		rc = image_zero_backing(im, old, (tail_end < new_size ? tail_end : new_size) - old);
	}
	if (rc == 0 && im->sc.prov != SFS_PROV_THIN &&
	    fallocate(im->fd, 0, (off_t)old, (off_t)(new_size - old)) < 0 && errno != EOPNOTSUPP)
		rc = -errno;
	if (rc == 0 && fdatasync(im->fd) < 0)
		rc = -errno;
	if (rc < 0)
		sfs_image_grow_abort(im, (uint64_t)st.st_size);
	return rc;
}

int sfs_image_grow_commit(struct sfs_image *im, uint64_t new_size)
{
	struct sfs_geom g = image_cur_geom(im);
	uint32_t flags = sfs_map_info(im->map)->flags;
	int rc = sfs_geom_grow_check(&g, new_size, NULL, 0);

	if (rc)
		return rc < 0 ? rc : 0;
	/* An eagerzeroedthick image is not all zeroed again until its new blocks are. */
	if (im->sc.prov == SFS_PROV_EAGERZEROEDTHICK)
		flags &= ~SFS_MAP_F_ZEROED;
	image_lock_stripes(im);
	rc = sfs_map_grow_commit(im->map, new_size, flags);
	/* a growing image shows what its writes reached; the new room is ahead of them */
	if (rc == 0)
		set_size_locked(im, new_size, __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE));
	return resized(im, rc);
}

int sfs_image_grow_abort(struct sfs_image *im, uint64_t old_len)
{
	struct stat st;
	int rc = sfs_map_grow_abort(im->map);

	if (fstat(im->fd, &st) < 0)
		return rc ? rc : -errno;
	if ((uint64_t)st.st_size > old_len) {
		/* the extension goes, and with it any space reserved for it */
		if (ftruncate(im->fd, (off_t)old_len) < 0 || fsync(im->fd) < 0)
			return rc ? rc : -errno;
	}
	return rc;
}

int sfs_image_grow(struct sfs_image *im, uint64_t new_size)
{
	struct stat st;
	int rc;

	if (fstat(im->fd, &st) < 0)
		return -errno;
	rc = sfs_image_grow_prepare(im, new_size);
	if (rc == 0) {
		rc = sfs_image_grow_commit(im, new_size);
		if (rc < 0)
			sfs_image_grow_abort(im, (uint64_t)st.st_size);
	}
	if (rc == 0)
		rc = sfs_image_zero_start(im);
	if (rc == 0)
		rc = sfs_map_flush(im->map, im->fd);
	return rc;
}

uint64_t sfs_image_capacity(const struct sfs_image *im)
{
	return __atomic_load_n(&im->geom.size, __ATOMIC_ACQUIRE);
}

void sfs_image_set_growing(struct sfs_image *im, bool growing)
{
	__atomic_store_n(&im->growing, growing, __ATOMIC_RELEASE);
	/* a disk of fixed size shows all it has (the room ahead, when it could not be given back) */
	if (!growing)
		__atomic_store_n(&im->vsize, sfs_image_capacity(im), __ATOMIC_RELEASE);
}

int sfs_image_show_size(struct sfs_image *im, uint64_t size)
{
	uint64_t cap = sfs_image_capacity(im);

	if (!sfs_image_growing(im) || size % im->geom.lss || size > cap)
		return -EINVAL;
	image_extend_visible(im, size);
	return 0;
}

/* The most data a shrink reads to see that what it drops is only zeros. */
#define SHRINK_SCAN_MAX (64ull << 20)

/* A disk shrinking to cap (stripe locks held): the allocated blocks wholly past cap must hold
 * nothing but zeros (as qemu-img's first block does); they are then unmarked.  0, or -EBUSY
 * when one holds data (or there is too much to look at), or -errno. */
static int forget_zero_blocks_past(struct sfs_image *im, uint64_t cap)
{
	struct sfs_geom g = image_cur_geom(im);
	uint64_t nb = sfs_map_nblocks(im->map), first = (cap + g.block_size - 1) / g.block_size, seen = 0;
	char *buf;
	int rc = 0;

	if (sfs_map_next_set(im->map, first) >= nb)
		return 0;
	buf = malloc(g.block_size);
	if (!buf)
		return -ENOMEM;
	for (uint64_t b = sfs_map_next_set(im->map, first); b < nb && rc == 0; b = sfs_map_next_set(im->map, b + 1)) {
		uint64_t bs, be;

		sfs_geom_block_range(&g, b, &bs, &be);
		seen += be - bs;
		if (seen > SHRINK_SCAN_MAX) {
			rc = -EBUSY;
			break;
		}
		rc = sfs_pread_zerofill(im->fd, buf, be - bs, bs);
		for (uint64_t i = 0; rc == 0 && i < be - bs; i++)
			if (buf[i])
				rc = -EBUSY;
	}
	free(buf);
	for (uint64_t b = sfs_map_next_set(im->map, first); rc == 0 && b < nb; b = sfs_map_next_set(im->map, b + 1))
		sfs_map_clear(im->map, b);
	return rc;
}

int sfs_image_trim_commit(struct sfs_image *im, uint64_t cap)
{
	bool growing = sfs_image_growing(im);
	int rc;

	if (cap % im->geom.lss || cap > sfs_image_capacity(im) ||
	    (growing && cap < __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE)))
		return -EINVAL;
	if (cap == sfs_image_capacity(im))
		return 0;
	image_lock_stripes(im);
	/* under every stripe lock: no first write can set a bit past cap now */
	rc = growing && cap < __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE) ? -EAGAIN : 0;
	if (rc == 0 && !growing)
		rc = forget_zero_blocks_past(im, cap);
	if (rc == 0)
		rc = sfs_map_shrink(im->map, cap);
	if (rc == 0)
		set_size_locked(im, cap, growing);
	return resized(im, rc);
}

int sfs_image_reformat_check(const struct sfs_image *im, const struct sfs_sidecar *sc)
{
	if (sfs_sidecar_validate(sc, im->name, NULL, 0) < 0 || sc->size)
		return -EINVAL;
	if (sfs_image_capacity(im) || sfs_map_count(im->map))
		return -EBUSY;
	if (im->nretired == sizeof(im->retired) / sizeof(im->retired[0]))
		return -EBUSY;
	if (image_fail(im))          /* its failure state has the old sector format */
		return -EBUSY;
	return 0;
}

void sfs_image_reformat_map_info(const struct sfs_image *im, const struct sfs_sidecar *sc,
				 struct sfs_map_info *mi, struct sfs_map_ident *ident)
{
	*mi = (struct sfs_map_info){ { 0, sc->lss, sc->pss, sc->block_size }, sc->prov, 0 };
	*ident = (struct sfs_map_ident){ .present = true, .backing = im->bid };
	memcpy(ident->id, im->id, sizeof(ident->id));
	snprintf(ident->name, sizeof(ident->name), "%.*s", SFS_NAME_MAX, im->name);
}

void sfs_image_reformat(struct sfs_image *im, struct sfs_map *nm, const struct sfs_sidecar *sc)
{
	assert(sfs_image_reformat_check(im, sc) == 0);
	image_lock_stripes(im);
	/* the old map stays readable until close: a lock-free reader may hold it */
	im->retired[im->nretired++] = im->map;
	__atomic_store_n(&im->map, nm, __ATOMIC_RELEASE);
	im->sc = *sc;
	im->geom = sfs_map_info(nm)->geom;
	__atomic_store_n(&im->vsize, 0, __ATOMIC_RELEASE);
	if (im->dfd < 0 || im->geom.lss % im->dio_off != 0)
		__atomic_store_n(&im->ranged, true, __ATOMIC_SEQ_CST);
	image_unlock_stripes(im);
}

int sfs_image_trim_backing(struct sfs_image *im)
{
	struct stat st;
	uint64_t cap = sfs_image_capacity(im);

	if (fstat(im->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > cap && (ftruncate(im->fd, (off_t)cap) < 0 || fsync(im->fd) < 0))
		return -errno;
	return 0;
}
