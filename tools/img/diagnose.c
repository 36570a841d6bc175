/* SPDX-License-Identifier: MIT */
/*
 * diagnose.c - what is wrong with an image, as its files on disk show it
 * (img_view): every problem of check.h's list with the line that reports
 * it, and why --repair leaves some of them alone.  Changes nothing.
 *
 * The recorded geometry (the map header) is the image's truth: a sidecar
 * that says otherwise is the problem, never the map.  A sidecar alone is
 * an image declared and not created yet, which is fine, and so is one
 * whose create was cut before its backing file (a map that records no
 * data).  A map that is not the image's (core/map/ident.h: another
 * image's, or made for a backing file since replaced) is a problem, and
 * nothing else it records counts against the sidecar.  The view shows the
 * image as the next start's recovery leaves it; a change that recovery
 * cannot finish is a problem of its own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "failinfo.h"
#include "map/ident.h"
#include "model/model.h"
#include "store/recover.h"
#include "util/remark.h"

__attribute__((format(printf, 3, 4)))
static void add(struct img_diag *d, enum img_prob p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->text[p], sizeof(d->text[p]), fmt, ap);
	va_end(ap);
	d->has[p] = true;
	d->n++;
}

void img_diag_note(struct img_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sfs_remark_vadd(d->note, sizeof(d->note), fmt, ap);
	va_end(ap);
}

const char *img_check_sector_text(uint32_t lss, uint32_t pss, char *buf, size_t len)
{
	const char *name = sfs_sector_name(lss, pss);

	snprintf(buf, len, "%s (%u/%u)", name ? name : "custom", lss, pss);
	return buf;
}

/* Compare the sidecar with what the map records. */
static void compare(const struct img_view *v, struct img_diag *d)
{
	const struct sfs_map_info *mi = sfs_map_info(v->map);
	const struct sfs_sidecar *sc = &v->sc;
	unsigned diff = sfs_sidecar_diff(sc, &mi->geom, mi->prov);
	char a[64], b[64];

	if (diff & SFS_DIFF_SECTOR)
		add(d, P_SECTOR, "sidecar says sector %s but the image was made with %s; "
		    "the sector format never changes", img_check_sector_text(sc->lss, sc->pss, a, sizeof(a)),
		    img_check_sector_text(mi->geom.lss, mi->geom.pss, b, sizeof(b)));
	if (diff & SFS_DIFF_BLOCK)
		add(d, P_BLOCK, "sidecar says block_size %llu but the image has %llu",
		    (unsigned long long)sc->block_size, (unsigned long long)mi->geom.block_size);
	if (diff & SFS_DIFF_PROV)
		add(d, P_PROV, "sidecar says provisioning %s but the image is %s%s", sfs_prov_name(sc->prov),
		    sfs_prov_name(mi->prov), sc->prov == SFS_PROV_EAGERZEROEDTHICK ?
		    " ('" IMG_PROG " inflate' converts it)" : "");
	if (diff & SFS_DIFF_SMALLER)
		add(d, P_SIZE, "sidecar size %llu is smaller than the image (%llu bytes); images never shrink",
		    (unsigned long long)sc->size, (unsigned long long)mi->geom.size);
	else if (diff & SFS_DIFF_LARGER)
		img_diag_note(d, "sidecar size %llu is larger than the image (%llu bytes): it grows when next opened",
		     (unsigned long long)sc->size, (unsigned long long)mi->geom.size);
}

/* Is the map the image's?  A map made for another image, or for a backing file since replaced,
 * is a problem (and nothing else it says counts: true); one of an older version, or copied
 * with its image, a note (core/map/ident.h). */
static bool foreign_map(const struct img_view *v, struct img_diag *d)
{
	char why[768];
	enum sfs_map_tie t = sfs_map_tie(v->map, v->ref->name, v->bk_rc == 0 ? &v->bk_id : NULL, why, sizeof(why));

	if (t == SFS_TIE_OK)
		return false;
	if (!sfs_map_tie_servable(t)) {
		add(d, P_MAP_TIE, "allocation map: %s: the image is not served through it", why);
		return true;
	}
	img_diag_note(d, "%s: %s when sectorfs next opens it", why, t == SFS_TIE_NONE ? "the image's identity is recorded" :
	     "recorded again");
	return false;
}

