/* SPDX-License-Identifier: MIT */
/*
 * attr.c - what an image is and shows (image.h): its geometry and
 * sidecar, map and stats, identity, the stat of the disk, the backing
 * file's mode, owner and times, and its name.
 *
 * The stat of an image that holds no descriptor answers from the sidecar,
 * the map header kept in memory and an fstatat of the backing file by
 * name (open.c); everything else here reads the image's state.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileid.h"
#include "image_test.h"
#include "internal.h"
#include "model/model.h"

/* ---- identity, stat, attributes ---- */

void sfs_image_identity(const struct sfs_image *im, dev_t *dev, ino_t *ino)
{
	*dev = (dev_t)im->bid.dev;
	*ino = (ino_t)im->bid.ino;
}

struct sfs_intent_who sfs_image_intent_who(const struct sfs_image *im)
{
	return sfs_intent_who_of(im->id, &im->bid, NULL);
}

int sfs_image_backing_stat(struct sfs_image *im, struct stat *st)
{
	struct sfs_fileid id;
	int rc = sfs_fileid_at(im->store_fd, im->name, &id, st);

	if (rc < 0)
		return rc;
	return sfs_fileid_same(&id, &im->bid, true) ? 0 : -ESTALE;
}

bool sfs_image_backing_gone(struct sfs_image *im)
{
	struct stat st;
	int rc = sfs_image_backing_stat(im, &st);

	return rc == -ENOENT || rc == -ESTALE;
}

void sfs_image_stat_fill(const struct sfs_image *im, struct stat *st)
{
	st->st_size = (off_t)__atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE);
	st->st_blksize = (blksize_t)im->geom.pss;
}

int sfs_image_stat(struct sfs_image *im, struct stat *st)
{
	bool open = image_hold(im);
	int rc = 0;

	if (open && im->fd >= 0)
		rc = fstat(im->fd, st) < 0 ? -errno : 0;
	else
		rc = sfs_image_backing_stat(im, st);
	image_unhold(im);
	if (rc == -ESTALE)
		rc = -ENOENT;               /* another file under the name: not this image's */
	if (rc == 0)
		sfs_image_stat_fill(im, st);
	return rc;
}

/* Pin, apply fn to the backing descriptor, unpin. */
static int with_fd(struct sfs_image *im, int (*fn)(int fd, const void *arg), const void *arg)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = fn(im->fd, arg) < 0 ? -errno : 0;
	sfs_image_unpin(im);
	return rc;
}

static int do_fchmod(int fd, const void *arg)
{
	return fchmod(fd, *(const mode_t *)arg);
}

static int do_fchown(int fd, const void *arg)
{
	const unsigned *ids = arg;

	return fchown(fd, (uid_t)ids[0], (gid_t)ids[1]);
}

static int do_futimens(int fd, const void *arg)
{
	return futimens(fd, arg);
}

int sfs_image_chmod(struct sfs_image *im, mode_t mode)
{
	mode &= 07777;
	return with_fd(im, do_fchmod, &mode);
}

int sfs_image_chown(struct sfs_image *im, uid_t uid, gid_t gid)
{
	unsigned ids[2] = { (unsigned)uid, (unsigned)gid };

	return with_fd(im, do_fchown, ids);
}

int sfs_image_utimens(struct sfs_image *im, const struct timespec tv[2])
{
	return with_fd(im, do_futimens, tv);
}

const char *sfs_image_name(const struct sfs_image *im)
{
	return im->name;
}

int sfs_image_set_name(struct sfs_image *im, const char *name)
{
	struct sfs_map_ident id = { .present = true, .backing = im->bid };
	char mapname[SFS_FILE_NAME_LEN], err[256];
	struct sfs_map *m = NULL;
	bool open;

	if (strlen(name) >= sizeof(im->name))
		return -ENAMETOOLONG;
	open = image_hold(im);
	snprintf(im->name, sizeof(im->name), "%s", name);
	/* the map says the name too (map/ident.h): the open one, or its file by the new name; what
	 * fails here is left to the next open, which records the name of a map renamed by hand */
	memcpy(id.id, im->id, sizeof(id.id));
	snprintf(id.name, sizeof(id.name), "%s", name);
	sfs_map_name(mapname, sizeof(mapname), name);
	if (open && im->map)
		sfs_map_set_ident(im->map, &id);
	else if (sfs_map_open(im->state_fd, mapname, SFS_MAP_SALVAGE, NULL, &m, err, sizeof(err)) == 0) {
		if (sfs_fileid_same(sfs_map_fileid(m), &im->mid, true))
			sfs_map_set_ident(m, &id);
		sfs_map_close(m);
	}
	image_unhold(im);
	return 0;
}

int sfs_image_fd(const struct sfs_image *im)
{
	return im->fd;
}

/* ---- accessors ---- */

struct sfs_geom sfs_image_geom(const struct sfs_image *im)
{
	return image_vis_geom(im);
}

struct sfs_sidecar sfs_image_sidecar(const struct sfs_image *im)
{
	struct sfs_sidecar sc = im->sc;

	sc.size = __atomic_load_n(&im->geom.size, __ATOMIC_ACQUIRE);
	return sc;
}

struct sfs_map *sfs_image_map(struct sfs_image *im)
{
	return im->map;
}

struct sfs_stats *sfs_image_stats(struct sfs_image *im)
{
	struct sfs_stats *st;

	sfs_stats_cell_enter(&im->stats);
	st = image_stats_of(im);
	sfs_stats_cell_leave(&im->stats);
	return st;
}

void sfs_image_stats_snapshot(struct sfs_image *im, struct sfs_stats_snap *snap)
{
	assert(im->flags & SFS_IMAGE_STATS);
	sfs_stats_cell_snapshot(&im->stats, snap);
}

void sfs_image_stats_recent(struct sfs_image *im, struct sfs_stats_recent *out)
{
	assert(im->flags & SFS_IMAGE_STATS);
	sfs_stats_cell_recent(&im->stats, out);
}

int sfs_image_stats_idle(struct sfs_image *im)
{
	return sfs_stats_cell_idle(&im->stats);
}

bool sfs_image_has_stats(struct sfs_image *im)
{
	return sfs_stats_cell_state(&im->stats) != SFS_STATS_NONE;
}

void sfs_image_stats_info(const struct sfs_image *im, struct sfs_stats_info *info)
{
	struct sfs_map_info mi;

	memset(info, 0, sizeof(*info));
	info->name = im->name;
	info->geom = image_vis_geom(im);
	info->prov = im->sc.prov;
	info->zero_offload = im->sc.zero_offload;
	info->zero_offload_fallback = im->sc.zero_offload ? __atomic_load_n(&im->no_zero_range, __ATOMIC_RELAXED) : 0;
	info->direct = sfs_image_direct(im);
	info->profile = im->model ? sfs_model_profile(im->model)->name : NULL;
	image_map_state(im, &mi, &info->allocated_blocks, &info->total_blocks);
	info->zeroing = sfs_image_zeroing(im, &info->zeroing_done, &info->zeroing_total, &info->zeroing_err);
}

bool sfs_image_direct(const struct sfs_image *im)
{
	return im->fdc ? im->direct : im->dfd >= 0;
}
