/* SPDX-License-Identifier: MIT */
/*
 * recgrow.c - recovery of an interrupted grow or trim (recover.h; grow.c
 * draws the orders).  The map header is the commit point: it says the new
 * size, and the grow is finished (the sidecar made to say at least that);
 * it says the old size, and the grow is undone (the backing file cut back
 * to its old length, the sidecar back to the old size).  A trim that the
 * header says happened is finished (sidecar and backing file follow it),
 * one it says did not is dropped.
 *
 * The backing file is cut only when it is the one the record names (a
 * record of an older version: the one the map's identity names); a
 * longer file is harmless, a user's file cut is not.  A record whose map
 * is gone (the image removed by hand) is dropped; one whose map cannot be
 * read, or says neither size, blocks the image until check --repair,
 * which decides by the sidecar, or drops it (sfs_recover_clear).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "recover_internal.h"

/* The sidecar's size of image name into *size: 0, -ENOENT, or -errno with err. */
static int sidecar_size(const struct rec_env *e, const char *name, uint64_t *size, char *err, size_t len)
{
	char scname[SFS_FILE_NAME_LEN];
	struct sfs_sidecar sc;
	int rc;

	sfs_sidecar_name(scname, sizeof(scname), name);
	rc = sfs_sidecar_load(e->dirfd, scname, &sc, err, len);
	if (rc == 0)
		*size = sc.size;
	return rc;
}

/* The backing file is cut to len if it is the image's; the plan's text says when it is not. */
static void cut_if_ours(const struct rec_env *e, struct rec_item *it, const struct sfs_map_ident *mid,
			uint64_t len)
{
	struct sfs_fileid fid;
	char text[96];

	if (rec_backing(e, it->p.name, &fid, NULL) < 0)
		return;
	if (rec_backing_ours(&it->in, mid, &fid)) {
		it->cut_want = fid;
		it->p.backing_cut = true;
		it->p.backing_len = len;
		return;
	}
	if (!it->in.img.has_backing && (!mid || !mid->present))
		rec_alone(&it->p, "%s: left as it is (%s): a record of an older version names no backing "
			  "file, and no map identity vouches for it (a backing file longer than the disk "
			  "is harmless)", it->p.name, sfs_fileid_text(&fid, text, sizeof(text)));
	else
		rec_alone(&it->p, "%s: not the backing file the interrupted %s began with (%s); left as it "
			  "is", it->p.name, it->in.kind == SFS_INTENT_TRIM ? "trim" : "grow",
			  sfs_fileid_text(&fid, text, sizeof(text)));
}

/* check --repair, when the map cannot say: the sidecar, which the grow rewrote before its
 * commit, decides (it says the new size: finished; else undone). */
static void plan_by_sidecar(const struct rec_env *e, struct rec_item *it, const char *why)
{
	const struct sfs_intent *in = &it->in;
	struct sfs_recover_item *p = &it->p;
	uint64_t sz = 0;
	char err[512];
	bool now = sidecar_size(e, p->name, &sz, err, sizeof(err)) == 0 && sz == in->new_size;

	p->verdict = now ? SFS_RECOVER_FINISH : SFS_RECOVER_UNDO;
	rec_say(p, "an interrupted %s of %s whose map cannot be read (%s): %s, as its sidecar says",
		in->kind == SFS_INTENT_TRIM ? "trim" : "grow", p->name, why, now ? "finished" : "undone");
	rec_done(p, "%s: %s an interrupted %s from %" PRIu64 " to %" PRIu64 " bytes as its sidecar says (its "
		 "map cannot be read)", p->name, now ? "finished" : "undid",
		 in->kind == SFS_INTENT_TRIM ? "trim" : "grow", in->old_size, in->new_size);
	if (in->kind == SFS_INTENT_TRIM) {
		if (now)
			cut_if_ours(e, it, NULL, in->new_size);
	} else if (!now) {
		cut_if_ours(e, it, NULL, in->old_len);
	}
}

/* The map says neither side, or cannot be read: blocked (or, for check --repair, dropped). */
static void blocked(const struct rec_env *e, struct rec_item *it, const char *why)
{
	struct sfs_recover_item *p = &it->p;
	const char *what = it->in.kind == SFS_INTENT_TRIM ? "trim" : "grow";

	p->verdict = e->clear ? SFS_RECOVER_DROP : SFS_RECOVER_BLOCKED;
	rec_say(p, "an interrupted %s of %s from %" PRIu64 " to %" PRIu64 " bytes: %s", what, p->name,
		it->in.old_size, it->in.new_size, why);
	rec_done(p, "%s: dropped an interrupted %s from %" PRIu64 " to %" PRIu64 " bytes (%s): the image "
		 "keeps what its map says", p->name, what, it->in.old_size, it->in.new_size, why);
	p->clearable = true;
	snprintf(p->fix, sizeof(p->fix), "'sectorfs-img check --repair' drops the record: the image keeps what "
		 "its map says");
}

