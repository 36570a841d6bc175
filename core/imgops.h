/* SPDX-License-Identifier: MIT */
/*
 * imgops.h - whole-image operations for tools: fill (eager zeroing with
 * progress), sparse-aware import of a raw file, and rewriting the
 * provisioning recorded in the allocation map.
 *
 * These are built only on the public image and allocmap interfaces, so
 * every byte still goes through the image's I/O rules (alignment, lazy
 * zeroing, crash ordering of the map).  Long operations report progress
 * through a callback that can also cancel them; a cancelled operation
 * leaves a valid image (what was done is flushed).
 *
 * All functions return 0 or a negative errno.
 */
#ifndef SFS_IMGOPS_H
#define SFS_IMGOPS_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"

/* Progress of a long operation: bytes done of total.  A non-zero return
 * cancels the operation, which then returns -ECANCELED. */
typedef int (*sfs_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Bytes covered by blocks [first, end) of g (the last block may be partial). */
uint64_t sfs_blocks_bytes(const struct sfs_geom *g, uint64_t first, uint64_t end);

/* Bytes of the disk held by allocated blocks. */
uint64_t sfs_allocated_bytes(const struct sfs_map *m, const struct sfs_geom *g);

/* Allocate (zero and mark) every block not yet allocated, in chunks of at
 * most 64 MiB, calling fn (may be NULL) after each; then flush.  This is
 * eager zeroing with progress.  0, -ECANCELED (done part flushed) or -errno. */
int sfs_image_fill(struct sfs_image *im, sfs_progress_fn fn, void *ctx);

/* Copy the data extents of the raw file src_fd (SEEK_DATA/SEEK_HOLE) into
 * the image at the same offsets, through sfs_image_write: extents are
 * widened to whole logical sectors, bytes past the end of src read as
 * zeros, holes are not written and stay unallocated.  The file must fit
 * in the disk (-EFBIG otherwise).  A filesystem without SEEK_DATA is
 * copied whole.  Then flush.  0, -ECANCELED or -errno. */
int sfs_image_import_raw(struct sfs_image *im, int src_fd, sfs_progress_fn fn, void *ctx);

/* Record another provisioning mode and flags in the map header of im,
 * whose map lives in state_fd as NAME.map.  allocmap.h has no call to
 * change the provisioning, so this flushes the image, writes a new map
 * with the same bits and the new header under a temporary name, makes it
 * durable and renames it over NAME.map (a crash leaves the old map or the new
 * one, both valid).  The image's open map then describes a replaced
 * file: the caller must not write to im afterwards, only close it.
 * 0 or -errno with err filled. */
int sfs_image_set_provisioning(struct sfs_image *im, int state_fd, enum sfs_prov prov,
			       uint32_t flags, char *err, size_t errlen);

#endif
