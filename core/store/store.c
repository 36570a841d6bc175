/* SPDX-License-Identifier: MIT */
/*
 * store.c - a directory of disk images and the daemon state beside them.
 *
 *   STORE/            flock()ed by whoever serves or changes it (lock.c)
 *     NAME            backing file (raw disk contents)
 *     NAME.json       sidecar: the user's declaration of the image
 *     .sectorfs/
 *       lock          the holder's description, flock()ed too
 *       NAME.map      allocation map (map/map.c)
 *       FROM.rename   intent record of a rename of FROM in progress (intent.h;
 *                     older versions wrote "rename")
 *       NAME.unlink   intent record of an unlink in progress
 *       NAME.grow     journal of a grow in progress (grow.c)
 *       .tmp.PID.N    temporary files (tmpfile.h), removed at the next open
 *
 * The table of open images is a sorted array under one mutex; it is only
 * touched by lookups and the namespace operations, never by I/O (the FUSE
 * layer keeps image pointers in its file handles).  The namespace
 * operations hold the mutex from start to end, so one multi-file change
 * runs at a time.
 *
 * The sidecar declares an image: a name is an image when NAME.json
 * exists.  Each multi-file operation is ordered so that a crash at any
 * point leaves the name as before the operation or as after it, once the
 * next open of the store (recover.c) has run:
 *   create:  the sidecar first (the commit: a sidecar without a backing
 *            file declares an image, which is made when it is loaded),
 *            then map and backing file; a failure removes them, the
 *            sidecar last;
 *   unlink:  intent record NAME.unlink (with the backing file's inode),
 *            the sidecar (the commit), backing file and map, the record;
 *            recovery finishes it when the sidecar is gone, else drops it;
 *   rename:  intent record FROM.rename, then map, backing, sidecar,
 *            then the record goes; an interrupted rename is finished (or
 *            rolled back), and while a record is left the renames of the
 *            names it holds are refused, no others;
 *   grow:    journal, backing and map files extended, sidecar, map header
 *            (the commit), journal removed: grow.c;
 *   eager zeroing, after a create, a load or a grow of an eagerzeroedthick
 *            image: each block zeroed then its bit set, the bits flushed
 *            (data first) every 256 MiB, the map's "zeroed" flag last;
 *            with zero_background in the image's own thread, outside this
 *            mutex; stopped or interrupted, it resumes at the next load
 *            (image/zero.c);
 *   any rewritten file: a temporary file, fsync, rename (tmpfile.h).
 * No operation overwrites or removes a file that is not a served image's
 * own: a create or rename onto a name held by a file of the user's (or
 * by an image that is refused) fails with EEXIST, and says why in the log.
 *
 * This file holds open and close and the lookups; the table is table.c,
 * the rest scan.c, lock.c, namespace.c and size.c (internal.h).
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

#include "util/clock.h"
#include "util/fdcache.h"
#include "util/fdio.h"
#include "grow.h"
#include "recover.h"
#include "internal.h"
#include "util/tmpfile.h"

/* ---- open / close ---- */

