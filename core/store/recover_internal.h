/* SPDX-License-Identifier: MIT */
/*
 * recover_internal.h - what the planners and appliers of recovery share:
 * recover.c (the walk, temporary files, applying), recrename.c (rename),
 * recimage.c (unlink, create, inflate) and recgrow.c (grow and trim).  A planner reads the record and the
 * files it names and fills a plan, changing nothing; its applier does
 * what the plan says, checking each file's identity again as it acts.
 */
#ifndef SFS_RECOVER_IMPL_H
#define SFS_RECOVER_IMPL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "map/map.h"
#include "util/fileid.h"
#include "intent.h"
#include "util/log.h"
#include "recover.h"
#include "contract/sidecar.h"

struct rec_env {
	int dirfd, statefd;
	const struct sfs_log *log;
	bool clear;                      /* planning for sfs_recover_clear */
};

/* One item: the plan and the record it was made from. */
struct rec_item {
	struct sfs_recover_item p;
	struct sfs_intent in;
	struct sfs_fileid cut_want;      /* the backing file a planned cut or removal was planned on */
	bool replace[3];                 /* a rename: what is under TO goes (the replaced image's,
					  * or a removed image's map) */
};

/* The plan's texts (printf): what is pending and what the start does (p->what), its log line
 * once done (p->done), and a line added to what it leaves alone (p->alone). */
__attribute__((format(printf, 2, 3)))
void rec_say(struct sfs_recover_item *p, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void rec_done(struct sfs_recover_item *p, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void rec_alone(struct sfs_recover_item *p, const char *fmt, ...);

/* The identity of STORE/name (0, -ENOENT, -errno), and its stat. */
int rec_backing(const struct rec_env *e, const char *name, struct sfs_fileid *id, struct stat *st);

/* The header of STORE/.sectorfs/name.map (sfs_map_peek): 0, -ENOENT, or -errno with err. */
int rec_map(const struct rec_env *e, const char *name, struct sfs_map_info *info,
	    struct sfs_map_ident *ident, char *err, size_t len);

/* Is the file fid at a backing name the one record in names (its identity, or, for a record
 * of an older version, the map's identity mid, NULL when there is no map, and the record's
 * device and inode when it has them)? */
bool rec_backing_ours(const struct sfs_intent *in, const struct sfs_map_ident *mid,
		      const struct sfs_fileid *fid);

/* Is a map of identity mid (present or not) the one of the image record in names? */
bool rec_map_ours(const struct sfs_intent *in, const struct sfs_map_ident *mid);

/* Cut STORE/name to len when it is longer and still the file want (a regular file of one
 * link) and sync it: 0 (also when it is not there), -ESTALE when another file is, or
 * -errno. */
int rec_cut_backing(const struct rec_env *e, const char *name, const struct sfs_fileid *want,
		    uint64_t len);

/* Rewrite STORE/name.json to say size: 0 (also when there is no sidecar), or -errno. */
int rec_sidecar_size(const struct rec_env *e, const char *name, uint64_t size);

/* Does dirfd/name exist (without following a link)? */
bool rec_exists(int dirfd, const char *name);

/* The planners fill it->p from the record read into it->in (changing nothing); the appliers do
 * what the plan says, except removing the record: 0 or -errno. */
void rec_plan_rename(const struct rec_env *e, struct rec_item *it);    /* recrename.c */
int rec_apply_rename(const struct rec_env *e, const struct rec_item *it);
void rec_plan_unlink(const struct rec_env *e, struct rec_item *it);    /* recimage.c */
void rec_plan_create(const struct rec_env *e, struct rec_item *it);
int rec_apply_removal(const struct rec_env *e, const struct rec_item *it);
void rec_plan_inflate(const struct rec_env *e, struct rec_item *it);
int rec_apply_inflate(const struct rec_env *e, const struct rec_item *it);
void rec_plan_grow(const struct rec_env *e, struct rec_item *it);      /* recgrow.c */
int rec_apply_grow(const struct rec_env *e, const struct rec_item *it);

#endif
