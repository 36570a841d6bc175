/* SPDX-License-Identifier: MIT */
/*
 * recimage.c - recovery of an interrupted unlink, create (sectorfs-img's
 * make) and inflate (recover.h).
 *
 * An unlink past its commit (the sidecar gone) and a make before its
 * commit (no sidecar yet) both end with the image's files removed: the
 * backing file only when it is the one the record names (its identity;
 * a record of an older version: its device and inode, and the map's
 * identity vouching for the file), the map unless it is another image's.
 * Anything else under those names stays, and the plan says so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map/map.h"
#include "recover_internal.h"

#define NAMEBUF SFS_FILE_NAME_LEN

/* What of image name is the record's (its backing file and its map), into p: the rest is left
 * alone, and p says so (kind: "unlink", "create"). */
static void plan_removal(const struct rec_env *e, struct rec_item *it, const char *doing)
{
	struct sfs_recover_item *p = &it->p;
	struct sfs_map_ident mid = { 0 };
	struct sfs_fileid fid;
	char err[256], mine[96];
	int mrc = rec_map(e, p->name, NULL, &mid, err, sizeof(err));
	bool map_ours = mrc == 0 && rec_map_ours(&it->in, &mid);

	p->goes = true;
	if (rec_backing(e, p->name, &fid, NULL) == 0) {
		/* without an identity of its own, a create's record is vouched for by its map */
		bool ours = rec_backing_ours(&it->in, mrc == 0 ? &mid : NULL, &fid) ||
			    (it->in.kind == SFS_INTENT_CREATE && !it->in.img.has_backing && map_ours && mid.present &&
			     sfs_fileid_same(&mid.backing, &fid, false));

		p->keeps_backing = !ours;
		it->cut_want = fid;                  /* the file the applier removes, and no other */
		if (!ours && !it->in.img.has_backing && it->in.has_devino && it->in.dev == fid.dev &&
		    it->in.ino == fid.ino)
			rec_alone(p, "%s: left alone (%s): a record of an older version names the backing "
				  "file by device and inode only, which a file made since can have, and no map "
				  "identity vouches for it; if it is the removed image's, remove it by hand",
				  p->name, sfs_fileid_text(&fid, mine, sizeof(mine)));
		else if (!ours)
			rec_alone(p, "%s: not the backing file an interrupted %s (%s: another file took the "
				  "name, or no record names it); left alone", p->name, doing,
				  sfs_fileid_text(&fid, mine, sizeof(mine)));
	}
	/* the map is the daemon's own file, in its own directory: it goes unless it is another image's */
	p->keeps_map = mrc == 0 && !map_ours;
	if (p->keeps_map)
		rec_alone(p, "%s: " SFS_STATE_DIR "/%s" SFS_MAP_SUFFIX " is another image's map (not the "
			  "one the record names); left alone", p->name, p->name);
}

