/* SPDX-License-Identifier: MIT */
/*
 * open.c - opening and closing an image.
 *
 * The first open (sfs_image_open, sfs_image_open_in) makes a declared
 * image that does not exist yet, imports a raw file without a map, checks
 * the backing file (a regular file with one link, never followed through
 * a symbolic link) and the map (every chunk's checksum, and that it is
 * this image's: map/ident.h), and reconciles the sidecar with the geometry
 * the map records.
 *
 * Making an image: the backing file is made unnamed (O_TMPFILE) and sized,
 * the map written recording its identity, and only then is the backing
 * file linked under its name.  So a crash leaves the sidecar alone, or
 * with a map that records no data, never a backing file without its map.
 * A declared image whose backing file is missing is made (again) only when
 * its map records no data, which is such an interrupted create (logged);
 * with data it is refused: a disk whose data went is not replaced by zeros
 * without a word.
 *
 * Without a descriptor cache the image then keeps its backing file, its
 * O_DIRECT twin and its map open until sfs_image_close.  With one
 * (fdcache.h) they are the image's slot, which resident.c opens again and
 * closes as the cache says.
 *
 * So an image nobody uses holds no descriptor and no bitmap: stat answers
 * from the sidecar, the header kept in memory and an fstatat of the
 * backing file by name (checked to be the same inode; attr.c).
 *
 * Last, the image's failure state is opened when it has one (failures.c):
 * a damaged NAME.disk refuses the image as a damaged map does.  A new
 * image's backing file is made with no NAME.disk or NAME.undo beside its
 * map: any such file was left by another image of that name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileid.h"
#include "image_test.h"
#include "internal.h"
#include "map/ident.h"
#include "model/model.h"

/* ---- first open ---- */

/* Size fd, a new backing file, for sc: its length, and its space reserved when thick.  0 or
 * -errno. */
static int size_backing(int fd, const struct sfs_sidecar *sc, const char *name, const struct sfs_log *log)
{
	if (ftruncate(fd, (off_t)sc->size) < 0)
		return -errno;
	if (sc->prov != SFS_PROV_THIN && sc->size && fallocate(fd, 0, 0, (off_t)sc->size) < 0) {
		if (errno != EOPNOTSUPP)
			return -errno;
		sfs_logf(log, SFS_LOG_WARN, "%s: backing filesystem cannot reserve space; image stays sparse", name);
	}
	return 0;
}

/* A new backing file for sc in the store directory, not linked under any name yet (O_TMPFILE:
 * a crash before link_backing leaves nothing of it); where the filesystem has no O_TMPFILE,
 * made under its name at once (O_EXCL), *linked set.  The fd, or -errno (nothing left). */
static int create_backing(int store_fd, const char *name, const struct sfs_sidecar *sc,
			  const struct sfs_log *log, bool *linked)
{
	int fd = openat(store_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644), rc;

	*linked = fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL);
	if (*linked)
		fd = openat(store_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = size_backing(fd, sc, name, log);
	if (rc < 0) {
		close(fd);
		if (*linked)
			unlinkat(store_fd, name, 0);
		return rc;
	}
	return fd;
}

/* Give the unnamed backing file fd its name, never over anything, durably.  0 or -errno. */
static int link_backing(int fd, int store_fd, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, path, store_fd, name, AT_SYMLINK_FOLLOW) < 0 &&
	    (errno != ENOENT || linkat(fd, "", store_fd, name, AT_EMPTY_PATH) < 0))
		return -errno;
	return fsync(store_fd) < 0 ? -errno : 0;
}

/* Make image name: its backing file, then its map recording both (map/ident.h), then the
 * backing file's name, so that a crash on the way leaves at most a map that records no data
 * (see may_make).  0, or -errno with err filled and nothing left behind. */
