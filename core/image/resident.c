/* SPDX-License-Identifier: MIT */
/*
 * resident.c - an open image's resident part: its backing file, the
 * O_DIRECT twin, the map with its bitmap, the stripe locks and the range
 * lock, held while the image is open (open.c) and, with a descriptor
 * cache (fdcache.h), as the image's slot: pinned while used, idle in the
 * cache after, closed when the cache needs room, and opened again by the
 * next pin:
 *
 *   reopen: STORE/NAME by name (O_NOFOLLOW, O_NONBLOCK), which must be the
 *           regular file of the same identity as at the first open
 *           (device, inode and birth time or generation: fileid.h, so
 *           not a new file that took a freed inode number), else the
 *           image's file was removed or replaced behind our back (-ENOENT: the store's next lookup drops the name);
 *           its O_DIRECT twin through /proc/self/fd (same inode, checked);
 *           NAME.map, checked again, which must be the same file and say
 *           what it said when it was closed (else -EUCLEAN, logged); an
 *           error met on the way (a failed fstat, no descriptor left) is
 *           returned as it is, never as one of those two verdicts;
 *   close:  when anything was written since the last flush, the map is
 *           flushed (data first); a flush that fails keeps the image
 *           open, so no bit is ever lost by an eviction; then the map's
 *           header and count are kept in memory for stat and the stats
 *           files, and the bitmap, stripe locks and range lock are freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileid.h"
#include "internal.h"

#define STRIPES_LEN (IMAGE_NSTRIPES * sizeof(pthread_mutex_t))

/* Stripe locks and range lock: 0 or -ENOMEM.  The stripe locks (10 KiB) are a mapping of
 * their own, so that closing an idle image gives all of it back: in the heap, the small
 * allocations made meanwhile (libfuse's nodes) kept a page of each freed block. */
int image_locks_alloc(struct sfs_image *im)
{
	void *p = mmap(NULL, STRIPES_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	im->stripe = p == MAP_FAILED ? NULL : p;
	im->rl = calloc(1, sizeof(*im->rl));
	if (!im->stripe || !im->rl || sfs_rangelock_init(im->rl) < 0) {
		if (im->stripe)
			munmap(im->stripe, STRIPES_LEN);
		free(im->rl);
		im->stripe = NULL;
		im->rl = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < IMAGE_NSTRIPES; i++)
		pthread_mutex_init(&im->stripe[i], NULL);
	return 0;
}

/* Close and free the resident part (whatever of it is there), without flushing. */
void image_res_drop(struct sfs_image *im)
{
	if (im->map)
		sfs_map_close(im->map);
	for (unsigned i = 0; i < im->nretired; i++)
		sfs_map_close(im->retired[i]);
	im->map = NULL;
	im->nretired = 0;
	if (im->fd >= 0)
		close(im->fd);
	if (im->dfd >= 0)
		close(im->dfd);
	im->fd = im->dfd = -1;
	if (im->stripe) {
		for (int i = 0; i < IMAGE_NSTRIPES; i++)
			pthread_mutex_destroy(&im->stripe[i]);
		munmap(im->stripe, STRIPES_LEN);
		im->stripe = NULL;
	}
	if (im->rl) {
		sfs_rangelock_destroy(im->rl);
		free(im->rl);
		im->rl = NULL;
	}
}

/* Open the O_DIRECT descriptor when the backing filesystem supports it:
 * reopen the same file through /proc (never by name, which could have been
 * replaced) and take its alignment from statx, 4096 where statx is silent.
 * 0 (with or without it), or -errno: -EMFILE/-ENFILE (out of descriptors),
 * or what a failed fstat of either descriptor said. */
int image_open_direct(struct sfs_image *im)
{
	struct statx stx;
	struct stat a, b;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", im->fd);
	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : 0;
	if (fstat(im->fd, &a) < 0 || fstat(fd, &b) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return 0;
	}
	im->dio_mem = im->dio_off = 4096;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)) {
		if (stx.stx_dio_mem_align == 0 || stx.stx_dio_offset_align == 0) {
			close(fd);           /* the filesystem says: no direct I/O on this file */
			return 0;
		}
		im->dio_mem = stx.stx_dio_mem_align;
		im->dio_off = stx.stx_dio_offset_align;
	}
	if (im->dio_mem > IMAGE_BOUNCE_ALIGN || IMAGE_BOUNCE_LEN % im->dio_off) {
		close(fd);
		return 0;
	}
	im->dfd = fd;
	return 0;
}