int rec_apply_removal(const struct rec_env *e, const struct rec_item *it)
{
	char mapname[NAMEBUF];
	struct sfs_fileid fid;
	int rc = 0;

	sfs_map_name(mapname, sizeof(mapname), it->p.name);
	/* the backing file first, and only the one planned on (its map vouches for it) */
	if (!it->p.keeps_backing && rec_backing(e, it->p.name, &fid, NULL) == 0 &&
	    sfs_fileid_same(&fid, &it->cut_want, true) && unlinkat(e->dirfd, it->p.name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && !it->p.keeps_map && unlinkat(e->statefd, mapname, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && !it->p.keeps_map)
		rc = sfs_remove_state_files(e->statefd, it->p.name);
	if (rc == 0 && fsync(e->dirfd) < 0)
		rc = -errno;
	return rc;
}

static bool sidecar_there(const struct rec_env *e, const char *name)
{
	char scname[NAMEBUF];

	sfs_sidecar_name(scname, sizeof(scname), name);
	return rec_exists(e->dirfd, scname);
}

/* What a record comes to when its image's sidecar is gone ([0]) or there ([1]): the verdict,
 * what the plan says and what is logged once done (each given the name), and what the removal
 * of its files names (NULL: nothing is removed). */
struct outcome {
	enum sfs_recover_verdict verdict;
	const char *say, *done, *removal;
};

static void plan_by_sidecar(const struct rec_env *e, struct rec_item *it, const struct outcome o[2])
{
	struct sfs_recover_item *p = &it->p;
	const struct outcome *w = &o[sidecar_there(e, p->name)];

	p->verdict = w->verdict;
	rec_say(p, w->say, p->name);
	rec_done(p, w->done, p->name);
	if (w->removal)
		plan_removal(e, it, w->removal);
}

/* The outcomes of an interrupted unlink and of an interrupted create by sectorfs-img. */
enum { UNLINK, CREATE };
static const struct outcome outcomes[2][2] = {
	[UNLINK] = {
		{ SFS_RECOVER_FINISH, "an interrupted unlink of %s, past its commit (the sidecar is gone): its "
		  "backing file and map are removed", "%s: finished an interrupted unlink", "unlink was removing" },
		{ SFS_RECOVER_UNDO, "an interrupted unlink of %s that had not removed its sidecar: dropped, the "
		  "image stays", "%s: an interrupted unlink had not removed the sidecar; the image stays", NULL } },
	[CREATE] = {
		{ SFS_RECOVER_UNDO, "an interrupted create of %s by sectorfs-img, before its sidecar: its files "
		  "are removed, the image is not made", "%s: undid an interrupted create", "create made" },
		{ SFS_RECOVER_FINISH, "an interrupted create of %s whose sidecar, its last step, was written: the "
		  "record goes", "%s: finished an interrupted create", NULL } },
};

void rec_plan_unlink(const struct rec_env *e, struct rec_item *it)
{
	plan_by_sidecar(e, it, outcomes[UNLINK]);
}

void rec_plan_create(const struct rec_env *e, struct rec_item *it)
{
	plan_by_sidecar(e, it, outcomes[CREATE]);
}

/* ---- inflate ---- */

void rec_plan_inflate(const struct rec_env *e, struct rec_item *it)
{
	struct sfs_recover_item *p = &it->p;
	struct sfs_map_ident mid;
	struct sfs_map_info mi;
	char err[512];
	int rc = rec_map(e, p->name, &mi, &mid, err, sizeof(err));

	if (rc == -ENOENT || (rc == 0 && !rec_map_ours(&it->in, &mid))) {
		p->verdict = SFS_RECOVER_DROP;
		rec_say(p, "an interrupted inflate of %s, whose image is gone (%s): dropped", p->name,
			rc ? "no map" : "its map is another image's");
		rec_done(p, "%s: dropped an interrupted inflate: its image is gone", p->name);
	} else if (rc < 0) {
		p->verdict = e->clear ? SFS_RECOVER_DROP : SFS_RECOVER_BLOCKED;
		rec_say(p, "an interrupted inflate of %s, whose map cannot be read (%s)", p->name, err);
		rec_done(p, "%s: dropped an interrupted inflate: its map cannot be read; the sidecar keeps "
			 "its mode", p->name);
		p->clearable = true;
		snprintf(p->fix, sizeof(p->fix), "'sectorfs-img check --repair' drops the record and sees to "
			 "the map");
	} else if (mi.prov == SFS_PROV_EAGERZEROEDTHICK) {
		p->verdict = SFS_RECOVER_FINISH;
		p->prov_set = true;
		p->prov = mi.prov;
		rec_say(p, "an interrupted inflate of %s, past its commit: the sidecar is made to say "
			"eagerzeroedthick, as the map does", p->name);
		rec_done(p, "%s: finished an interrupted inflate", p->name);
	} else {
		p->verdict = SFS_RECOVER_UNDO;
		rec_say(p, "an interrupted inflate of %s before its commit: dropped, the image keeps its "
			"mode", p->name);
		rec_done(p, "%s: dropped an interrupted inflate (the image keeps its mode)", p->name);
	}
}

int rec_apply_inflate(const struct rec_env *e, const struct rec_item *it)
{
	char scname[NAMEBUF], err[512];
	struct sfs_sidecar sc;
	int rc;

	if (!it->p.prov_set)
		return 0;
	sfs_sidecar_name(scname, sizeof(scname), it->p.name);
	rc = sfs_sidecar_load(e->dirfd, scname, &sc, err, sizeof(err));
	if (rc == -ENOENT || (rc == 0 && sc.prov == it->p.prov))
		return 0;
	if (rc < 0)
		return rc;
	sc.prov = it->p.prov;
	return sfs_sidecar_save(e->dirfd, scname, e->statefd, &sc);
}