static int make_image(struct sfs_image *im, int store_fd, int state_fd, const char *name, const char *mapname,
		      const struct sfs_sidecar *sc, const struct sfs_map_info *mi, char *err, size_t errlen)
{
	struct sfs_map_ident ident = { .present = true };
	bool linked;
	int rc;

	im->fd = create_backing(store_fd, name, sc, &im->log, &linked);
	rc = im->fd < 0 ? im->fd : sfs_fileid_fd(im->fd, &ident.backing, NULL);
	if (rc == 0)
		rc = sfs_image_id_new(ident.id);
	snprintf(ident.name, sizeof(ident.name), "%s", name);
	if (rc == 0)
		rc = sfs_map_create_as(state_fd, mapname, mi, &ident, &im->map);
	if (rc == 0 && !linked && (rc = link_backing(im->fd, store_fd, name)) < 0)
		unlinkat(state_fd, mapname, 0);
	if (rc < 0 && linked && im->fd >= 0)
		unlinkat(store_fd, name, 0);
	if (rc < 0) {
		image_res_drop(im);
		return sfs_err(err, errlen, rc, "%s: cannot create image: %s", name, strerror(-rc));
	}
	return 0;
}

/* The backing file of a declared image is missing: may it be made?  Yes when there is no map,
 * or a map that records no data (a create interrupted before the backing file was named:
 * finished now, and logged); no when the map records data or cannot be read: a disk whose data
 * went is not replaced by zeros without a word (-EUCLEAN, err saying what to do). */
static int may_make(struct sfs_image *im, int state_fd, const char *name, const char *mapname, char *err,
		    size_t errlen)
{
	char merr[512];
	struct sfs_map *m;
	uint64_t n = 0;
	int rc = sfs_map_open(state_fd, mapname, SFS_MAP_RDONLY | SFS_MAP_SALVAGE, NULL, &m, merr, sizeof(merr));

	if (rc == -ENOENT)
		return 0;
	if (rc == 0) {
		n = sfs_map_count(m);
		sfs_map_close(m);
		if (n == 0) {
			sfs_logf(&im->log, SFS_LOG_WARN, "%s: backing file missing, and its map records no data: "
				 "made now (a create interrupted before it had its backing file)", name);
			return 0;
		}
		return sfs_err(err, errlen, -EUCLEAN, "%s: backing file missing while its map records %llu "
			       "block%s of data (removed behind the daemon's back?); not made again empty: put "
			       "the file back, or remove " SFS_STATE_DIR "/%s to have the image made again, "
			       "empty", name, (unsigned long long)n, n == 1 ? "" : "s", mapname);
	}
	return sfs_err(err, errlen, -EUCLEAN, "%s: backing file missing, and its map cannot be read (%s); not "
		       "made again: see 'sectorfs-img check' on the store", name, merr);
}

/* The map of an existing backing file, opened: is it this image's?  One of an older version,
 * renamed by hand or copied with its backing file gets its identity recorded (logged); another
 * image's map, or one made for a file that has been replaced, is refused (-EUCLEAN, err). */
static int tie_map(struct sfs_image *im, const char *name, const struct sfs_fileid *bid, char *err,
		   size_t errlen)
{
	char why[768];
	enum sfs_map_tie t = sfs_map_tie(im->map, name, bid, why, sizeof(why));
	struct sfs_map_ident id;
	int rc;

	if (t == SFS_TIE_OK)
		return 0;
	if (!sfs_map_tie_servable(t))
		return sfs_err(err, errlen, -EUCLEAN, "%s: %s; image not served ('sectorfs-img check --repair' "
			       "on the store rebuilds its map from the backing file there, keeping this one as "
			       SFS_STATE_DIR "/%s" SFS_MAP_STALE_SUFFIX ")", name, why, name);
	rc = sfs_map_ident_for(im->map, name, bid, &id);
	if (rc == 0)
		rc = sfs_map_set_ident(im->map, &id);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot record the image's identity in its map: %s", name,
			       strerror(-rc));
	sfs_logf(&im->log, t == SFS_TIE_COPIED ? SFS_LOG_WARN : SFS_LOG_INFO, "%s: %s: %s", name, why,
		 t == SFS_TIE_NONE ? "the image's identity recorded in it" : "recorded again");
	return 0;
}

