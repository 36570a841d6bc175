/* SPDX-License-Identifier: MIT */
/*
 * names.h - the names of an image's files and of the mount's interface.
 *
 * An image NAME is three files: the backing file STORE/NAME, its sidecar
 * STORE/NAME.json and its allocation map STORE/.sectorfs/NAME.map
 * (NAME.map.new is what older versions left of a map being rewritten),
 * and, when it has failures (doc/failures.md), STORE/.sectorfs/NAME.disk
 * (its power and bad sectors) and NAME.undo (its volatile write cache's
 * log), which move and go with the map.
 * Beside the maps, STORE/.sectorfs holds the store's lock file and the
 * intent records of the changes under way (recover.h says what each
 * holds): NAME.rename, NAME.unlink, NAME.grow, NAME.create and
 * NAME.inflate, each named for the image it changes (a rename's for the
 * image it moves), and "rename", the one rename record of older versions,
 * still read.  The mount
 * shows MNT/NAME, the stats under MNT/.stats/, the geometry as
 * user.sectorfs.* xattrs, and is listed in /proc/self/mounts as
 * fuse.sectorfs.  Every part of sectorfs spells these names from here.
 */
#ifndef SFS_NAMES_H
#define SFS_NAMES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SFS_STATE_DIR ".sectorfs"         /* STORE/.sectorfs: maps, journals, the lock */
#define SFS_NAME_MAX 200                  /* longest image name */
#define SFS_SIDECAR_SUFFIX ".json"
#define SFS_MAP_SUFFIX ".map"
#define SFS_MAP_NEW_SUFFIX ".map.new"
#define SFS_DISK_SUFFIX ".disk"           /* NAME.disk: the disk's power and bad sectors (diskstate.h) */
#define SFS_UNDO_SUFFIX ".undo"           /* NAME.undo: its write cache's undo log (undolog.h) */
/* a buffer for NAME and any of the suffixes above */
#define SFS_FILE_NAME_LEN (SFS_NAME_MAX + 16)

/* in STORE/.sectorfs */
#define SFS_LOCK_FILE "lock"              /* flock'd by the store's holder, who writes itself in */
#define SFS_RENAME_SUFFIX ".rename"       /* NAME.rename: a rename of image NAME under way */
#define SFS_RENAME_JOURNAL "rename"       /* the one rename record of older versions: still read */
#define SFS_UNLINK_SUFFIX ".unlink"       /* NAME.unlink: an unlink under way */
#define SFS_GROW_SUFFIX ".grow"           /* NAME.grow: a grow or trim under way (grow.h) */
#define SFS_CREATE_SUFFIX ".create"       /* NAME.create: a make by sectorfs-img under way */
#define SFS_INFLATE_SUFFIX ".inflate"     /* NAME.inflate: an inflate under way */

#define SFS_STATS_DIR ".stats"            /* MNT/.stats/NAME, NAME.json, metrics */
#define SFS_STATS_METRICS "metrics"       /* MNT/.stats/metrics: every image, Prometheus text */
#define SFS_XATTR_PREFIX "user.sectorfs."
#define SFS_FSTYPE "fuse.sectorfs"

/* Check an image name: 0, or -EINVAL for "", ".", "..", "/", leading '.', ".json" suffix, too long. */
int sfs_name_valid(const char *name);

/* NAME.json into buf (len bytes); buf. */
static inline char *sfs_sidecar_name(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s" SFS_SIDECAR_SUFFIX, name);
	return buf;
}

/* NAME.map into buf (len bytes); buf. */
static inline char *sfs_map_name(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s" SFS_MAP_SUFFIX, name);
	return buf;
}

/* Is fname a sidecar's name (NAME.json, NAME not empty)?  The length of NAME, else 0. */
static inline size_t sfs_sidecar_image_len(const char *fname)
{
	size_t n = strlen(fname), k = sizeof(SFS_SIDECAR_SUFFIX) - 1;

	return n > k && strcmp(fname + n - k, SFS_SIDECAR_SUFFIX) == 0 ? n - k : 0;
}

/* STORE/.sectorfs/NAME.map.corrupt: a map sectorfs-img check --repair moved aside to rebuild it */
#define SFS_MAP_CORRUPT_SUFFIX ".map.corrupt"
/* STORE/.sectorfs/NAME.map.stale: a map that is not the image's (another image's, or made for a
 * backing file since replaced; map/ident.h), moved aside by check --repair to rebuild it */
#define SFS_MAP_STALE_SUFFIX ".map.stale"

#endif
