/* SPDX-License-Identifier: MIT */
/*
 * recover.h - what a crash can leave in a store, and putting it right when
 * the store is next opened.
 *
 * Every multi-file operation of the store writes an intent record in
 * STORE/.sectorfs before its first change (intent.h gives their text,
 * store.c, grow.c and make.c the orders), and every file it rewrites
 * goes through a temporary file (tmpfile.h).  The next open of the store
 * plans what to do about each (sfs_recover_plan) and does it
 * (sfs_recover): temporary files removed; a rename finished (or rolled
 * back when a name it moves to was taken meanwhile); an unlink finished
 * when its sidecar is gone, else dropped; a make of sectorfs-img undone
 * unless its sidecar is there; a grow or trim finished or undone as its
 * map header says; an inflate finished.  A file is removed, cut or moved
 * only when it is the one the record (and the image's map) name by
 * identity, beyond (device, inode): anything else is left alone and
 * logged, and a name the move would take is never overwritten.
 *
 * A record that cannot be applied (its map unreadable, a name in the way,
 * a record that is not a regular file) stays, and the images it names are
 * not served (sfs_recover_pending) while the others are, and a rename
 * that would move them or onto them is refused, not the others (each
 * rename has a record of its own, FROM.rename); check --repair
 * clears it (sfs_recover_clear) or says what to run.  A record whose
 * image is gone is dropped.  sectorfs-img check shows the same plan
 * before the next start: each item as "pending", and the images as the
 * start will leave them.
 */
#ifndef SFS_RECOVER_H
#define SFS_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "contract/geometry.h"
#include "intent.h"
#include "util/log.h"
#include "contract/names.h"

/* What the next start does about one thing a crash left. */
enum sfs_recover_verdict {
	SFS_RECOVER_FINISH,     /* the operation is completed */
	SFS_RECOVER_UNDO,       /* the operation is undone: all as before it */
	SFS_RECOVER_DROP,       /* the record goes, nothing else changes (damaged, or its image gone) */
	SFS_RECOVER_REMOVE,     /* a temporary file of the daemon's goes */
	SFS_RECOVER_BLOCKED,    /* cannot be applied: the record stays, its images are not served */
};

struct sfs_recover_item {
	bool is_record;                 /* an intent record (kind says which); else a temporary file */
	enum sfs_intent_kind kind;
	enum sfs_recover_verdict verdict;
	char file[SFS_FILE_NAME_LEN + 16];   /* the record or temporary file: ".sectorfs/a.grow" */
	char name[SFS_NAME_MAX + 1];    /* the image ("" when unknown); a rename's FROM */
	char to[SFS_NAME_MAX + 1];      /* a rename's TO */
	char what[768];                 /* what is pending and what the next start does about it,
					 * or why it cannot (for check) */
	char done[512];                 /* the start's log line once done */
	char alone[640];                /* what it leaves alone, and why ("" when nothing): logged,
					 * and shown by check */
	char fix[1024];                 /* BLOCKED: what check --repair does, or what to run */
	bool clearable;                 /* BLOCKED: sfs_recover_clear (check --repair) clears it */
	/* the image as the start leaves it (a rename's: under to when finished, name when undone) */
	bool goes;                      /* it leaves the store (map and backing file removed) */
	bool keeps_backing;             /* ... but a file at its backing name stays (not its own) */
	bool keeps_map;                 /* ... and its map, which is another image's */
	bool size_set;                  /* its sidecar is made to say size */
	uint64_t size;
	bool backing_cut;               /* its backing file is cut to backing_len */
	uint64_t backing_len;
	bool prov_set;                  /* its sidecar is made to say prov */
	enum sfs_prov prov;
	bool at_other[3];               /* a rename's map, backing file, sidecar: still under the
					 * other name (the one the start moves it from) */
};

/* The files of a rename, in the order it moves them (at_other's index). */
enum { SFS_RECOVER_MAP, SFS_RECOVER_BACKING, SFS_RECOVER_SIDECAR };

/* Plan the recovery of the store dirfd (state directory statefd), changing nothing: fn is
 * called with each item in the order sfs_recover applies them.  0, or -errno when the state
 * directory cannot be read. */
int sfs_recover_plan(int dirfd, int statefd, void (*fn)(void *ctx, const struct sfs_recover_item *p),
		     void *ctx);

/* Put the store right after a crash (the store lock held): apply the plan, one log line each
 * (a blocked item an error naming what is kept and why).  0, or -errno only when the state
 * directory cannot be read: what fails for one image is logged, its record kept, and that
 * image is not served. */
int sfs_recover(int dirfd, int statefd, const struct sfs_log *log);

/* Clear what sfs_recover could not apply (the store lock held; check --repair): a grow or trim
 * whose map cannot be read is finished or undone as the sidecar says, one whose map says
 * neither size is dropped (the map says what the image is), a record that is not a regular
 * file is removed; one line each to log.  What only the user can settle (a file of theirs in
 * a rename's way) stays, logged with the command to run.  0, or the first -errno. */
int sfs_recover_clear(int dirfd, int statefd, const struct sfs_log *log);

/* Does an intent record in statefd concern image name (a rename from or to it included)?
 * 1 with what it records described in buf ("an interrupted grow (.sectorfs/a.grow)"), 0
 * when none.  The records of renames onto name are named for their FROM, so this reads
 * the state directory (a directory that cannot be read counts as a record). */
int sfs_recover_pending(int statefd, const char *name, char *buf, size_t len);

/* As sfs_recover_pending, but the state directory is read for the renames onto name only when
 * renames_left: a caller that knows no rename record is there (sfs_recover_renames_left, none
 * written since) spares reading it for each image. */
int sfs_recover_pending_known(int statefd, const char *name, bool renames_left, char *buf, size_t len);

/* Does a rename record in statefd concern image name (moving it, or onto it)?  1 with it
 * described in buf, 0 when none (sfs_recover_pending_known for rename records alone). */
int sfs_recover_pending_rename(int statefd, const char *name, bool renames_left, char *buf, size_t len);

/* Is a rename record (NAME.rename, or the "rename" of older versions) in statefd?  true also
 * when statefd cannot be read. */
bool sfs_recover_renames_left(int statefd);

/* Rename the map (with NAME.disk and NAME.undo, when there: sfs_move_state_files), backing
 * file and sidecar of image from to to, skipping those already moved, then fsync both
 * directories; over the backing file and sidecar under to only with replace
 * (the caller checked they are a served image's), else never over anything (-EEXIST); a map
 * under to goes either way (the caller checked to is a served image, or no image: then the
 * map is a removed image's leftover).  0 or -errno. */
int sfs_move_image_files(int dirfd, int statefd, const char *from, const char *to, bool replace);

/* Rename NAME.disk and NAME.undo of image from, those there, over to's (the failure state
 * follows the map; sfs_fail_cover_files gave from one wherever to had one).  Not synced.  0
 * or -errno. */
int sfs_move_state_files(int statefd, const char *from, const char *to);

/* Remove NAME.disk and NAME.undo of image name from statefd, when there (an unlink finished).
 * Not synced (the caller syncs statefd).  0 or -errno. */
int sfs_remove_state_files(int statefd, const char *name);

#endif