/* Mark the blocks of an existing raw file that hold data (SEEK_DATA/SEEK_HOLE). */
static void import_extents(struct sfs_image *im, uint64_t file_size)
{
	struct sfs_geom g = image_cur_geom(im);
	uint64_t end = file_size < g.size ? file_size : g.size;
	off_t pos = 0;

	while ((uint64_t)pos < end) {
		off_t data = lseek(im->fd, pos, SEEK_DATA), hole;

		if (data < 0 || (uint64_t)data >= end)
			break;
		hole = lseek(im->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (off_t)end;
		sfs_map_set_range(im->map, (uint64_t)data / g.block_size,
				  ((uint64_t)hole + g.block_size - 1) / g.block_size);
		pos = hole;
	}
}

static int image_alloc(const char *name, const struct sfs_sidecar *sc, unsigned flags,
		       const struct sfs_log *log, struct sfs_image **out)
{
	struct sfs_image *im;

	if (!image_zerobuf())
		return -ENOMEM;
	im = calloc(1, sizeof(*im));
	if (!im)
		return -ENOMEM;
	im->fd = im->dfd = -1;
	snprintf(im->name, sizeof(im->name), "%s", name);
	im->flags = flags;
	im->sc = *sc;
	im->geom = (struct sfs_geom){ sc->size, sc->lss, sc->pss, sc->block_size };
	if (log)
		im->log = *log;
	im->zerolen = sc->block_size < IMAGE_ZEROBUF_MAX ? (size_t)sc->block_size : IMAGE_ZEROBUF_MAX;
	sfs_stats_cell_init(&im->stats, (flags & SFS_IMAGE_STATS) != 0);
	pthread_mutex_init(&im->zero_lk, NULL);
	pthread_mutex_init(&im->fail_lk, NULL);
	im->zero_bg = (flags & SFS_IMAGE_ZERO_BG) != 0;
	*out = im;
	return 0;
}

static void image_free(struct sfs_image *im)
{
	image_res_drop(im);
	pthread_mutex_destroy(&im->zero_lk);
	pthread_mutex_destroy(&im->fail_lk);
	sfs_stats_cell_destroy(&im->stats);
	sfs_model_free(im->model);
	free(im);
}

/* Reconcile the sidecar with the geometry the map records: the recorded one wins. */
static int reconcile(struct sfs_image *im, const char *name, char *err, size_t errlen)
{
	const struct sfs_map_info *mi = sfs_map_info(im->map);
	struct sfs_sidecar *sc = &im->sc;
	unsigned diff = sfs_sidecar_diff(sc, &mi->geom, mi->prov);

	if (diff & SFS_DIFF_SECTOR)
		return sfs_err(err, errlen, -EINVAL,
			       "%s" SFS_SIDECAR_SUFFIX ": key 'sector': the image was made with logical %u / physical %u "
			       "sectors and its sector format never changes (sidecar says %u / %u)",
			       name, mi->geom.lss, mi->geom.pss, sc->lss, sc->pss);
	if (diff & SFS_DIFF_PROV)
		sfs_logf(&im->log, SFS_LOG_WARN, "%s: sidecar says provisioning %s, image is %s; keeping %s",
			 name, sfs_prov_name(sc->prov), sfs_prov_name(mi->prov), sfs_prov_name(mi->prov));
	if (diff & SFS_DIFF_BLOCK)
		sfs_logf(&im->log, SFS_LOG_WARN, "%s: sidecar says block_size %llu, image has %llu; keeping %llu",
			 name, (unsigned long long)sc->block_size, (unsigned long long)mi->geom.block_size,
			 (unsigned long long)mi->geom.block_size);
	if (diff & SFS_DIFF_SMALLER)
		sfs_logf(&im->log, SFS_LOG_WARN, "%s: sidecar size %llu is smaller than the image (%llu); "
			 "images never shrink, keeping %llu", name, (unsigned long long)sc->size,
			 (unsigned long long)mi->geom.size, (unsigned long long)mi->geom.size);
	sc->prov = mi->prov;
	sc->block_size = mi->geom.block_size;
	im->geom = mi->geom;
	return 0;
}

/* The map of an existing backing file (st): opened and reconciled with the sidecar, or made
 * for a raw file that has none (its data extents imported).  0 or -errno with err filled; the
 * caller drops the resident part on failure. */
static int open_map(struct sfs_image *im, int state_fd, const char *name, const char *mapname,
		    const struct sfs_sidecar *sc, const struct sfs_map_info *mi, const struct stat *st,
		    char *err, size_t errlen)
{
	struct sfs_map_ident ident = { .present = true, .backing = im->bid };
	int rc;

	rc = sfs_map_open(state_fd, mapname, 0, &im->log, &im->map, err, errlen);
	if (rc == 0 && (rc = tie_map(im, name, &im->bid, err, errlen)) == 0)
		return reconcile(im, name, err, errlen);
	if (rc != -ENOENT)
		return rc;
	/* A raw file with a sidecar and no map: import it as it is. */
	if ((uint64_t)st->st_size > sc->size)
		return sfs_err(err, errlen, -EINVAL, "%s" SFS_SIDECAR_SUFFIX ": key 'size': %llu is smaller than the "
			       "existing backing file (%lld bytes)", name,
			       (unsigned long long)sc->size, (long long)st->st_size);
	snprintf(ident.name, sizeof(ident.name), "%s", name);
	rc = sfs_image_id_new(ident.id);
	if (rc == 0)
		rc = sfs_map_create_as(state_fd, mapname, mi, &ident, &im->map);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: cannot create map: %s", name, strerror(-rc));
	import_extents(im, (uint64_t)st->st_size);
	__atomic_store_n(&im->dirty, 1, __ATOMIC_RELEASE);
	/* Thick images reserve all their space; holes in the raw file included. */
	if (sc->prov != SFS_PROV_THIN && sc->size)
		fallocate(im->fd, 0, 0, (off_t)sc->size);
	sfs_logf(&im->log, SFS_LOG_INFO, "%s: imported existing backing file (%llu blocks hold data)",
		 name, (unsigned long long)sfs_map_count(im->map));
	return 0;
}

/* A new image: the failure state files another image of this name left go first.  0 or -errno
 * with err filled. */
static int drop_stale_state(int state_fd, const char *name, char *err, size_t errlen)
{
	static const char *const suffixes[] = { SFS_DISK_SUFFIX, SFS_UNDO_SUFFIX };
	char fname[SFS_FILE_NAME_LEN];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(fname, sizeof(fname), "%s%s", name, suffixes[i]);
		if (unlinkat(state_fd, fname, 0) < 0 && errno != ENOENT)
			return sfs_err(err, errlen, -errno, "%s: cannot create image: " SFS_STATE_DIR "/%s, left by "
				       "another image of that name, cannot be removed: %s", name, fname, strerror(errno));
	}
	return 0;
}

