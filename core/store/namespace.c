/* SPDX-License-Identifier: MIT */
/*
 * namespace.c - changing the namespace: create, unlink and rename.
 *
 * Each is ordered, around an intent record, so that a crash leaves the
 * name as before or as after (store.c draws the order; recover.c finishes
 * or undoes what a crash interrupted).  An image's failure state files
 * (NAME.disk, NAME.undo) move and go with its map, the state paused
 * meanwhile (fail.h).  A name held by a file of the
 * user's, or by an image that is refused, is never overwritten.
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
#include "util/fileid.h"
#include "grow.h"
#include "intent.h"
#include "recover.h"
#include "util/step.h"
#include "internal.h"
#include "util/tmpfile.h"

/* ---- changes ---- */

/* Is name held by a file that is not a served image's: 0 when free or served, else -EEXIST
 * with why logged (what for: "create", "rename onto"). */
static int held_by_other(struct sfs_store *s, const char *name, const char *what)
{
	char scname[SFS_NAME_MAX + 8];
	struct stat st;
	bool sc, bk;

	if (store_find(s, name, NULL))
		return 0;
	char pending[SFS_FILE_NAME_LEN + 2 * SFS_NAME_MAX + 64];

	sfs_sidecar_name(scname, sizeof(scname), name);
	sc = fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0;
	bk = fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!sc && !bk && sfs_recover_pending_known(s->statefd, name, s->renames_left, pending, sizeof(pending))) {
		/* what recovery could not finish would act on the new image's files */
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: cannot %s it: %s is still pending (see "
			 "'sectorfs-img check' on the store)", name, what, pending);
		return -EEXIST;
	}
	if (!sc && !bk)
		return 0;
	sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: cannot %s it: %s in the store is not a served image (%s); "
		 "left alone", name, what, sc ? scname : name,
		 sc ? "its sidecar is refused, see the earlier message" :
		 "a file put there by hand, or an image whose sidecar was removed");
	return -EEXIST;
}

