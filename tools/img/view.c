/* SPDX-License-Identifier: MIT */
/*
 * view.c - the on-disk state of one image, looked at without the lock.
 *
 * info, map and check read the sidecar, the allocation map and the
 * backing file directly with the core's parsers (sfs_sidecar_load,
 * sfs_map_open), never through sfs_image_open: opening an image may
 * create, extend, import or zero it, and a command that only looks must
 * change nothing and must work while a daemon serves the store.  While
 * served, the map on disk is the state of the daemon's last flush.  The
 * map is opened SFS_MAP_RDONLY (no reserve, no trim, no upgrade: the file
 * is not touched) and SFS_MAP_SALVAGE, so that a bitmap whose chunks fail
 * their checksum under a good header still shows its geometry to check,
 * with the damage (sfs_map_damage); info and map refuse such a map.  While
 * the store is served a map that looks damaged is read again (open_map).
 *
 * Each piece keeps its own result so that check can report every
 * problem, and info/map can explain the first one that stops them.  For
 * check the view can show the image as the next start's recovery will
 * leave it (img_view_open_as): a pending rename's files where they are
 * now, a pending grow's sidecar as it will be rewritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "map/ident.h"

/* Open the map read-only and salvaging.  While a daemon serves the store, a read
 * that overlaps its write of the same page can see part of it, which fails a
 * checksum with nothing wrong on disk: then look twice more, 10 ms apart,
 * before reporting damage. */
