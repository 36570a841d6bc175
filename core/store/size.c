/* SPDX-License-Identifier: MIT */
/*
 * size.c - the size and format of served images: grow, make room, settle, resize.
 *
 * A growing image (one created through the mount and being written by its
 * creator) has room reserved ahead of its writes, grown as they need it
 * and given back when its creator closes it (grow.h's sfs_trim); other images
 * grow by a truncate or a resize, all or nothing (sfs_grow).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdcache.h"
#include "util/fdio.h"
#include "grow.h"
#include "recover.h"
#include "util/step.h"
#include "internal.h"
#include "util/tmpfile.h"

/*
 * Space the store holds while an image grows with its writes: an unlinked temporary file of
 * RESERVE_BYTES, allocated and kept open (a crash leaves nothing behind: the filesystem frees
 * it).  Giving a growing image's room back at its creator's close (sfs_trim) writes two small
 * new files, its journal and the sidecar's rewrite, before it frees anything: on a store the
 * copy filled they could not be written, and the image kept its room.  The close gives this
 * space up first; the next grow of a growing image takes it again.  1 MiB covers the blocks
 * and inodes of two small files on any filesystem.
 */
#define RESERVE_BYTES (1 << 20)

/* Allocate RESERVE_BYTES in fd: fallocate, or zeros written where there is none.  0 or -errno. */
static int reserve_fill(int fd)
{
	static const char zeros[64 * 1024];
	int rc = 0;

	if (fallocate(fd, 0, 0, RESERVE_BYTES) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	for (off_t off = 0; off < RESERVE_BYTES && rc == 0; off += (off_t)sizeof(zeros))
		rc = sfs_pwrite_all(fd, zeros, sizeof(zeros), off);
	return rc == 0 && fdatasync(fd) < 0 ? -errno : rc;
}

/* Hold the reserve if the store does not (store lock held); a store too full for it goes on
 * without. */
static void reserve_take(struct sfs_store *s)
{
	char name[SFS_TMP_NAME_MAX];
	int fd;

	if (s->reserve_fd >= 0)
		return;
	fd = sfs_tmp_create(s->statefd, name, sizeof(name), 0600);
	if (fd < 0)
		return;
	unlinkat(s->statefd, name, 0);
	if (reserve_fill(fd) == 0)
		s->reserve_fd = fd;
	else
		close(fd);
}

/* Give the reserve's space back to the store (store lock held). */
static void reserve_give_back(struct sfs_store *s)
{
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	s->reserve_fd = -1;
}

/* Grow im's capacity to at least end (store lock held); with ahead, some room past it too. */
static int grow_locked(struct sfs_store *s, struct entry *e, struct sfs_image *im, uint64_t end, bool ahead)
{
	struct sfs_geom g = sfs_image_geom(im);
	uint64_t cap = sfs_image_capacity(im), want = end, step, max = sfs_geom_size_max(g.block_size);
	int rc;

	if (end <= cap)
		return 0;
	if (ahead && end <= max) {
		/* a quarter more each time, from 1 MiB to 256 MiB: few grows for a long copy */
		step = cap / 4 < (1ull << 20) ? 1ull << 20 : cap / 4 > (256ull << 20) ? 256ull << 20 : cap / 4;
		if (want < cap + step)
			want = cap + step;
		want = (want + g.block_size - 1) / g.block_size * g.block_size;
		if (want > max)
			want = max;
	}
	if (!e) {
		/* An unlinked or replaced image has no files in the store any more. */
		return sfs_image_grow(im, want);
	}
	if (sfs_image_growing(im))
		reserve_take(s);
	rc = sfs_grow(s->dirfd, s->statefd, im, want, true, &s->opts.log);
	/* no room ahead (a full store, or past the largest file of its filesystem): what the write needs */
	if ((rc == -ENOSPC || rc == -EFBIG) && want > end)
		rc = sfs_grow(s->dirfd, s->statefd, im, end, true, &s->opts.log);
	/* the sidecar is now the store's: remember what it says */
	if (sfs_image_capacity(im) > cap) {
		e->declared = sfs_image_sidecar(im);
		store_sidecar_id(s, e->name, &e->scid);
	}
	return rc;
}

/* The table's entry of im, when im is what its name serves (store lock held); else NULL. */
static struct entry *entry_of(struct sfs_store *s, struct sfs_image *im)
{
	struct entry *e = store_find(s, sfs_image_name(im), NULL);

	return e && e->im == im ? e : NULL;
}

static int sfs_store_make_room_pinned(struct sfs_store *s, struct sfs_image *im, uint64_t end)
{
	int rc;

	if (!sfs_image_growing(im))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = grow_locked(s, entry_of(s, im), im, end, true);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* fn(s, im, v) with im pinned for the call (its descriptors open): fn's result, or the pin's
 * error. */
static int pinned_call(int (*fn)(struct sfs_store *, struct sfs_image *, uint64_t),
		       struct sfs_store *s, struct sfs_image *im, uint64_t v)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = fn(s, im, v);
	sfs_image_unpin(im);
	return rc;
}

int sfs_store_make_room(struct sfs_store *s, struct sfs_image *im, uint64_t end)
{
	return pinned_call(sfs_store_make_room_pinned, s, im, end);
}

ssize_t sfs_store_write_growing(struct sfs_store *s, struct sfs_image *im, const void *buf, size_t len,
				uint64_t off, bool direct)
{
	ssize_t (*write)(struct sfs_image *, const void *, size_t, uint64_t) =
		direct ? sfs_image_write : sfs_image_write_any;
	ssize_t n = write(im, buf, len, off);

	/* past the capacity: room, then once more (a concurrent trim may have taken it back) */
	for (int i = 0; i < 3 && n == -ENOSPC && sfs_image_growing(im) && off + len >= off; i++) {
		int rc = sfs_store_make_room(s, im, off + len);

		if (rc < 0)
			return rc;
		n = write(im, buf, len, off);
	}
	return n;
}

/* A growing image whose room could not be given back keeps it: say what it keeps. */
static void log_kept(struct sfs_store *s, struct sfs_image *im, int rc)
{
	uint64_t written = sfs_image_geom(im).size, cap = sfs_image_capacity(im);

	sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: cannot give back the room past what its creator wrote "
		 "(%s): it keeps %llu bytes, of which the last %llu past the %llu written read as zeros",
		 sfs_image_name(im), strerror(-rc), (unsigned long long)cap,
		 (unsigned long long)(cap - written), (unsigned long long)written);
}