int sfs_store_create(struct sfs_store *s, const char *name, struct sfs_image **out)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], err[512];
	struct sfs_sidecar sc = s->opts.defaults;
	struct sfs_image *im = NULL;
	struct file_id id;
	int rc;

	if (sfs_name_valid(name) < 0)
		return -EINVAL;
	sc.size = 0;
	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	pthread_mutex_lock(&s->lock);
	if (store_find(s, name, NULL)) {
		pthread_mutex_unlock(&s->lock);
		return -EEXIST;
	}
	rc = held_by_other(s, name, "create");
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	/* 1: the sidecar declares the image (the commit point) */
	rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, &sc);
	if (rc == 0)
		rc = sfs_step("create", 1);
	/* 2: map and backing file */
	if (rc == 0) {
		rc = sfs_image_open_in(s->fdc, s->dirfd, s->statefd, name, &sc, store_image_flags(s) | SFS_IMAGE_CREATE,
				       &s->opts.log, &im, err, sizeof(err));
		if (rc < 0)
			sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s", err);
	}
	if (rc == 0)
		rc = sfs_step("create", 2);
	if (rc == 0)
		rc = store_sidecar_id(s, name, &id);
	if (rc == 0)
		rc = store_insert(s, name, im, 2, &sc, &id);   /* the table's reference and the caller's */
	if (rc < 0) {
		/* undo, the sidecar last: a crash in between leaves a declared image */
		if (im) {
			sfs_image_close(im);
			unlinkat(s->dirfd, name, 0);
			unlinkat(s->statefd, mapname, 0);
			fsync(s->statefd);
			fsync(s->dirfd);
		}
		sfs_remove_durably(s->dirfd, scname);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	sfs_image_unpin(im);           /* idle, open: its creator is about to use it */
	*out = im;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int sfs_store_unlink(struct sfs_store *s, const char *name)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], rec[SFS_NAME_MAX + 16];
	struct sfs_intent in = { .kind = SFS_INTENT_UNLINK };
	struct entry *e;
	dev_t dev;
	ino_t ino;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (!(e = store_find_live(s, name))) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	snprintf(rec, sizeof(rec), "%s" SFS_UNLINK_SUFFIX, name);
	sfs_image_fail_pause(e->im);   /* its failure state writes no file while they go */
	/* 1: the intent, naming the image and its backing file (prune_if_gone found it there) */
	sfs_image_identity(e->im, &dev, &ino);
	snprintf(in.name, sizeof(in.name), "%s", name);
	in.dev = (uint64_t)dev;
	in.ino = (uint64_t)ino;
	in.img = sfs_image_intent_who(e->im);
	rc = sfs_intent_write(s->statefd, &in);
	if (rc == 0)
		rc = sfs_step("unlink", 1);
	/* 2: the sidecar goes: the commit point */
	if (rc == 0 && (unlinkat(s->dirfd, scname, 0) < 0 || fsync(s->dirfd) < 0))
		rc = -errno;
	if (rc < 0) {
		sfs_remove_durably(s->statefd, rec);
		sfs_image_fail_resume(e->im, NULL, false);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	rc = sfs_step("unlink", 2);
	/* 3: backing file, map and failure state; 4: the intent */
	if (rc == 0 && unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && unlinkat(s->statefd, mapname, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0)
		rc = sfs_remove_state_files(s->statefd, name);
	if (rc == 0 && (fsync(s->dirfd) < 0 || fsync(s->statefd) < 0))
		rc = -errno;
	if (rc == 0)
		rc = sfs_step("unlink", 3);
	if (rc == 0)
		rc = sfs_remove_durably(s->statefd, rec);
	if (rc < 0)
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: unlinked, but its files are not all removed (%s); "
			 "the next start of the store finishes it", name, strerror(-rc));
	sfs_image_fail_resume(e->im, NULL, true);
	store_remove_entry(s, e);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* What a rename record says of the image of e: its identity, backing file and sidecar. */
static struct sfs_intent_who who_of(struct sfs_store *s, struct entry *e)
{
	struct sfs_intent_who w = sfs_image_intent_who(e->im);
	char scname[SFS_NAME_MAX + 8];

	sfs_sidecar_name(scname, sizeof(scname), e->name);
	w.has_sidecar = sfs_fileid_at(s->dirfd, scname, &w.sidecar, NULL) == 0;
	return w;
}

int sfs_store_rename(struct sfs_store *s, const char *from, const char *to, bool noreplace)
{
	struct sfs_intent in = { .kind = SFS_INTENT_RENAME };
	char pending[SFS_FILE_NAME_LEN + 2 * SFS_NAME_MAX + 64];
	struct entry *e, *t, moved;
	struct sfs_geom geom;
	int rc;

	if (sfs_name_valid(to) < 0)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!(e = store_find_live(s, from))) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	if (strcmp(from, to) == 0) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	t = store_find_live(s, to);
	if (t && noreplace) {
		pthread_mutex_unlock(&s->lock);
		return -EEXIST;
	}
	/* Only a served image is replaced; a file of the user's, or a refused image, never. */
	rc = t ? 0 : held_by_other(s, to, "rename onto");
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	/* a rename record left (one recovery could not apply, or one of this run's that stopped part
	 * way) keeps the renames of its names out, its own name FROM.rename too; no other rename */
	if (sfs_recover_pending_rename(s->statefd, from, s->renames_left, pending, sizeof(pending)) ||
	    sfs_recover_pending_rename(s->statefd, to, s->renames_left, pending, sizeof(pending))) {
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "rename of %s to %s refused: %s is left from a crash or a "
			 "failure (see 'sectorfs-img check' on the store)", from, to, pending);
		pthread_mutex_unlock(&s->lock);
		return -EBUSY;
	}
	/* the failure states write no file while theirs move; to's are replaced, not left behind */
	sfs_image_fail_pause(e->im);
	if (t)
		sfs_image_fail_pause(t->im);
	geom = sfs_image_geom(e->im);
	rc = sfs_fail_cover_files(s->statefd, from, to, geom.lss, geom.pss);
	/* 1: the intent, naming the image's files and the replaced one's; 2: map, failure state,
	 * backing file, sidecar; 3: the intent goes */
	snprintf(in.name, sizeof(in.name), "%s", from);
	snprintf(in.to, sizeof(in.to), "%s", to);
	in.img = who_of(s, e);
	in.has_over = t != NULL;
	if (t)
		in.over = who_of(s, t);
	if (rc == 0)
		rc = sfs_intent_write(s->statefd, &in);
	if (rc == 0)
		rc = sfs_step("rename", 1);
	if (rc < 0) {
		if (sfs_intent_remove(s->statefd, &in) < 0)
			s->renames_left = true;
		goto resume;
	}
	rc = sfs_move_image_files(s->dirfd, s->statefd, from, to, t != NULL);
	if (rc < 0) {
		s->renames_left = true;
		/* Stopped part way: the intent stays, and the next start finishes the move.
		 * Until then the names are served as they were. */
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "rename of %s to %s failed part way (%s); the next start "
			 "of the store finishes it", from, to, strerror(-rc));
		goto resume;
	}
	/* Moved: the rename is done, whatever removing the intent says (a leftover
	 * intent finds nothing to move). */
	rc = sfs_step("rename", 2);
	if (rc == 0)
		rc = sfs_intent_remove(s->statefd, &in);
	if (rc < 0)
		s->renames_left = true;
	if (t) {
		sfs_image_fail_resume(t->im, NULL, true);
		store_remove_entry(s, t);
	}
	moved = store_take_out(s, store_find(s, from, NULL));
	snprintf(moved.name, sizeof(moved.name), "%s", to);
	sfs_image_set_name(moved.im, to);
	sfs_image_fail_resume(moved.im, to, false);
	if (store_put_in(s, &moved) < 0 && rc == 0)
		rc = -ENOMEM;
	pthread_mutex_unlock(&s->lock);
	return rc;
resume:
	if (t)
		sfs_image_fail_resume(t->im, NULL, false);
	sfs_image_fail_resume(e->im, NULL, false);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
