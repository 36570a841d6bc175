/* SPDX-License-Identifier: MIT */
/*
 * make.c - images the tools make and convert whole: make (a new image
 * from its sidecar, a raw file copied in, eagerzeroedthick zeroed with
 * progress) and inflate (to eagerzeroedthick).
 *
 * Make, around the intent record NAME.create (recover.h):
 *   1. the record "create\n";
 *   2. backing file and map (sfs_image_open; eagerzeroedthick opened as
 *      zeroedthick, so that the zeroing below reports its progress);
 *   3. the record rewritten to name the image and its backing file by
 *      identity (intent.h; before that, the next start knows the backing
 *      file by the map's identity, map/ident.h);
 *   4. the data: the raw file copied in (sfs_image_import_raw), then for
 *      eagerzeroedthick every block zeroed (sfs_image_fill) and the mode
 *      recorded in the map (sfs_image_make_eager); the image closed;
 *   5. the sidecar, which declares the image: the commit point;
 *   then the record goes.  A failure or a cancel before 5 removes the
 *   files and the record; a crash before 5 is undone at the next start
 *   (the recorded inode tells our backing file from one a user put
 *   there), after it finished.
 *
 * Inflate:
 *   1. every unallocated block zeroed and marked (sfs_image_fill): a crash
 *      or a cancel leaves a valid image of its old mode, more blocks
 *      allocated, and running it again goes on from there;
 *   2. the record NAME.inflate;
 *   3. the map header says eagerzeroedthick + ZEROED, rewritten in place
 *      (sfs_image_make_eager): the commit point;
 *   4. the sidecar says it too;
 *   then the record goes.  After a crash (or a failure) past 3 the next
 *   start makes the sidecar say what the map says.
 *
 * sfs_step(op, n) follows step n ("make", "inflate"; step.h).  The store's
 * lock is held from the first change to the last: these are for the
 * tools, which have the store to themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/fileid.h"
#include "intent.h"
#include "recover.h"
#include "util/step.h"
#include "internal.h"
#include "util/tmpfile.h"

/* Enter phase name (NULL: the data is in place): 0, or -ECANCELED when pr says stop. */
static int phase(const struct sfs_store_progress *pr, const char *name)
{
	return pr && pr->phase && pr->phase(pr->ctx, name) ? -ECANCELED : 0;
}

static sfs_progress_fn progress_fn(const struct sfs_store_progress *pr)
{
	return pr ? pr->fn : NULL;
}

static void *progress_ctx(const struct sfs_store_progress *pr)
{
	return pr ? pr->ctx : NULL;
}

/* Is any of name's three files there?  0, or -EEXIST with err naming it. */
static int refuse_existing(struct sfs_store *s, const char *name, char *err, size_t errlen)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], pending[SFS_FILE_NAME_LEN + 64];
	struct stat st;

	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	if (fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sfs_err(err, errlen, -EEXIST, "image already exists (%s is there)", scname);
	if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sfs_err(err, errlen, -EEXIST, "image already exists (%s is there)", name);
	if (fstatat(s->statefd, mapname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sfs_err(err, errlen, -EEXIST, "image already exists (" SFS_STATE_DIR "/%s is there)",
			       mapname);
	if (sfs_recover_pending(s->statefd, name, pending, sizeof(pending)))
		return sfs_err(err, errlen, -EEXIST, "%s is pending for that name (see 'sectorfs-img check' on "
			       "the store)", pending);
	return 0;
}

/* Write the intent record name+suffix: 0, or -errno with err saying it. */
static int put_record(struct sfs_store *s, const char *name, const char *suffix, const char *text,
		      char *err, size_t errlen)
{
	int rc = sfs_intent_put(s->statefd, name, suffix, text);

	if (rc < 0)
		return sfs_err(err, errlen, rc, "cannot write " SFS_STATE_DIR "/%s%s: %s", name, suffix,
			       strerror(-rc));
	return 0;
}

/* Make steps 1 to 3: the record, the backing file and the map (*out, open; *made, the
 * backing file's identity, once *out is set), the record naming it. */
static int make_files(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc,
		      struct sfs_image **out, struct sfs_fileid *made, char *err, size_t errlen)
{
	struct sfs_intent rec = { .kind = SFS_INTENT_CREATE };
	struct sfs_sidecar osc = *sc;
	int rc;

	if (sc->prov == SFS_PROV_EAGERZEROEDTHICK)
		osc.prov = SFS_PROV_ZEROEDTHICK;          /* zeroed in step 4, with progress */
	rc = put_record(s, name, SFS_CREATE_SUFFIX, "create\n", err, errlen);
	if (rc == 0)
		rc = sfs_step("make", 1);
	if (rc < 0)
		return rc;
	rc = sfs_image_open(s->dirfd, s->statefd, name, &osc, (store_image_flags(s) & SFS_IMAGE_BUFFERED) | SFS_IMAGE_CREATE,
			    &s->opts.log, out, err, errlen);
	if (rc < 0)
		return rc;
	rc = sfs_fileid_fd(sfs_image_fd(*out), made, NULL);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "cannot stat the new backing file: %s", strerror(-rc));
	rc = sfs_step("make", 2);
	if (rc < 0)
		return rc;
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	rec.img = sfs_image_intent_who(*out);
	rc = sfs_intent_write(s->statefd, &rec);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "cannot write " SFS_STATE_DIR "/%s" SFS_CREATE_SUFFIX ": %s", name,
			       strerror(-rc));
	return sfs_step("make", 3);
}