int sfs_store_open(const char *dir, const struct sfs_store_opts *o, struct sfs_store **out,
		   char *err, size_t errlen)
{
	struct sfs_store *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return sfs_err(err, errlen, -ENOMEM, "out of memory");
	s->opts = *o;
	s->statefd = s->lockfd = s->reserve_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (o->fd_budget && (rc = sfs_fdcache_new(o->fd_budget, &s->fdc)) < 0) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return sfs_err(err, errlen, rc, "out of memory");
	}
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = sfs_err(err, errlen, -errno, "%s: cannot open store: %s", dir, strerror(errno));
		goto fail;
	}
	rc = store_take_lock(s, dir, err, errlen);
	if (rc < 0)
		goto fail;
	/* what recovery cannot do for one image keeps that image out, not the store */
	rc = sfs_recover(s->dirfd, s->statefd, &s->opts.log);
	if (rc < 0) {
		sfs_err(err, errlen, rc, "%s/%s: cannot read the state directory to put the store right after a "
			"crash: %s", dir, SFS_STATE_DIR, strerror(-rc));
		goto fail;
	}
	s->renames_left = sfs_recover_renames_left(s->statefd);
	rc = s->opts.lazy ? 0 : store_scan_locked(s);
	if (rc < 0) {
		sfs_err(err, errlen, rc, "%s: cannot read store: %s", dir, strerror(-rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sfs_store_close(s);
	return rc;
}

int sfs_store_close(struct sfs_store *s)
{
	int rc = 0, r;

	if (!s)
		return 0;
	for (size_t i = 0; i < s->nents; i++) {
		r = sfs_image_close(s->ents[i].im);
		if (r < 0 && rc == 0)
			rc = r;
	}
	for (size_t i = 0; i < s->norphans; i++)
		sfs_image_close(s->orphans[i].im);
	if (s->lockfd >= 0) {
		if (s->locked && ftruncate(s->lockfd, 0) < 0 && rc == 0)
			rc = -errno;
		close(s->lockfd);
	}
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	if (s->statefd >= 0)
		close(s->statefd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	pthread_mutex_destroy(&s->lock);
	sfs_fdcache_free(s->fdc);
	free(s->ents);
	free(s->orphans);
	free(s->bad);
	free(s);
	return rc;
}

/* ---- lookups ---- */

/* What the namespace says of an image that cannot be served: it is not there, unless what ran
 * out is the daemon's (descriptors, memory), when the image itself may be fine. */
static int namespace_errno(int rc)
{
	return rc >= 0 || store_out_of_fds(rc) || rc == -ENOMEM ? rc : -ENOENT;
}

int sfs_store_lookup(struct sfs_store *s, const char *name, struct sfs_image **out, char *err,
		     size_t errlen)
{
	struct entry *e;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	pthread_mutex_lock(&s->lock);
	e = store_find(s, name, NULL);
	if (e && store_prune_if_gone(s, e))
		e = NULL;
	if (!e)
		rc = store_load_locked(s, name, &e, err, errlen);
	if (rc == 0) {
		e->refs++;
		*out = e->im;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_get(struct sfs_store *s, const char *name, struct sfs_image **out)
{
	char err[512];

	return namespace_errno(sfs_store_lookup(s, name, out, err, sizeof(err)));
}

int sfs_store_stat(struct sfs_store *s, const char *name, struct stat *st)
{
	struct entry *e;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s->lock);
	e = store_find(s, name, NULL);
	/* the name's backing file, already looked at by name for prune_if_gone */
	if (e && store_prune_if_gone_stat(s, e, st))
		e = NULL;
	if (e) {
		dev_t dev;
		ino_t ino;

		sfs_image_identity(e->im, &dev, &ino);
		if (st->st_dev != dev || st->st_ino != ino)    /* the fstatat failed otherwise */
			rc = sfs_image_backing_stat(e->im, st);
	} else {
		char err[512];

		rc = namespace_errno(store_load_locked(s, name, &e, err, sizeof(err)));
		if (rc == 0)
			rc = sfs_image_backing_stat(e->im, st);
	}
	if (rc == -ESTALE)
		rc = -ENOENT;
	if (rc == 0)
		sfs_image_stat_fill(e->im, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void sfs_store_put(struct sfs_store *s, struct sfs_image *im)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nents; i++) {
		if (s->ents[i].im == im) {
			s->ents[i].refs--;
			pthread_mutex_unlock(&s->lock);
			return;
		}
	}
	for (size_t i = 0; i < s->norphans; i++) {
		if (s->orphans[i].im == im) {
			if (--s->orphans[i].refs == 0) {
				char scname[SFS_NAME_MAX + 8];

				/* what was said about its name while it was open no longer holds */
				sfs_sidecar_name(scname, sizeof(scname), s->orphans[i].name);
				store_forget_reported(s, scname);
				s->orphans[i] = s->orphans[--s->norphans];
				pthread_mutex_unlock(&s->lock);
				sfs_image_close(im);
				return;
			}
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

int sfs_store_list(struct sfs_store *s, int (*cb)(void *ctx, const char *name), void *ctx)
{
	char (*names)[SFS_NAME_MAX + 1];
	size_t n;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	n = s->nents;
	names = malloc((n ? n : 1) * sizeof(*names));
	if (!names) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(names[i], s->ents[i].name, sizeof(names[i]));
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cb(ctx, names[i]);
	free(names);
	return rc;
}

int sfs_store_list_range(struct sfs_store *s, size_t first, size_t max,
			 int (*cb)(void *ctx, const char *name), void *ctx)
{
	char (*names)[SFS_NAME_MAX + 1];
	size_t n = 0;
	int rc = 0;

	if (max == 0)
		return 0;
	names = malloc(max * sizeof(*names));
	if (!names)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	for (size_t i = first; i < s->nents && n < max; i++)
		memcpy(names[n++], s->ents[i].name, sizeof(names[0]));
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cb(ctx, names[i]);
	free(names);
	return rc < 0 ? rc : (int)n;
}

int sfs_store_rescan(struct sfs_store *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store_scan_locked(s);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void sfs_store_tally(struct sfs_store *s, struct sfs_store_tally *t)
{
	struct stat st;

	pthread_mutex_lock(&s->lock);
	t->served = s->nents;
	t->refused = 0;
	t->zeroing = 0;
	t->open_max = 0;
	if (s->fdc) {
		struct sfs_fdcache_usage u;

		sfs_fdcache_usage(s->fdc, &u);
		t->open_max = u.budget / (s->opts.buffered ? 2 : 3);
		t->open_now = u.open;
		t->fds_now = u.used;
		t->evictions = u.evictions;
	} else {
		t->open_now = s->nents;
		t->fds_now = 0;
		t->evictions = 0;
	}
	for (size_t i = 0; i < s->nbad; i++)    /* reported, and not taken away since */
		if (fstatat(s->dirfd, s->bad[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			t->refused++;
	for (size_t i = 0; i < s->nents; i++) {
		uint64_t done, total;
		int err;

		if (sfs_image_zeroing(s->ents[i].im, &done, &total, &err) == SFS_ZEROING_RUNNING)
			t->zeroing++;
	}
	pthread_mutex_unlock(&s->lock);
}

/* Images looked at under one hold of the store's mutex: lookups wait at most that long. */
#define IDLE_BATCH 256

void sfs_store_idle(struct sfs_store *s, uint64_t quiet_ns, struct sfs_store_idle *out)
{
	uint64_t now = sfs_now_ns();
	size_t packed = 0, i = 0, j = 0;
	bool more = true;

	/* in batches, the mutex let go between them: an image added or removed meanwhile may be
	 * looked at twice or not at all, which the next look puts right */
	while (more) {
		pthread_mutex_lock(&s->lock);
		for (size_t n = 0; n < IDLE_BATCH && i < s->nents; n++, i++)
			packed += sfs_image_stats_idle(s->ents[i].im) == 1;
		for (size_t n = 0; i >= s->nents && n < IDLE_BATCH && j < s->norphans; n++, j++)
			packed += sfs_image_stats_idle(s->orphans[j].im) == 1;
		more = i < s->nents || j < s->norphans;
		pthread_mutex_unlock(&s->lock);
	}
	out->packed = packed;
	out->closed = s->fdc && now > quiet_ns ? sfs_fdcache_close_idle(s->fdc, now - quiet_ns) : 0;
}

int sfs_store_fd(const struct sfs_store *s)
{
	return s->dirfd;
}
