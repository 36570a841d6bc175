/* SPDX-License-Identifier: MIT */
/*
 * scan.c - loading an image from its sidecar, and the scan of the store.
 *
 * A sidecar is loaded when the store opens (the scan) or when a lookup
 * names an image not in the table yet.  A sidecar that cannot be served is
 * logged once per version of the file (already_reported) and the lookup
 * returns why; an image that was removed or replaced behind the store's
 * back, or whose sidecar now says something else, is dropped from the
 * namespace (prune_if_gone), its open files keeping the old instance.
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

/* ---- sidecar loading ---- */

static bool already_reported(struct sfs_store *s, const char *name, const struct stat *st)
{
	for (size_t i = 0; i < s->nbad; i++) {
		struct bad_sidecar *b = &s->bad[i];

		if (strcmp(b->name, name) == 0) {
			bool same = b->size == st->st_size && b->mtime.tv_sec == st->st_mtim.tv_sec &&
				    b->mtime.tv_nsec == st->st_mtim.tv_nsec;

			b->size = st->st_size;
			b->mtime = st->st_mtim;
			return same;
		}
	}
	if (store_grow_array((void **)&s->bad, &s->capbad, s->nbad + 1, sizeof(*s->bad)) == 0) {
		snprintf(s->bad[s->nbad].name, sizeof(s->bad[s->nbad].name), "%s", name);
		s->bad[s->nbad].size = st->st_size;
		s->bad[s->nbad].mtime = st->st_mtim;
		s->nbad++;
	}
	return false;
}

void store_forget_reported(struct sfs_store *s, const char *name)
{
	for (size_t i = 0; i < s->nbad; i++) {
		if (strcmp(s->bad[i].name, name) == 0) {
			s->bad[i] = s->bad[--s->nbad];
			return;
		}
	}
}

bool store_out_of_fds(int rc)
{
	return rc == -EMFILE || rc == -ENFILE;
}

/* An image dropped from the namespace while files were open on it (its
 * sidecar went away or changed) comes back when it is declared again: the
 * same instance, never a second one over the same backing file and map,
 * which would keep two maps in memory and lose one's bits.  The new
 * sidecar must say what the instance runs with; if it says anything else
 * the name is refused (-EBUSY, logged once) until the instance is closed,
 * and then loaded from the sidecar as at mount time. */
static int revive_orphan(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc,
			 const struct stat *scst, struct entry **out)
{
	struct stat want;
	char diff[512];
	dev_t dev;
	ino_t ino;

	if (fstatat(s->dirfd, name, &want, AT_SYMLINK_NOFOLLOW) < 0)
		return -ENOENT;
	for (size_t i = 0; i < s->norphans; i++) {
		struct entry e = s->orphans[i];

		/* the file under the name is the one the instance opened (so it is not unlinked) */
		sfs_image_identity(e.im, &dev, &ino);
		if (ino != want.st_ino || dev != want.st_dev)
			continue;
		if (store_sidecar_diff(&e.declared, sc, diff, sizeof(diff))) {
			char scname[SFS_NAME_MAX + 8];

			sfs_sidecar_name(scname, sizeof(scname), name);
			if (!already_reported(s, scname, scst))
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: declared again while the image is still "
					 "open with other values (%s); not served until its open files are closed",
					 scname, diff);
			return -EBUSY;
		}
		snprintf(e.name, sizeof(e.name), "%s", name);
		e.refs++;                    /* the table's reference again */
		e.scid = store_file_id_of(scst);
		if (sfs_image_set_name(e.im, name) < 0 || store_put_in(s, &e) < 0)
			return -ENOMEM;
		s->orphans[i] = s->orphans[--s->norphans];
		sfs_logf(&s->opts.log, SFS_LOG_INFO, "%s: declared again; served by the instance still open", name);
		if (out)
			*out = store_find(s, name, NULL);
		return 0;
	}
	return -ENOENT;
}

/* Load image name from its sidecar into the table (store lock held). -ENOENT when undeclared
 * or not served (the reason logged once). */
int store_load_locked(struct sfs_store *s, const char *name, struct entry **out, char *err,
		      size_t errlen)
{
	char scname[SFS_NAME_MAX + 8], pend[SFS_FILE_NAME_LEN + 64];
	struct sfs_sidecar sc;
	struct sfs_image *im;
	struct file_id id;
	struct stat st;
	size_t pos;
	int rc;

	if (sfs_name_valid(name) < 0)
		return sfs_err(err, errlen, -ENOENT, "%s: not a valid image name", name);
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sfs_err(err, errlen, -ENOENT, "%s: no such image (no sidecar %s)", name, scname);
	id = store_file_id_of(&st);
	rc = sfs_sidecar_load(s->dirfd, scname, &sc, err, errlen);
	/* out of descriptors: an idle image gives its own back */
	while (store_out_of_fds(rc) && s->fdc && sfs_fdcache_evict_one(s->fdc))
		rc = sfs_sidecar_load(s->dirfd, scname, &sc, err, errlen);
	if (rc == 0 && sfs_recover_pending_known(s->statefd, name, s->renames_left, pend, sizeof(pend)))
		rc = sfs_err(err, errlen, -EUCLEAN, "%s: %s, which the store's start could not finish or "
			     "undo, is pending (the log said why; 'sectorfs-img check' on the store says what "
			     "to do)", name, pend);
	if (rc == 0) {
		rc = revive_orphan(s, name, &sc, &st, out);
		if (rc == 0)
			return 0;
		if (rc == -EBUSY)
			return sfs_err(err, errlen, -ENOENT, "%s: the name is being replaced", name);
		rc = 0;
	}
	if (rc == 0)
		rc = sfs_image_open_in(s->fdc, s->dirfd, s->statefd, name, &sc, store_image_flags(s), &s->opts.log,
				       &im, err, errlen);
	/* A sidecar that says more than the image has grows it (the user edited it). */
	if (rc == 0 && sc.size > sfs_image_geom(im).size) {
		rc = sfs_grow(s->dirfd, s->statefd, im, sc.size, false, &s->opts.log);
		if (rc < 0) {
			sfs_err(err, errlen, rc, "%s: cannot grow to the sidecar's size %llu: %s", name,
				(unsigned long long)sc.size, strerror(-rc));
			sfs_image_close(im);
		}
	}
	if (rc < 0) {
		if (!already_reported(s, scname, &st))
			sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s (image not served)", err);
		return rc;
	}
	store_forget_reported(s, scname);
	rc = store_insert(s, name, im, 1, &sc, &id);
	if (rc < 0) {
		sfs_image_close(im);
		return rc;
	}
	/* eager zeroing not finished: in the background (without zero_background the open did it);
	 * a thread that cannot start is logged, and the blocks are zeroed on first write */
	sfs_image_zero_start(im);
	/* the open's pin: an image nobody uses keeps no descriptor (the zeroing thread has its own) */
	sfs_image_release(im);
	if (out)
		*out = store_find(s, name, &pos);
	return 0;
}

