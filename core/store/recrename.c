/* SPDX-License-Identifier: MIT */
/*
 * recrename.c - recovery of an interrupted rename (recover.h), and the
 * moves of a rename's three files.
 *
 * Each of map, backing file and sidecar still under FROM that is the
 * image's (by the identities the record names) moves to TO, never over a
 * file there unless it is the replaced image's (the record's "over"
 * line).  When a name under TO is held by anything else (a file put
 * there since the crash) the moves already done are rolled back, each
 * onto a free name under FROM; when even that cannot be, the record stays
 * and both names are refused until the user moves the file away.  A
 * record of an older version names no identities: then the image's map
 * (under either name) says which backing file is the image's, and
 * whatever else is under FROM moves, onto free names only.  The map's header is made to say the
 * new name last (errors there are left to the next open, which records
 * the name of a map renamed by hand).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map/map.h"
#include "recover_internal.h"

#define NAMEBUF SFS_FILE_NAME_LEN

/* Is the file of kind f at name (in its directory) the image's of who w?  A who without
 * identities (a record of an older version) owns whatever is there. */
static bool owns(const struct rec_env *e, const struct sfs_intent_who *w, bool legacy, int f, const char *name)
{
	char fname[NAMEBUF], err[256];
	struct sfs_map_ident mid;
	struct sfs_fileid fid;

	if (f == SFS_RECOVER_MAP) {
		if (rec_map(e, name, NULL, &mid, err, sizeof(err)) < 0)
			return legacy;
		return mid.present && w->has_id ? memcmp(mid.id, w->id, SFS_IMAGE_ID_LEN) == 0 : legacy;
	}
	if (f == SFS_RECOVER_BACKING)
		snprintf(fname, sizeof(fname), "%s", name);
	else
		sfs_sidecar_name(fname, sizeof(fname), name);
	if (sfs_fileid_at(e->dirfd, fname, &fid, NULL) < 0)
		return false;
	if (f == SFS_RECOVER_BACKING)
		return w->has_backing ? sfs_fileid_same(&w->backing, &fid, false) : legacy;
	return w->has_sidecar ? sfs_fileid_same(&w->sidecar, &fid, false) : legacy;
}

/* The file name of kind f of image name, and the directory it is in. */
static int file_of(const struct rec_env *e, int f, const char *name, char *buf, size_t len)
{
	if (f == SFS_RECOVER_MAP)
		sfs_map_name(buf, len, name);
	else if (f == SFS_RECOVER_SIDECAR)
		sfs_sidecar_name(buf, len, name);
	else
		snprintf(buf, len, "%s", name);
	return f == SFS_RECOVER_MAP ? e->statefd : e->dirfd;
}

void rec_plan_rename(const struct rec_env *e, struct rec_item *it)
{
	const struct sfs_intent *in = &it->in;
	struct sfs_recover_item *p = &it->p;
	bool legacy = !in->img.has_id && !in->img.has_backing, conflict = false, back = true;
	bool src_ours[3], dst_ours[3], dst_taken[3], src_taken[3], leftover_map;
	char a[NAMEBUF], b[NAMEBUF], in_way[NAMEBUF + 16] = "", err[256];
	struct sfs_intent_who w = in->img;
	struct sfs_map_ident mid;

	/* a record of an older version names no identities: the image's map, under either name,
	 * says which backing file is the image's */
	if (legacy && ((rec_map(e, in->name, NULL, &mid, err, sizeof(err)) == 0 && mid.present) ||
		       (rec_map(e, in->to, NULL, &mid, err, sizeof(err)) == 0 && mid.present)))
		w = sfs_intent_who_of(mid.id, &mid.backing, NULL);
	for (int f = 0; f < 3; f++) {
		int fd = file_of(e, f, in->name, a, sizeof(a));

		file_of(e, f, in->to, b, sizeof(b));
		src_taken[f] = rec_exists(fd, a);
		dst_taken[f] = rec_exists(fd, b);
		src_ours[f] = src_taken[f] && owns(e, &w, legacy, f, in->name);
		dst_ours[f] = dst_taken[f] && !src_ours[f] && owns(e, &w, legacy, f, in->to);
	}
	/* a map under TO beside no sidecar and no backing file but the image's is a removed image's
	 * leftover, the daemon's own, which the rename replaces as it did when it ran */
	leftover_map = (!dst_taken[SFS_RECOVER_SIDECAR] || dst_ours[SFS_RECOVER_SIDECAR]) &&
		       (!dst_taken[SFS_RECOVER_BACKING] || dst_ours[SFS_RECOVER_BACKING]);
	for (int f = 0; f < 3; f++) {
		file_of(e, f, in->to, b, sizeof(b));
		/* to move: the image's file still under FROM, onto a free name or the replaced image's */
		p->at_other[f] = src_ours[f];
		it->replace[f] = dst_taken[f] && ((in->has_over && owns(e, &in->over, false, f, in->to)) ||
						  (f == SFS_RECOVER_MAP && leftover_map));
		if (src_ours[f] && dst_taken[f] && !it->replace[f]) {
			conflict = true;
			snprintf(in_way, sizeof(in_way), "%s%s", f == SFS_RECOVER_MAP ? SFS_STATE_DIR "/" : "", b);
		}
		/* to roll back: what was moved goes back under FROM, which must be free */
		if (dst_ours[f] && src_taken[f])
			back = false;
	}
	if (!conflict) {
		p->verdict = SFS_RECOVER_FINISH;
		rec_say(p, "an interrupted rename of %s to %s: finished (what is still under %s moves)",
			in->name, in->to, in->name);
		rec_done(p, "%s: finished an interrupted rename to %s", in->name, in->to);
		return;
	}
	if (back) {
		p->verdict = SFS_RECOVER_UNDO;
		for (int f = 0; f < 3; f++)
			p->at_other[f] = dst_ours[f];
		rec_say(p, "an interrupted rename of %s to %s: rolled back, the image stays %s", in->name,
			in->to, in->name);
		rec_done(p, "%s: rolled back an interrupted rename to %s", in->name, in->to);
		rec_alone(p, "%s: %s is not the image's (a file put there since the crash); left alone",
			  in->to, in_way);
		return;
	}
	p->verdict = SFS_RECOVER_BLOCKED;
	rec_say(p, "an interrupted rename of %s to %s can neither be finished nor rolled back: %s is "
		"not the image's, and files were put under both names since", in->name, in->to, in_way);
	snprintf(p->fix, sizeof(p->fix), "move %s out of the store (mv STORE/%s STORE/%s.yours), then run "
		 "'sectorfs-img check --repair' again", in_way, in_way, in_way);
}