/* Descriptors the resident part holds now. */
unsigned image_res_nfds(const struct sfs_image *im)
{
	return (im->fd >= 0) + (im->dfd >= 0) + (im->map != NULL);
}

/* Remember what identifies the map file and what its header says (resident). */
void image_note_map(struct sfs_image *im)
{
	im->mid = *sfs_map_fileid(im->map);
	im->mi = *sfs_map_info(im->map);
	im->map_count = sfs_map_count(im->map);
	im->map_nblocks = sfs_map_nblocks(im->map);
}

/* Requests take a range when a transfer can go through the page cache (see io.c). */
void image_note_direct(struct sfs_image *im)
{
	im->direct = im->dfd >= 0;
	if (im->dfd < 0 || im->geom.lss % im->dio_off != 0)
		__atomic_store_n(&im->ranged, true, __ATOMIC_SEQ_CST);
}

static struct sfs_image *image_of_slot(struct sfs_fdslot *s)
{
	return (struct sfs_image *)(void *)((char *)s - offsetof(struct sfs_image, slot));
}

/* The slot's open: the resident part again, checked to be the same files.  Descriptors
 * opened, or -errno with nothing left open. */
int image_slot_open(struct sfs_fdslot *s)
{
	struct sfs_image *im = image_of_slot(s);
	char mapname[300], err[512];
	struct sfs_map *m = NULL;
	struct sfs_fileid bid;
	struct stat st;
	int rc;

	im->fd = openat(im->store_fd, im->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (im->fd < 0)
		return errno == ENOENT || errno == ELOOP ? -ENOENT : -errno;
	if ((rc = sfs_fileid_fd(im->fd, &bid, &st)) < 0)
		goto fail;
	/* the same file, not one that took its inode number since: its birth time says */
	if (!S_ISREG(st.st_mode) || !sfs_fileid_same(&bid, &im->bid, true)) {
		rc = -ENOENT;                /* replaced behind our back: not the image's file */
		goto fail;
	}
	if (!(im->flags & SFS_IMAGE_BUFFERED) && (rc = image_open_direct(im)) < 0)
		goto fail;
	sfs_map_name(mapname, sizeof(mapname), im->name);
	rc = sfs_map_open(im->state_fd, mapname, 0, &im->log, &m, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EMFILE && rc != -ENFILE && rc != -ENOMEM)
			sfs_logf(&im->log, SFS_LOG_ERR, "%s (image not opened)", err);
		if (rc == -ENOENT)
			rc = -EUCLEAN;
		goto fail;
	}
	im->map = m;
	if (!sfs_fileid_same(sfs_map_fileid(m), &im->mid, true) ||
	    sfs_map_info(m)->geom.size != im->mi.geom.size || sfs_map_info(m)->geom.lss != im->mi.geom.lss ||
	    sfs_map_info(m)->geom.pss != im->mi.geom.pss ||
	    sfs_map_info(m)->geom.block_size != im->mi.geom.block_size || sfs_map_info(m)->prov != im->mi.prov ||
	    sfs_map_info(m)->flags != im->mi.flags || sfs_map_count(m) != im->map_count) {
		sfs_logf(&im->log, SFS_LOG_ERR, "%s: changed behind the daemon's back while %s was not open "
			 "(another file, or other contents); image not opened", mapname, im->name);
		rc = -EUCLEAN;
		goto fail;
	}
	if (image_locks_alloc(im) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	image_note_direct(im);
	return (int)image_res_nfds(im);

fail:
	image_res_drop(im);
	return rc;
}

/* The slot's close: flush what was written, keep what the map says, drop the rest. */
int image_slot_close(struct sfs_fdslot *s, bool force)
{
	struct sfs_image *im = image_of_slot(s);
	int rc = 0;

	if (__atomic_load_n(&im->dirty, __ATOMIC_ACQUIRE) || sfs_map_dirty(im->map)) {
		__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
		rc = sfs_map_flush(im->map, im->fd);
		if (rc < 0) {
			__atomic_store_n(&im->dirty, 1, __ATOMIC_RELEASE);
			if (!force)
				return rc;
		}
	}
	image_note_map(im);
	image_res_drop(im);
	return rc;
}