/* Has e's image been removed from the store directory behind our back
 * (backing file unlinked, or another file put under its name, or its
 * sidecar gone), or its sidecar rewritten to say something else?  Then it
 * is dropped from the namespace; files still open on it keep working on
 * the instance they have.  The backing file is looked at by name and must
 * be the inode first opened (no descriptor needed); *bst is its stat
 * (valid when false is returned and the fstatat worked). */
bool store_prune_if_gone_stat(struct sfs_store *s, struct entry *e, struct stat *bst)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], err[512], diff[512];
	struct sfs_sidecar sc;
	struct file_id id;
	struct stat st;
	int brc = sfs_image_backing_stat(e->im, bst);
	bool backing_gone = brc == -ENOENT || brc == -ESTALE;
	int rc = backing_gone ? -ENOENT : store_sidecar_id(s, e->name, &id);

	sfs_sidecar_name(scname, sizeof(scname), e->name);
	if (rc == 0 && store_same_file_id(&id, &e->scid))
		return false;
	if (rc == 0) {
		/* The sidecar was written again: read it again. */
		if (sfs_sidecar_load(s->dirfd, scname, &sc, err, sizeof(err)) == 0 &&
		    !store_sidecar_diff(&e->declared, &sc, diff, sizeof(diff))) {
			e->scid = id;
			return false;
		}
		/* Held open: refused until closed (said once).  Else closed now, and the
		 * next lookup loads the new sidecar as at mount time. */
		if (e->refs > 1 && fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !already_reported(s, scname, &st)) {
			if (sfs_sidecar_load(s->dirfd, scname, &sc, err, sizeof(err)) < 0)
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s (image not served)", err);
			else
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: rewritten while the image is served, "
					 "with other values (%s); not served until its open files are closed",
					 scname, diff);
		}
		store_remove_entry(s, e);
		return true;
	}
	/* The map described the removed file; a sidecar alone keeps it for its backing file. */
	sfs_map_name(mapname, sizeof(mapname), e->name);
	if (backing_gone) {
		unlinkat(s->statefd, mapname, 0);
		sfs_image_fail_pause(e->im);    /* its failure state goes with the map */
		sfs_remove_state_files(s->statefd, e->name);
		sfs_image_fail_resume(e->im, NULL, true);
	}
	if (backing_gone)
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: backing file removed from the store while served; "
			 "open files keep the removed data until closed", e->name);
	else
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: sidecar removed from the store while served; "
			 "no longer served until it is declared again", e->name);
	store_remove_entry(s, e);
	return true;
}

bool store_prune_if_gone(struct sfs_store *s, struct entry *e)
{
	struct stat bst;

	return store_prune_if_gone_stat(s, e, &bst);
}

struct entry *store_find_live(struct sfs_store *s, const char *name)
{
	struct entry *e = store_find(s, name, NULL);

	return e && !store_prune_if_gone(s, e) ? e : NULL;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load every sidecar of the store not in the table yet.  The new names are loaded in sorted
 * order, so that each goes in at the end of a table filled from empty (a first scan of
 * thousands of images moves no entry). */
int store_scan_locked(struct sfs_store *s)
{
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL, err[512];
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (fd < 0)
		return -errno;
	for (size_t i = s->nents; i-- > 0;)
		store_prune_if_gone(s, &s->ents[i]);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = sfs_sidecar_image_len(de->d_name);

		if (de->d_name[0] == '.' || !len)
			continue;
		if (len > SFS_NAME_MAX) {
			struct stat st;

			if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !already_reported(s, de->d_name, &st))
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: image name too long (more than %d bytes; "
					 "image not served)", de->d_name, SFS_NAME_MAX);
			continue;
		}
		if (store_grow_array((void **)&names, &cap, n + 1, sizeof(*names)) < 0 ||
		    !(names[n] = strndup(de->d_name, len))) {
			rc = -ENOMEM;
			break;
		}
		if (store_find(s, names[n], NULL))
			free(names[n]);
		else
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	/* the names are new to the table (checked as they were read) and each other */
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			store_load_locked(s, names[i], NULL, err, sizeof(err));
		free(names[i]);
	}
	free(names);
	return rc;
}