static int sfs_store_settle_pinned(struct sfs_store *s, struct sfs_image *im, bool done)
{
	struct entry *e;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	e = entry_of(s, im);
	/* the trim writes two small files first: on a store the copy filled, the reserve's space */
	if (done)
		reserve_give_back(s);
	if (e && sfs_image_growing(im)) {
		rc = sfs_trim(s->dirfd, s->statefd, im, sfs_image_geom(im).size, &s->opts.log);
		if (rc == -EAGAIN)      /* a write went further meanwhile: the next settle */
			rc = 0;
		if (rc < 0 && done && sfs_image_capacity(im) > sfs_image_geom(im).size)
			log_kept(s, im, rc);
		e->declared = sfs_image_sidecar(im);
		store_sidecar_id(s, e->name, &e->scid);
	}
	if (done)
		sfs_image_set_growing(im, false);
	pthread_mutex_unlock(&s->lock);
	/* eagerzeroedthick: what its writes left of what it keeps is zeroed now (imgzero.c) */
	if (done)
		sfs_image_zero_start(im);
	return rc;
}

int sfs_store_settle(struct sfs_store *s, struct sfs_image *im, bool done)
{
	int rc = sfs_image_pin(im);

	if (rc < 0) {
		if (done) {
			pthread_mutex_lock(&s->lock);
			reserve_give_back(s);
			if (sfs_image_growing(im) && sfs_image_capacity(im) > sfs_image_geom(im).size)
				log_kept(s, im, rc);
			sfs_image_set_growing(im, false);
			pthread_mutex_unlock(&s->lock);
		}
		return rc;
	}
	rc = sfs_store_settle_pinned(s, im, done);
	sfs_image_unpin(im);
	return rc;
}

/* The files of a new format for the entry e of im, all or nothing (store lock held, the limits
 * checked).  The order keeps a crash on one side or the other: a sidecar without a map is an
 * image imported as its sidecar says (empty), so the old map goes before the sidecar changes.
 *   1 the new map, whole and durable, under a temporary name
 *   2 the old map moved to a temporary name (a start removes it)
 *   3 the sidecar says the new format: the commit
 *   4 the new map put in place of the old; the old one removed
 * A failure before 3 puts the old map back and removes the new: nothing changed.  Past it the
 * format is the new one, in memory too; a map that cannot be put in place is made again from
 * the backing file at the next start (logged).  0 or -errno. */