/* The sidecar's profile, loaded as the daemon loads it: one it cannot load (missing, not a
 * regular file, past the limits of physical sense) keeps the image from being served. */
static void check_profile(const struct img_view *v, struct img_diag *d)
{
	struct sfs_profile p;
	char err[512];

	if (v->sc.profile[0] && sfs_profile_load(v->store_fd, v->sc.profile, &p, err, sizeof(err)) < 0)
		add(d, P_SIDECAR, "sidecar: %s" SFS_SIDECAR_SUFFIX ": key 'profile': %s: sectorfs does not serve "
		    "the image", v->ref->name, err);
}

int img_check_diagnose(const struct img_view *v, struct img_diag *d)
{
	const struct img_ref *r = v->ref;
	const struct sfs_recover_item *p = v->pend;

	memset(d, 0, sizeof(*d));
	/* A crash left a change of this image that the next start cannot put right: its files are
	 * as that change left them, which is all there is to say until it is cleared. */
	if (p && p->verdict == SFS_RECOVER_BLOCKED) {
		add(d, P_PENDING, "%s: %s: the next start cannot do it and leaves the image out", p->file, p->what);
		return 0;
	}
	if (!v->sc_present && v->map_rc == -ENOENT && v->bk_rc == -ENOENT)
		return d->n ? 0 : -1;
	if (!v->sc_present)
		add(d, P_UNDECLARED, "no sidecar %s" SFS_SIDECAR_SUFFIX ": the image is not declared (files left by an "
		    "interrupted create or unlink?)", r->name);
	else if (v->sc_rc < 0)
		add(d, P_SIDECAR, "sidecar: %s", v->sc_err);
	else
		check_profile(v, d);
	if (v->bk_rc == -ENOENT && v->map_rc == -ENOENT && v->sc_present) {
		/* not created yet (a sidecar that does not parse never gets its files) */
		d->declared_only = v->sc_rc == 0 && !d->has[P_SIDECAR];
		return 0;
	}
	if (v->bk_rc == -ENOENT && v->map && v->sc_rc == 0 && !sfs_map_count(v->map)) {
		/* a create cut before its backing file was named: the next open makes it */
		d->declared_only = true;
		img_diag_note(d, "a create was interrupted before the backing file was made; its map records no "
		     "data: sectorfs makes the image when it next opens it");
		return 0;
	}
	if (v->bk_rc == -ENOENT && v->map) {
		add(d, P_BACKING, "backing file %s is missing while its map records %llu block%s of data "
		    "(removed behind the daemon's back?): sectorfs does not serve the image", r->path,
		    (unsigned long long)sfs_map_count(v->map), sfs_map_count(v->map) == 1 ? "" : "s");
		return 0;
	}
	/* a raw file to import (no map) larger than the disk its sidecar declares: never cut, refused */
	if (v->map_rc == -ENOENT && v->bk_rc == 0 && S_ISREG(v->bk.st_mode) && v->sc_rc == 0 &&
	    (uint64_t)v->bk.st_size > v->sc.size) {
		add(d, P_SIDECAR, "sidecar: %s" SFS_SIDECAR_SUFFIX ": key 'size': %llu is smaller than the existing "
		    "backing file (%lld bytes): sectorfs does not serve the image", r->name,
		    (unsigned long long)v->sc.size, (long long)v->bk.st_size);
		return 0;
	}
	if (v->map_rc == -ENOENT && v->bk_rc == 0 && S_ISREG(v->bk.st_mode) && !v->bk_data && v->sc_rc == 0) {
		/* a create cut before its map, or a raw file with no data yet: imported as it is */
		img_diag_note(d, "no allocation map yet, and the backing file holds no data: sectorfs makes the map "
		     "when it next opens the image");
		return 0;
	}
	if (v->bk_rc < 0)
		add(d, P_BACKING, "backing file %s: %s", r->path, strerror(-v->bk_rc));
	else if (!S_ISREG(v->bk.st_mode))
		add(d, P_BACKING, "backing file %s is not a regular file", r->path);
	else if (v->bk.st_nlink != 1)
		add(d, P_BACKING, "backing file %s has %lu hard links; it must have one", r->path,
		    (unsigned long)v->bk.st_nlink);
	if (v->map_rc == -ENOENT)
		add(d, P_MAP_MISSING, "allocation map " SFS_STATE_DIR "/%s" SFS_MAP_SUFFIX " is missing", r->name);
	else if (v->map_rc < 0)
		add(d, P_MAP_BAD, "allocation map: %s", v->map_err);
	if (!v->map || foreign_map(v, d))
		return 0;
	if (sfs_map_damage(v->map)->chunks) {
		char text[512];

		add(d, P_MAP_DAMAGED, "allocation map: %s", img_view_damage_text(v, text, sizeof(text)));
	}
	if (v->sc_rc == 0)
		compare(v, d);
	if (v->bk_rc == 0 && S_ISREG(v->bk.st_mode) &&
	    (uint64_t)v->bk.st_size < sfs_map_info(v->map)->geom.size)
		add(d, P_SHORT, "backing file is %lld bytes, shorter than the disk (%llu bytes)",
		    (long long)v->bk.st_size, (unsigned long long)sfs_map_info(v->map)->geom.size);
	if (sfs_map_info(v->map)->prov == SFS_PROV_EAGERZEROEDTHICK &&
	    !(sfs_map_info(v->map)->flags & SFS_MAP_F_ZEROED))
		add(d, P_UNZEROED, "eager zeroing not finished (%llu of %llu blocks): the blocks not zeroed "
		    "yet read as zeros, sectorfs resumes it when it next serves the store, --repair "
		    "finishes it now", (unsigned long long)sfs_map_count(v->map),
		    (unsigned long long)sfs_map_nblocks(v->map));
	img_fail_check(v, d);          /* power, bad sectors, a crash's writes (failinfo.c) */
	return 0;
}