/* Everything the first open does, into im's resident part (dropped again on failure). */
static int first_open(struct sfs_image *im, int store_fd, int state_fd, const char *name,
		      const struct sfs_sidecar *sc, unsigned flags, char *err, size_t errlen)
{
	struct sfs_map_info mi = { { sc->size, sc->lss, sc->pss, sc->block_size }, sc->prov, 0 };
	char mapname[300];
	struct stat st;
	bool fresh = false;
	int rc;

	sfs_map_name(mapname, sizeof(mapname), name);
	/* O_NONBLOCK: a FIFO planted as the backing file must not hang the open */
	im->fd = openat(store_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (im->fd < 0 && errno == ENOENT) {
		/* The sidecar declares an image that does not exist yet: make it. */
		rc = flags & SFS_IMAGE_CREATE ? 0 : may_make(im, state_fd, name, mapname, err, errlen);
		if (rc == 0)
			rc = drop_stale_state(state_fd, name, err, errlen);
		if (rc == 0)
			rc = make_image(im, store_fd, state_fd, name, mapname, sc, &mi, err, errlen);
		if (rc < 0)
			goto fail;
		fresh = true;
	} else if (im->fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			rc = sfs_err(err, errlen, -EPERM, "%s: backing file is a symbolic link; refused", name);
		else if (rc == -EISDIR)
			rc = sfs_err(err, errlen, -EPERM, "%s: backing file is not a regular file; refused", name);
		else
			sfs_err(err, errlen, rc, "%s: cannot open backing file: %s", name, strerror(-rc));
		goto fail;
	}
	if ((rc = sfs_fileid_fd(im->fd, &im->bid, &st)) < 0) {
		sfs_err(err, errlen, rc, "%s: cannot stat backing file: %s", name, strerror(-rc));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		rc = sfs_err(err, errlen, -EPERM, "%s: backing file is %s; refused", name,
			     !S_ISREG(st.st_mode) ? "not a regular file" : "hard-linked elsewhere");
		goto fail;
	}
	if (!(flags & SFS_IMAGE_BUFFERED) && (rc = image_open_direct(im)) < 0) {
		sfs_err(err, errlen, rc, "%s: cannot open backing file for O_DIRECT: %s", name, strerror(-rc));
		goto fail;
	}

	if (!fresh && (rc = open_map(im, state_fd, name, mapname, sc, &mi, &st, err, errlen)) < 0)
		goto fail;

	/* Backing shorter than the disk (a crash during grow, a copied file): extend it. */
	if ((uint64_t)st.st_size < im->geom.size) {
		if (ftruncate(im->fd, (off_t)im->geom.size) < 0) {
			rc = -errno;
			sfs_err(err, errlen, rc, "%s: cannot extend backing file: %s", name, strerror(-rc));
			goto fail;
		}
		if (im->sc.prov != SFS_PROV_THIN)
			fallocate(im->fd, 0, st.st_size, (off_t)(im->geom.size - (uint64_t)st.st_size));
	}
	if (image_locks_alloc(im) < 0) {
		rc = sfs_err(err, errlen, -ENOMEM, "%s: out of memory", name);
		goto fail;
	}
	image_note_map(im);
	memcpy(im->id, sfs_map_ident(im->map)->id, sizeof(im->id));
	image_note_direct(im);
	return 0;

fail:
	image_res_drop(im);
	return rc;
}

/* The drive of the sidecar's profile (a name, or a path from the store), with the sidecar's
 * latency_spike when it has one; a spike alone runs on a profile that costs nothing else
 * (model/spike.h). */
static int model_of(struct sfs_image *im, int store_fd, const char *name, char *err, size_t errlen)
{
	struct sfs_profile p = { .channels = SFS_PROFILE_MAX_CHANNELS, .nread = 1, .nwrite = 1,
				 .read = { { 512, 0 } }, .write = { { 512, 0 } }, .name = "latency_spike" };
	char perr[512];
	int rc = im->sc.profile[0] ? sfs_profile_load(store_fd, im->sc.profile, &p, perr, sizeof(perr)) : 0;

	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s" SFS_SIDECAR_SUFFIX ": key 'profile': %s", name, perr);
	if (im->sc.fail.have & SFS_HAVE_LATENCY_SPIKE)
		p.spike = im->sc.fail.spike;
	rc = sfs_model_new(&p, im->sc.pss, NULL, &im->model);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: out of memory", name);
	return 0;
}

int sfs_image_open_in(struct sfs_fdcache *fdc, int store_fd, int state_fd, const char *name,
		      const struct sfs_sidecar *sc, unsigned flags, const struct sfs_log *log,
		      struct sfs_image **out, char *err, size_t errlen)
{
	struct sfs_image *im;
	int rc;

	rc = image_alloc(name, sc, flags, log, &im);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: out of memory", name);
	im->store_fd = store_fd;
	im->state_fd = state_fd;
	im->fdc = fdc;
	if ((sc->profile[0] || (sc->fail.have & SFS_HAVE_LATENCY_SPIKE)) &&
	    (rc = model_of(im, store_fd, name, err, errlen)) < 0) {
		image_free(im);
		return rc;
	}
	if (fdc) {
		sfs_fdslot_init(&im->slot, fdc, image_slot_open, image_slot_close, (flags & SFS_IMAGE_BUFFERED) ? 2 : 3);
		sfs_fdcache_make_room(fdc, im->slot.want);
	}
	for (;;) {
		rc = first_open(im, store_fd, state_fd, name, sc, flags, err, errlen);
		/* out of descriptors: close an idle image's and try again */
		if ((rc == -EMFILE || rc == -ENFILE) && fdc && sfs_fdcache_evict_one(fdc))
			continue;
		break;
	}
	if (rc < 0) {
		if (fdc)
			pthread_mutex_destroy(&im->slot.lk);
		image_free(im);
		return rc;
	}
	if (fdc)
		sfs_fdslot_adopt(&im->slot, image_res_nfds(im));
	rc = image_probe_zero_range(im, (dev_t)im->bid.dev);
	if (rc < 0) {
		sfs_image_close(im);
		return sfs_err(err, errlen, rc, "%s: cannot stat the store directory: %s", name, strerror(-rc));
	}
	if (im->sc.prov == SFS_PROV_EAGERZEROEDTHICK && !(sfs_map_info(im->map)->flags & SFS_MAP_F_ZEROED) &&
	    !im->zero_bg) {
		rc = sfs_image_finish_zeroing(im);
		if (rc < 0) {
			sfs_image_close(im);
			return sfs_err(err, errlen, rc, "%s: eager zeroing failed: %s", name, strerror(-rc));
		}
	}
	im->sc.size = im->geom.size;
	im->vsize = im->geom.size;
	rc = image_fail_open(im, err, errlen);
	if (rc < 0) {
		sfs_image_close(im);
		return rc;
	}
	*out = im;
	return 0;
}

int sfs_image_open(int store_fd, int state_fd, const char *name, const struct sfs_sidecar *sc,
		   unsigned flags, const struct sfs_log *log, struct sfs_image **out,
		   char *err, size_t errlen)
{
	return sfs_image_open_in(NULL, store_fd, state_fd, name, sc, flags, log, out, err, errlen);
}

int sfs_image_close(struct sfs_image *im)
{
	int rc;

	if (!im)
		return 0;
	image_zero_join(im);
	image_fail_close(im);
	if (im->fdc) {
		rc = sfs_fdslot_detach(&im->slot);
	} else {
		rc = sfs_map_flush(im->map, im->fd);
	}
	image_free(im);
	return rc;
}

/* ---- pins ---- */

int sfs_image_pin(struct sfs_image *im)
{
	return im->fdc ? sfs_fdslot_pin(&im->slot) : 0;
}

void sfs_image_unpin(struct sfs_image *im)
{
	if (im->fdc)
		sfs_fdslot_unpin(&im->slot, false);
}

void sfs_image_release(struct sfs_image *im)
{
	if (im->fdc)
		sfs_fdslot_unpin(&im->slot, true);
}

bool sfs_image_resident(struct sfs_image *im)
{
	return !im->fdc || sfs_fdslot_is_open(&im->slot);
}

/* Hold the resident part as it is (no eviction, no reopen): true when it is there. */
bool image_hold(const struct sfs_image *cim)
{
	struct sfs_image *im = (struct sfs_image *)cim;   /* the slot's lock is not the image's state */

	return !im->fdc || sfs_fdslot_lock(&im->slot);
}

void image_unhold(const struct sfs_image *cim)
{
	struct sfs_image *im = (struct sfs_image *)cim;

	if (im->fdc)
		sfs_fdslot_unlock(&im->slot);
}

void image_map_state(const struct sfs_image *im, struct sfs_map_info *mi, uint64_t *count,
		     uint64_t *nblocks)
{
	bool open = image_hold(im);

	if (open && im->map) {
		*mi = *sfs_map_info(im->map);
		*count = sfs_map_count(im->map);
		*nblocks = sfs_map_nblocks(im->map);
	} else {
		*mi = im->mi;
		*count = im->map_count;
		*nblocks = im->map_nblocks;
	}
	image_unhold(im);
}
