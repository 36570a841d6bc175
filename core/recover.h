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

#define SFS_RENAME_JOURNAL "rename"
#define SFS_UNLINK_SUFFIX ".unlink"

/* Put the store right after a crash (the store lock held): remove temporary files, finish an
 * interrupted rename, finish or undo interrupted unlinks and grows; one log line each.  With
 * apply false change nothing and log what would be done.  0, or the first -errno (the rest
 * is still tried; what failed is logged and left for the next open). */
int sfs_recover(int dirfd, int statefd, const struct sfs_log *log, bool apply);

/* Rename the map, backing file and sidecar of image from to to, skipping those already moved,
 * then fsync both directories.  0 or -errno. */
int sfs_move_image_files(int dirfd, int statefd, const char *from, const char *to);

#endif