/* Make step 4 before the close: src_fd copied in (when >= 0), an eagerzeroedthick image
 * zeroed and recorded so.  0, -ECANCELED or -errno (err filled). */
static int make_data(struct sfs_image *im, const struct sfs_sidecar *sc, int src_fd,
		     const struct sfs_store_progress *pr, char *err, size_t errlen)
{
	int rc = 0;

	if (src_fd >= 0) {
		rc = phase(pr, "copying");
		if (rc == 0)
			rc = sfs_image_import_raw(im, src_fd, progress_fn(pr), progress_ctx(pr));
		if (rc < 0 && rc != -ECANCELED)
			return sfs_err(err, errlen, rc, "copying the raw file failed: %s", strerror(-rc));
	}
	if (rc == 0 && sc->prov == SFS_PROV_EAGERZEROEDTHICK) {
		rc = phase(pr, "zeroing");
		if (rc == 0)
			rc = sfs_image_fill(im, progress_fn(pr), progress_ctx(pr));
		if (rc < 0 && rc != -ECANCELED)
			return sfs_err(err, errlen, rc, "zeroing failed: %s", strerror(-rc));
		if (rc == 0 && (rc = sfs_image_make_eager(im)) < 0)
			return sfs_err(err, errlen, rc, "cannot record eagerzeroedthick in the map: %s",
				       strerror(-rc));
	}
	return rc == 0 ? phase(pr, NULL) : rc;
}

/* Remove what the make of image name made: its sidecar when saved, its backing file when it is
 * still the file made (made: its identity, NULL when the open failed, which removes its own
 * files), its map with it, then the record.  A file someone else put under one of the names
 * stays. */
static void remove_made(struct sfs_store *s, const char *name, const struct sfs_fileid *made, bool saved)
{
	char f[SFS_NAME_MAX + 16];
	struct sfs_fileid id;

	if (saved) {
		sfs_sidecar_name(f, sizeof(f), name);
		unlinkat(s->dirfd, f, 0);
	}
	if (made && sfs_fileid_at(s->dirfd, name, &id, NULL) == 0 && sfs_fileid_same(&id, made, true)) {
		unlinkat(s->dirfd, name, 0);
		sfs_map_name(f, sizeof(f), name);
		unlinkat(s->statefd, f, 0);
	}
	fsync(s->statefd);
	fsync(s->dirfd);
	sfs_intent_drop(s->statefd, name, SFS_CREATE_SUFFIX);
}

static int make_locked(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc, int src_fd,
		       const struct sfs_store_progress *pr, char *err, size_t errlen)
{
	char scname[SFS_NAME_MAX + 8];
	struct sfs_image *im = NULL;
	struct sfs_fileid made = { 0 };
	bool opened, saved = false;
	int rc, crc;

	rc = make_files(s, name, sc, &im, &made, err, errlen);
	opened = im != NULL;
	if (rc == 0)
		rc = make_data(im, sc, src_fd, pr, err, errlen);
	if (im) {
		crc = sfs_image_close(im);
		if (rc == 0 && crc < 0)
			rc = sfs_err(err, errlen, crc, "flushing the new image failed: %s", strerror(-crc));
	}
	if (rc == 0)
		rc = sfs_step("make", 4);
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (rc == 0 && (rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, sc)) < 0)
		sfs_err(err, errlen, rc, "cannot write sidecar %s: %s", scname, strerror(-rc));
	saved = rc == 0;
	if (rc == 0)
		rc = sfs_step("make", 5);
	if (rc < 0) {
		if (err && errlen && !err[0])
			sfs_err(err, errlen, rc, "%s", strerror(-rc));
		remove_made(s, name, opened ? &made : NULL, saved);
		return rc;
	}
	if (sfs_intent_drop(s->statefd, name, SFS_CREATE_SUFFIX) < 0)
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: cannot remove " SFS_STATE_DIR "/%s" SFS_CREATE_SUFFIX
			 " (the image is whole; the next start removes it)", name, name);
	store_forget_reported(s, scname);
	return 0;
}

