/* SPDX-License-Identifier: MIT */
/*
 * recover.h - what a crash can leave in a store, and putting it right when
 * the store is next opened.
 *
 * Every multi-file operation of the store writes an intent record in
 * STORE/.sectorfs before its first change (store.c and grow.c give the
 * orders):
 *
 *   rename        "FROM\0TO\0"          a rename in progress: finished
 *   NAME.unlink   "unlink DEV INO\n"    an unlink in progress: finished when
 *                                       its sidecar is gone, else undone
 *   NAME.grow     "grow OLD NEW LEN SC" a grow in progress (grow.c)
 *   NAME.create   "create [DEV INO]\n"  a create by sectorfs-img (backing
 *                                       file and map before the sidecar):
 *                                       undone unless the sidecar is there
 *   NAME.inflate  "inflate\n"           a change to eagerzeroedthick: the
 *                                       sidecar made to say what the map says
 *
 * and every file it rewrites goes through a temporary file (tmpfile.h).
 * Recovery replays the records and removes the temporary files, logging
 * one line for each thing it does.  Files it cannot tell apart from a
 * user's are left alone.
 */
#ifndef SFS_RECOVER_H
#define SFS_RECOVER_H

#include <stdbool.h>

#include "log.h"
#include "names.h"

/* Write the intent record STATE/NAME+suffix holding text, atomically and durably. 0 or -errno. */
int sfs_intent_put(int statefd, const char *name, const char *suffix, const char *text);

/* Remove the intent record STATE/NAME+suffix durably; 0 (also when absent) or -errno. */
int sfs_intent_drop(int statefd, const char *name, const char *suffix);

/* Put the store right after a crash (the store lock held): remove temporary files, finish an
 * interrupted rename, finish or undo interrupted unlinks and grows; one log line each.  With
 * apply false change nothing and log what would be done.  0, or the first -errno (the rest
 * is still tried; what failed is logged and left for the next open). */
int sfs_recover(int dirfd, int statefd, const struct sfs_log *log, bool apply);

/* Does an intent record in statefd concern image name (a rename from or to it included)?
 * 1 with what it records described in buf ("an interrupted grow"), 0 when none. */
int sfs_recover_pending(int statefd, const char *name, char *buf, size_t len);

/* Rename the map, NAME.disk and NAME.undo (when there), backing file and sidecar of image from
 * to to, skipping those already moved, then fsync both directories.  0 or -errno. */
int sfs_move_image_files(int dirfd, int statefd, const char *from, const char *to);

/* Remove NAME.disk and NAME.undo of image name from statefd, when there (an unlink finished).
 * Not synced (the caller syncs statefd).  0 or -errno. */
int sfs_remove_state_files(int statefd, const char *name);

#endif