/* Move file kind f of the rename's image from one name to the other (replace: over what is
 * there; else never over anything). */
static int move_file(const struct rec_env *e, int f, const char *from, const char *to, bool replace)
{
	char a[NAMEBUF], b[NAMEBUF];
	int fd = file_of(e, f, from, a, sizeof(a));

	file_of(e, f, to, b, sizeof(b));
	if (replace)
		return renameat(fd, a, fd, b) < 0 ? -errno : 0;
	if (renameat2(fd, a, fd, b, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* a filesystem without RENAME_NOREPLACE: look first (the store lock keeps the daemon out) */
	if (rec_exists(fd, b))
		return -EEXIST;
	return renameat(fd, a, fd, b) < 0 ? -errno : 0;
}

/* The map of image name says name again (the backing file it describes unchanged); errors
 * leave it for the next open, which records the name of a map renamed by hand. */
static void rename_map_header(const struct rec_env *e, const char *name)
{
	char fname[NAMEBUF], err[256];
	struct sfs_map_ident id;
	struct sfs_map *m;

	sfs_map_name(fname, sizeof(fname), name);
	if (sfs_map_open(e->statefd, fname, SFS_MAP_SALVAGE, NULL, &m, err, sizeof(err)) < 0)
		return;
	id = *sfs_map_ident(m);
	if (id.present && strcmp(id.name, name) != 0) {
		snprintf(id.name, sizeof(id.name), "%s", name);
		sfs_map_set_ident(m, &id);
	}
	sfs_map_close(m);
}

int rec_apply_rename(const struct rec_env *e, const struct rec_item *it)
{
	const struct sfs_intent *in = &it->in;
	bool undo = it->p.verdict == SFS_RECOVER_UNDO;
	const char *from = undo ? in->to : in->name, *to = undo ? in->name : in->to;
	int rc = 0;

	for (int f = 0; f < 3 && rc == 0; f++)
		if (it->p.at_other[f])
			rc = move_file(e, f, from, to, !undo && it->replace[f]);
	/* the failure state follows the map (moved after it): finishing, those of its files not
	 * moved yet; undoing, only when the map was moved, else what is under to is another's */
	if (rc == 0 && (!undo || it->p.at_other[SFS_RECOVER_MAP]))
		rc = sfs_move_state_files(e->statefd, from, to);
	if (rc == 0 && (fsync(e->statefd) < 0 || fsync(e->dirfd) < 0))
		rc = -errno;
	if (rc == 0)
		rename_map_header(e, to);
	return rc;
}

int sfs_move_image_files(int dirfd, int statefd, const char *from, const char *to, bool replace)
{
	struct rec_env e = { dirfd, statefd, NULL, false };
	char a[NAMEBUF];
	int rc = 0;

	for (int f = 0; f < 3 && rc == 0; f++) {
		int fd = file_of(&e, f, from, a, sizeof(a));

		/* a map under to, when to is no image, is a removed image's leftover: replaced */
		if (rec_exists(fd, a))
			rc = move_file(&e, f, from, to, replace || f == SFS_RECOVER_MAP);
		if (rc == 0 && f == SFS_RECOVER_MAP)
			rc = sfs_move_state_files(statefd, from, to);   /* the failure state's, if any */
	}
	if (rc == 0 && (fsync(statefd) < 0 || fsync(dirfd) < 0))
		rc = -errno;
	return rc;
}