int sfs_store_make_image(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc, int src_fd,
			 const struct sfs_store_progress *pr, char *err, size_t errlen)
{
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (sfs_name_valid(name) < 0)
		return sfs_err(err, errlen, -EINVAL, "'%s' is not a valid image name", name);
	pthread_mutex_lock(&s->lock);
	rc = store_find(s, name, NULL) ? sfs_err(err, errlen, -EEXIST, "image already exists") :
	     refuse_existing(s, name, err, errlen);
	if (rc == 0)
		rc = make_locked(s, name, sc, src_fd, pr, err, errlen);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Make the sidecar of im say eagerzeroedthick (with only_if_not, only when it says another
 * mode), and the store remember it.  0 or -errno (err filled). */
static int save_eager_sidecar(struct sfs_store *s, struct sfs_image *im, bool only_if_not, char *err,
			      size_t errlen)
{
	struct sfs_sidecar sc = sfs_image_sidecar(im), file;
	const char *name = sfs_image_name(im);
	char scname[SFS_NAME_MAX + 8];
	struct entry *e;
	int rc;

	sc.prov = SFS_PROV_EAGERZEROEDTHICK;
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (only_if_not && (sfs_sidecar_load(s->dirfd, scname, &file, NULL, 0) < 0 ||
			    file.prov == SFS_PROV_EAGERZEROEDTHICK))
		return 0;
	rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, &sc);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "cannot write sidecar %s: %s", scname, strerror(-rc));
	e = store_find(s, name, NULL);
	if (e && e->im == im) {
		e->declared = sc;
		store_sidecar_id(s, name, &e->scid);
	}
	return 0;
}

/* Inflate steps 2 to 4, im filled (store lock held). */
static int inflate_locked(struct sfs_store *s, struct sfs_image *im, char *err, size_t errlen)
{
	const char *name = sfs_image_name(im);
	struct sfs_intent rec = { .kind = SFS_INTENT_INFLATE, .img = sfs_image_intent_who(im) };
	int rc;

	rec.img.has_backing = false;
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	rc = sfs_intent_write(s->statefd, &rec);
	if (rc < 0)
		sfs_err(err, errlen, rc, "cannot write " SFS_STATE_DIR "/%s" SFS_INFLATE_SUFFIX ": %s", name,
			strerror(-rc));

	if (rc == 0)
		rc = sfs_step("inflate", 2);
	if (rc == 0 && (rc = sfs_image_make_eager(im)) < 0)
		sfs_err(err, errlen, rc, "cannot record eagerzeroedthick in the map: %s", strerror(-rc));
	if (rc < 0) {
		if (err && errlen && !err[0])
			sfs_err(err, errlen, rc, "%s", strerror(-rc));
		sfs_intent_drop(s->statefd, name, SFS_INFLATE_SUFFIX);
		return rc;
	}
	/* committed: from here on a failure leaves the record, and the next start finishes */
	rc = sfs_step("inflate", 3);
	if (rc == 0)
		rc = save_eager_sidecar(s, im, false, err, errlen);
	if (rc == 0)
		rc = sfs_step("inflate", 4);
	if (rc < 0) {
		size_t n = err && errlen ? strlen(err) : 0;

		if (err && errlen && !n)
			n = (size_t)snprintf(err, errlen, "%s", strerror(-rc));
		if (err && n < errlen)
			snprintf(err + n, errlen - n, " (the map says eagerzeroedthick; the next start "
				 "rewrites the sidecar)");
		return rc;
	}
	sfs_intent_drop(s->statefd, name, SFS_INFLATE_SUFFIX);
	return 0;
}

int sfs_store_inflate(struct sfs_store *s, struct sfs_image *im, const struct sfs_store_progress *pr,
		      char *err, size_t errlen)
{
	const struct sfs_map_info *mi = sfs_map_info(sfs_image_map(im));
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (mi->prov == SFS_PROV_EAGERZEROEDTHICK && (mi->flags & SFS_MAP_F_ZEROED)) {
		/* the sidecar may still say the old mode (a crash after the map was rewritten) */
		pthread_mutex_lock(&s->lock);
		rc = save_eager_sidecar(s, im, true, err, errlen);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	rc = phase(pr, "zeroing");
	if (rc == 0)
		rc = sfs_image_fill(im, progress_fn(pr), progress_ctx(pr));
	if (rc == 0)
		rc = phase(pr, NULL);
	if (rc < 0 && rc != -ECANCELED)
		return sfs_err(err, errlen, rc, "zeroing failed: %s", strerror(-rc));
	if (rc == 0)
		rc = sfs_step("inflate", 1);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&s->lock);
	rc = inflate_locked(s, im, err, errlen);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