static void open_map(struct img_view *v, const char *fname)
{
	for (int tries = 0;; tries++) {
		v->map_rc = sfs_map_open(v->state_fd, fname, SFS_MAP_RDONLY | SFS_MAP_SALVAGE, NULL, &v->map,
					 v->map_err, sizeof(v->map_err));
		if (v->map_rc < 0)
			v->map = NULL;
		if (!v->served || tries == 2 ||
		    !(v->map_rc == -EUCLEAN || (v->map && sfs_map_damage(v->map)->chunks)))
			return;
		sfs_map_close(v->map);
		v->map = NULL;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
}

const struct tool_opt img_json_opts[] = {
	[IMG_OPT_JSON] = { "json", 0, TOOL_FLAG },
	{ NULL },
};

/* The name the image's file f (SFS_RECOVER_MAP, ...) is under now: its own, or, while a rename
 * is pending, the one the next start moves it from. */
static const char *now_under(const struct img_view *v, int f)
{
	const struct sfs_recover_item *p = v->pend;

	if (!p || !p->is_record || p->kind != SFS_INTENT_RENAME || !p->at_other[f] ||
	    (p->verdict != SFS_RECOVER_FINISH && p->verdict != SFS_RECOVER_UNDO))
		return v->ref->name;
	return strcmp(v->ref->name, p->to) == 0 ? p->name : p->to;
}

/* Does the regular file fd hold data (not all holes or unwritten extents)? */
static bool holds_data(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool yes;

	if (fd < 0)
		return true;
	yes = !(lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO);
	close(fd);
	return yes;
}

/* What the next start changes of what the view shows (pend's sizes and mode). */
static void overlay(struct img_view *v)
{
	const struct sfs_recover_item *p = v->pend;

	if (!p || p->verdict == SFS_RECOVER_BLOCKED)
		return;
	if (p->size_set && v->sc_rc == 0)
		v->sc.size = p->size;
	if (p->prov_set && v->sc_rc == 0)
		v->sc.prov = p->prov;
	if (p->backing_cut && v->bk_rc == 0 && (uint64_t)v->bk.st_size > p->backing_len)
		v->bk.st_size = (off_t)p->backing_len;
}

int img_view_open(struct img_view *v, const struct img_ref *ref)
{
	return img_view_open_as(v, ref, NULL);
}

int img_view_open_as(struct img_view *v, const struct img_ref *ref, const struct sfs_recover_item *pend)
{
	char fname[SFS_NAME_MAX + 8];
	struct stat st;

	memset(v, 0, sizeof(*v));
	v->ref = ref;
	v->pend = pend;
	v->state_fd = -1;
	if (img_store_exists(ref->store) < 0)
		return -1;
	v->store_fd = open(ref->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->store_fd < 0) {
		tool_error("%s: cannot open store: %s", ref->store, strerror(errno));
		return -1;
	}
	v->state_fd = openat(v->store_fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	sfs_sidecar_name(fname, sizeof(fname), now_under(v, SFS_RECOVER_SIDECAR));
	v->sc_present = fstatat(v->store_fd, fname, &st, AT_SYMLINK_NOFOLLOW) == 0;
	v->sc_rc = -ENOENT;
	if (v->sc_present)
		v->sc_rc = sfs_sidecar_load(v->store_fd, fname, &v->sc, v->sc_err, sizeof(v->sc_err));

	v->served = img_served(ref->store, v->holder, sizeof(v->holder));
	sfs_map_name(fname, sizeof(fname), now_under(v, SFS_RECOVER_MAP));
	v->map_rc = -ENOENT;
	if (v->state_fd >= 0)
		open_map(v, fname);

	v->bk_rc = sfs_fileid_at(v->store_fd, now_under(v, SFS_RECOVER_BACKING), &v->bk_id, &v->bk);
	v->bk_data = v->bk_rc == 0 && S_ISREG(v->bk.st_mode) &&
		     holds_data(v->store_fd, now_under(v, SFS_RECOVER_BACKING));
	overlay(v);
	return 0;
}

void img_view_close(struct img_view *v)
{
	sfs_map_close(v->map);
	v->map = NULL;
	if (v->state_fd >= 0)
		close(v->state_fd);
	if (v->store_fd >= 0)
		close(v->store_fd);
	v->state_fd = v->store_fd = -1;
}

int img_view_image(struct img_view *v, struct sfs_map_info *mi, bool *created)
{
	const struct img_ref *r = v->ref;
	char why[768];

	if (!v->sc_present && v->map_rc == -ENOENT && v->bk_rc == -ENOENT) {
		tool_error("%s: no such image (no sidecar %s" SFS_SIDECAR_SUFFIX " in %s)", r->path, r->name, r->store);
		return -1;
	}
	if (!v->sc_present) {
		tool_error("%s: no sidecar %s" SFS_SIDECAR_SUFFIX ": the image is not declared (see '" IMG_PROG
			   " check %s')", r->path, r->name, r->path);
		return -1;
	}
	if (v->sc_rc < 0) {
		tool_error("%s/%s", r->store, v->sc_err);
		return -1;
	}
	if (v->map_rc == -ENOENT && v->bk_rc == -ENOENT) {
		/* Declared, not created yet: the daemon (or create) makes it. */
		mi->geom = (struct sfs_geom){ v->sc.size, v->sc.lss, v->sc.pss, v->sc.block_size };
		mi->prov = v->sc.prov;
		mi->flags = 0;
		*created = false;
		return 0;
	}
	if (v->map_rc == -ENOENT) {
		tool_error("%s: allocation map " SFS_STATE_DIR "/%s" SFS_MAP_SUFFIX " is missing (see '" IMG_PROG
			   " check --repair %s')", r->path, r->name, r->path);
		return -1;
	}
	if (v->map_rc < 0) {
		tool_error("%s: %s (see '" IMG_PROG " check %s')", r->path, v->map_err, r->path);
		return -1;
	}
	if (sfs_map_damage(v->map)->chunks) {
		char text[512];

		tool_error("%s: %s (see '" IMG_PROG " check %s')", r->path,
			   img_view_damage_text(v, text, sizeof(text)), r->path);
		return -1;
	}
	if (v->bk_rc < 0) {
		tool_error("%s: backing file: %s (see '" IMG_PROG " check %s')", r->path,
			   strerror(-v->bk_rc), r->path);
		return -1;
	}
	if (!sfs_map_tie_servable(sfs_map_tie(v->map, r->name, v->bk_rc == 0 ? &v->bk_id : NULL, why, sizeof(why)))) {
		tool_error("%s: the allocation map is not this image's: %s (see '" IMG_PROG " check %s')", r->path,
			   why, r->path);
		return -1;
	}
	*mi = *sfs_map_info(v->map);
	*created = true;
	if (sfs_sidecar_diff(&v->sc, &mi->geom, mi->prov) & ~SFS_DIFF_LARGER)
		tool_error("warning: %s: the sidecar disagrees with the recorded geometry; showing the "
			   "recorded one (see '" IMG_PROG " check %s')", r->path, r->path);
	return 0;
}

const char *img_view_damage_text(const struct img_view *v, char *buf, size_t len)
{
	char fname[SFS_NAME_MAX + 8];

	sfs_map_name(fname, sizeof(fname), v->ref->name);
	sfs_map_damage_text(fname, sfs_map_damage(v->map), buf, len);
	return buf;
}