void rec_plan_grow(const struct rec_env *e, struct rec_item *it)
{
	const struct sfs_intent *in = &it->in;
	struct sfs_recover_item *p = &it->p;
	const char *what = in->kind == SFS_INTENT_TRIM ? "trim" : "grow";
	struct sfs_map_ident mid;
	struct sfs_map_info mi;
	uint64_t sz = 0;
	char err[512], why[640];
	int rc = rec_map(e, p->name, &mi, &mid, err, sizeof(err)), src;

	if (rc == -ENOENT || (rc == 0 && !rec_map_ours(in, &mid))) {
		p->verdict = SFS_RECOVER_DROP;
		rec_say(p, "an interrupted %s of %s, whose image is gone (%s): dropped", what, p->name,
			rc ? "no map: removed by hand?" : "its map is another image's");
		rec_done(p, "%s: dropped an interrupted %s: its image is gone (%s)", p->name, what,
			 rc ? "no map" : "its map is another image's");
		return;
	}
	if (rc < 0) {
		snprintf(why, sizeof(why), "its map cannot be read (%s)", err);
		if (e->clear && rc == -EUCLEAN)
			plan_by_sidecar(e, it, err);
		else
			blocked(e, it, why);
		if (!e->clear)
			snprintf(p->fix, sizeof(p->fix), "'sectorfs-img check --repair' finishes or undoes it as the "
				 "sidecar says, then sees to the map");
		return;
	}
	if (mi.geom.size != in->new_size && mi.geom.size != in->old_size) {
		snprintf(why, sizeof(why), "its map says %" PRIu64 " bytes, neither side", mi.geom.size);
		blocked(e, it, why);
		return;
	}
	src = sidecar_size(e, p->name, &sz, err, sizeof(err));
	if (src < 0 && src != -ENOENT) {
		snprintf(why, sizeof(why), "its sidecar does not parse (%s)", err);
		blocked(e, it, why);
		if (!e->clear)
			snprintf(p->fix, sizeof(p->fix), "correct the sidecar (it is yours), then start again, or "
				 "'sectorfs-img check --repair' drops the record");
		return;
	}
	if (in->kind == SFS_INTENT_TRIM) {
		if (mi.geom.size == in->old_size) {
			p->verdict = SFS_RECOVER_DROP;
			rec_say(p, "an interrupted trim of %s before its commit: dropped", p->name);
			rec_done(p, "%s: dropped an interrupted trim that had not begun", p->name);
			return;
		}
		p->verdict = SFS_RECOVER_FINISH;
		rec_say(p, "an interrupted shrink of %s from %" PRIu64 " to %" PRIu64 " bytes, past its "
			"commit: finished", p->name, in->old_size, in->new_size);
		rec_done(p, "%s: finished an interrupted shrink from %" PRIu64 " to %" PRIu64 " bytes", p->name,
			 in->old_size, in->new_size);
		p->size_set = src == 0 && sz == in->old_size;
		p->size = in->new_size;
		cut_if_ours(e, it, &mid, in->new_size);
		return;
	}
	if (mi.geom.size == in->new_size) {
		p->verdict = SFS_RECOVER_FINISH;
		rec_say(p, "an interrupted grow of %s from %" PRIu64 " to %" PRIu64 " bytes, past its "
			"commit (the map says the new size): finished", p->name, in->old_size, in->new_size);
		rec_done(p, "%s: finished an interrupted grow from %" PRIu64 " to %" PRIu64 " bytes", p->name,
			 in->old_size, in->new_size);
		p->size_set = in->sidecar && src == 0 && sz < in->new_size;
		p->size = in->new_size;
		return;
	}
	p->verdict = SFS_RECOVER_UNDO;
	rec_say(p, "an interrupted grow of %s from %" PRIu64 " to %" PRIu64 " bytes, before its commit "
		"(the map says the old size): undone", p->name, in->old_size, in->new_size);
	rec_done(p, "%s: undid an interrupted grow from %" PRIu64 " to %" PRIu64 " bytes; the image keeps %"
		 PRIu64 " bytes", p->name, in->old_size, in->new_size, in->old_size);
	p->size_set = in->sidecar && src == 0 && sz == in->new_size;
	p->size = in->old_size;
	cut_if_ours(e, it, &mid, in->old_len);
}

int rec_apply_grow(const struct rec_env *e, const struct rec_item *it)
{
	const struct sfs_recover_item *p = &it->p;
	int rc = 0;

	if (p->backing_cut) {
		/* checked again: a file that is not the one planned on (-ESTALE) is left as it is */
		rc = rec_cut_backing(e, p->name, &it->cut_want, p->backing_len);
		if (rc == -ESTALE)
			rc = 0;
	}
	if (rc == 0 && p->size_set)
		rc = rec_sidecar_size(e, p->name, p->size);
	return rc;
}