static int set_format_files(struct sfs_store *s, struct entry *e, struct sfs_image *im,
			    const struct sfs_sidecar *sc)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], newtmp[SFS_TMP_NAME_MAX],
	     oldtmp[SFS_TMP_NAME_MAX];
	struct sfs_map_info mi;
	struct sfs_map_ident ident;
	struct sfs_map *nm;
	bool aside = false;
	int fd, rc;

	sfs_sidecar_name(scname, sizeof(scname), e->name);
	sfs_map_name(mapname, sizeof(mapname), e->name);
	sfs_image_reformat_map_info(im, sc, &mi, &ident);
	rc = sfs_map_create_tmp(s->statefd, &mi, &ident, newtmp, sizeof(newtmp), &nm);
	if (rc < 0)
		return rc;
	rc = sfs_step("format", 1);
	/* a name of our own for the old map: reserved with O_EXCL, then replaced by the rename */
	fd = rc == 0 ? sfs_tmp_create(s->statefd, oldtmp, sizeof(oldtmp), 0600) : -1;
	if (rc == 0 && fd < 0)
		rc = fd;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && renameat(s->statefd, mapname, s->statefd, oldtmp) == 0)
		aside = true;
	else if (rc == 0 && errno != ENOENT)       /* ENOENT: no old map to keep */
		rc = -errno;
	if (fd >= 0 && !aside)
		unlinkat(s->statefd, oldtmp, 0);
	if (rc == 0)
		rc = sfs_fsync_dir(s->statefd);
	if (rc == 0)
		rc = sfs_step("format", 2);
	if (rc == 0)
		rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, sc);
	if (rc < 0) {
		/* nothing committed: the old map back where it was, the new one gone */
		if (aside && renameat(s->statefd, oldtmp, s->statefd, mapname) == 0)
			sfs_fsync_dir(s->statefd);
		unlinkat(s->statefd, newtmp, 0);
		sfs_map_close(nm);
		return rc;
	}
	rc = sfs_step("format", 3);
	if (rc == 0)
		rc = renameat(s->statefd, newtmp, s->statefd, mapname) < 0 ? -errno : sfs_fsync_dir(s->statefd);
	if (rc < 0)
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: its new map may not be in place (%s): the next "
			 "start makes it again from the backing file", e->name, strerror(-rc));
	if (aside)
		sfs_remove_durably(s->statefd, oldtmp);
	sfs_image_reformat(im, nm, sc);
	return 0;
}

static int sfs_store_set_format_pinned(struct sfs_store *s, struct sfs_image *im, const char *key, const char *value)
{
	struct sfs_sidecar sc;
	struct entry *e;
	int rc;

	pthread_mutex_lock(&s->lock);
	e = entry_of(s, im);
	rc = !e ? -ENOENT : !sfs_image_growing(im) || sfs_image_capacity(im) ||
			    sfs_map_count(sfs_image_map(im)) ? -EBUSY : 0;
	if (rc == 0) {
		sc = e->declared;
		sc.size = 0;
		rc = sfs_sidecar_set(&sc, key, value);
		if (rc == -ENOENT)
			rc = -EPERM;
	}
	/* every limit before any file changes */
	if (rc == 0)
		rc = sfs_image_reformat_check(im, &sc);
	if (rc == 0)
		rc = set_format_files(s, e, im, &sc);
	if (rc == 0) {
		e->declared = sc;
		store_sidecar_id(s, e->name, &e->scid);
	} else if (e && rc != -EBUSY && rc != -EINVAL && rc != -EPERM) {
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: cannot set %s to %s: %s (nothing changed)", e->name,
			 key, value, strerror(-rc));
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_set_format(struct sfs_store *s, struct sfs_image *im, const char *key, const char *value)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = sfs_store_set_format_pinned(s, im, key, value);
	sfs_image_unpin(im);
	return rc;
}

static int sfs_store_resize_pinned(struct sfs_store *s, struct sfs_image *im, uint64_t new_size)
{
	struct entry *e;
	int rc;

	if (new_size < sfs_image_geom(im).size && !sfs_image_growing(im)) {
		/* a disk that holds no data past new_size (nothing, or zeros) may shrink: nothing
		 * is lost (qemu-img create and convert truncate a file to 0 before they size it) */
		pthread_mutex_lock(&s->lock);
		e = entry_of(s, im);
		rc = e ? sfs_trim(s->dirfd, s->statefd, im, new_size, &s->opts.log) : -EINVAL;
		if (e && sfs_image_capacity(im) == new_size) {
			e->declared = sfs_image_sidecar(im);
			store_sidecar_id(s, e->name, &e->scid);
		}
		pthread_mutex_unlock(&s->lock);
		return rc == -EBUSY ? -EINVAL : rc;
	}
	pthread_mutex_lock(&s->lock);
	/* decided under the lock: the creator's close (settle, which clears growing under it)
	 * comes asynchronously and may run while another open of the image truncates it */
	if (sfs_image_growing(im)) {
		/* the creator's truncate: room if needed, then the disk shows new_size */
		struct sfs_geom g = sfs_image_geom(im);

		rc = sfs_geom_grow_check(&g, new_size, NULL, 0);
		if (rc >= 0)
			rc = grow_locked(s, entry_of(s, im), im, new_size, false);
		if (rc == 0)
			rc = sfs_image_show_size(im, new_size);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	e = store_find(s, sfs_image_name(im), NULL);
	if (e && e->im == im) {
		rc = sfs_grow(s->dirfd, s->statefd, im, new_size, true, &s->opts.log);
		/* the sidecar is now the store's: remember what it says */
		if (sfs_image_geom(im).size == new_size) {
			e->declared = sfs_image_sidecar(im);
			store_sidecar_id(s, e->name, &e->scid);
		}
	} else {
		/* An unlinked or replaced image has no files in the store any more. */
		rc = sfs_image_grow(im, new_size);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_resize(struct sfs_store *s, struct sfs_image *im, uint64_t new_size)
{
	return pinned_call(sfs_store_resize_pinned, s, im, new_size);
}
