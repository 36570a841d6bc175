/* SPDX-License-Identifier: MIT */
/*
 * mountpath.h - what a path in a mount names.
 *
 * The namespace of a mount (names.h spells its parts):
 *
 *   /                  the root: the images of the store, as regular files
 *   /NAME              one disk
 *   /.stats/           hidden directory, present unless -o nostats
 *   /.stats/NAME       stats for people; writing "reset" zeroes them
 *   /.stats/NAME.json  the same stats as JSON
 *   /.stats/metrics    every image's stats, Prometheus text format (it
 *                      hides the text stats of an image named "metrics")
 *
 * Anything else (a deeper path, /.stats while the mount has no stats)
 * names nothing.  Classifying a path says which of these it is and which
 * image it is about; whether that image exists is the store's question.
 */
#ifndef SFS_MOUNTPATH_H
#define SFS_MOUNTPATH_H

#include <stdbool.h>
#include <stddef.h>

/* What a path names; the daemon keeps a directory's kind in its file handle, so the values are
 * fixed (SFS_MPATH_NONE is 0). */
enum sfs_mpath {
	SFS_MPATH_NONE = 0,     /* nothing: ENOENT */
	SFS_MPATH_LONG,         /* an image name longer than the caller's buffer: ENAMETOOLONG */
	SFS_MPATH_ROOT,         /* "/" */
	SFS_MPATH_STATSDIR,     /* "/.stats" */
	SFS_MPATH_IMAGE,        /* "/NAME" */
	SFS_MPATH_STATS_TEXT,   /* "/.stats/NAME" */
	SFS_MPATH_STATS_JSON,   /* "/.stats/NAME.json" */
	SFS_MPATH_METRICS,      /* "/.stats/metrics" */
};

/* Classify path (absolute, as FUSE passes it) of a mount with (stats) or without a .stats
 * directory.  For an image, text or JSON stats file, the image's NAME into name (len bytes,
 * NUL-terminated); a NAME of len bytes or more is SFS_MPATH_LONG.  NAME is not checked to be
 * a valid image name (sfs_name_valid does that). */
enum sfs_mpath sfs_mpath_classify(const char *path, bool stats, char *name, size_t len);

/* The errno for a path that names nothing: -ENAMETOOLONG for SFS_MPATH_LONG, else -ENOENT. */
int sfs_mpath_not_found(enum sfs_mpath k);

#endif