const char *img_check_why_not(const struct img_view *v, enum img_prob p)
{
	static char buf[PATH_MAX + 512];
	bool sc_ok = v->sc_rc == 0, bk_ok = v->bk_rc == 0 && S_ISREG(v->bk.st_mode) && v->bk.st_nlink == 1;

	switch (p) {
	case P_UNDECLARED:
		return "it may be an image whose sidecar was removed on purpose: write a sidecar to serve "
		       "it again, or remove the files";
	case P_SIDECAR:
		return "the sidecar is yours: correct the key it names";
	case P_BACKING:
		if (!v->map || v->bk_rc != -ENOENT)
			return "the disk's data is not there: sectorfs-img does not make it up";
		snprintf(buf, sizeof(buf), "the disk's data is not there: put the backing file back, or remove "
			 "its map (rm %s/" SFS_STATE_DIR "/%s" SFS_MAP_SUFFIX ") to have the image made again, "
			 "empty", v->ref->store, v->ref->name);
		return buf;
	case P_MAP_TIE:
		if (!sc_ok)
			return "the map is rebuilt from the sidecar's declaration: correct the sidecar first";
		if (!bk_ok)
			return "the map is rebuilt from the backing file, which is not usable";
		return NULL;
	case P_PENDING:
		if (!v->pend || v->pend->clearable)
			return NULL;
		return v->pend->fix[0] ? v->pend->fix : "the store's start could not do it: see its log";
	case P_MAP_MISSING:
	case P_MAP_BAD:
		if (!sc_ok)
			return "the map is rebuilt from the sidecar's declaration: correct the sidecar first";
		if (!bk_ok)
			return "the map is rebuilt from the backing file, which is not usable";
		if (p == P_MAP_BAD && v->map_rc != -EUCLEAN)
			return "the map cannot be read (an I/O or permission error), so it is not rebuilt";
		return NULL;
	case P_SECTOR:
	case P_BLOCK:
	case P_PROV:
	case P_SIZE:
		return sc_ok && v->map ? NULL : "the sidecar does not parse";
	case P_FAILSTATE:
		return "it holds no data: remove it by hand to forget the disk's power state and bad sectors";
	default:
		return NULL;
	}
}
