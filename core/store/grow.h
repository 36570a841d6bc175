/* SPDX-License-Identifier: MIT */
/*
 * grow.h - growing an image all or nothing, through a journal.
 *
 * A grow changes three files: the backing file (longer, space reserved
 * when thick), the map (more bitmap pages, a new header) and the sidecar
 * (a new size).  sfs_grow() orders them around a journal,
 * STORE/.sectorfs/NAME.grow, so that on any failure everything is as
 * before, and after a crash the next open of the store finishes the grow
 * or undoes it (recgrow.c), whichever side of the commit it stopped on.
 */
#ifndef SFS_GROW_H
#define SFS_GROW_H

#include <stdbool.h>
#include <stdint.h>

#include "image/image.h"
#include "util/log.h"
#include "contract/names.h"

/* Grow im (served as STORE/NAME, store_fd/state_fd its directories) to new_size, all or
 * nothing; with save_sidecar also rewrite NAME.json with the new size.  The caller keeps other
 * changes to the image's files out (store lock).  0; -EINVAL for a bad size, -EFBIG past
 * sfs_geom_size_max (both before the journal); -errno with
 * disk size, backing file, reservation, map and sidecar as before.  An eagerzeroedthick image
 * is then zeroed (sfs_image_zero_start: in the background when opened SFS_IMAGE_ZERO_BG); an
 * error there (-errno) leaves it grown, zeroing resumed at the next open. */
int sfs_grow(int store_fd, int state_fd, struct sfs_image *im, uint64_t new_size, bool save_sidecar,
	     const struct sfs_log *log);

/* Shrink im's capacity to size, which no written block lies past: the room a growing image
 * reserved ahead of its writes (size: what it shows), or a disk that holds no data yet (then
 * it shows size too).  grow.c draws the order (the journal is NAME.grow too): as before on a
 * failure up to the commit, finished at the next start after it.  0 (also when size is the
 * capacity); -EAGAIN when a write went past size meanwhile; -EBUSY when a block past size is
 * allocated; -EINVAL; or -errno. */
int sfs_trim(int store_fd, int state_fd, struct sfs_image *im, uint64_t size, const struct sfs_log *log);

#endif
