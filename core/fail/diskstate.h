/* SPDX-License-Identifier: MIT */
/*
 * diskstate.h - what a disk's failures leave behind, kept across restarts:
 * STORE/.sectorfs/NAME.disk.
 *
 *   sectorfs-disk 1
 *   power off                        on or off
 *   cut 42 random:0.5                a cut decided and not yet applied
 *                                    whole: its seed and policy (only
 *                                    while one is under way, fail.c)
 *   bad 100-107                      the bad-sector list, a range a
 *   bad 200-203:sticky               line, as badsect.h lists it
 *   bad 8-15:damaged
 *   crc32c 1a2b3c4d                  of every byte before this line
 *
 * A disk with power on, no cut under way and no bad sector has no file.
 * The file is replaced whole (tmpfile.h: a temporary file made durable,
 * then renamed), so after a crash it is the old one or the new one.  A
 * file that does not parse, or whose checksum fails, is refused with its
 * name, the line and the reason: the disk is then not served, as with a
 * damaged map.
 */
#ifndef SFS_DISKSTATE_H
#define SFS_DISKSTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "badsect.h"
#include "contract/names.h"
#include "wcache.h"

#define SFS_DISK_MAX_BYTES (8u << 20)       /* a list of SFS_BAD_MAX_RANGES ranges fits */

struct sfs_diskstate {
	bool power_off;
	bool cut_pending;           /* a cut is recorded and not yet applied whole */
	struct sfs_wc_cut cut;      /* ... its seed and policy */
	struct sfs_badsect bad;
};

/* A disk with power on, nothing pending and an empty list for the geometry given. */
void sfs_disk_init(struct sfs_diskstate *ds, uint32_t lss, uint32_t pss, uint64_t nsect);

/* Free the list; ds is as after sfs_disk_init with the same geometry. */
void sfs_disk_free(struct sfs_diskstate *ds);

/* Is ds the state of a disk that needs no file? */
bool sfs_disk_is_default(const struct sfs_diskstate *ds);

/* The file's text for ds into a malloc'd string (*out, *len).  0 or -ENOMEM. */
int sfs_disk_encode(const struct sfs_diskstate *ds, char **out, size_t *len);

/* Parse text (len bytes; fname for messages) into ds, which holds the geometry (sfs_disk_init)
 * and is replaced only on success.  0, or -EUCLEAN with err "FNAME: line N: REASON", -ENOMEM. */
int sfs_disk_decode(const char *text, size_t len, const char *fname, struct sfs_diskstate *ds, char *err,
		    size_t errlen);

/* Load dirfd/fname into ds (which holds the geometry).  0; -ENOENT when there is no file (ds
 * untouched: the default); -EUCLEAN (a file that is not one: err says why), -EPERM (not a
 * regular file), -EFBIG, -errno, with err naming the file. */
int sfs_disk_load(int dirfd, const char *fname, struct sfs_diskstate *ds, char *err, size_t errlen);

/* Make dirfd/fname say ds, durably: replaced whole, or removed when ds is the default.  The
 * step hook "disk-save" runs between writing the temporary file and renaming it (step.h).
 * 0 or -errno. */
int sfs_disk_save(int dirfd, const char *fname, const struct sfs_diskstate *ds);

#endif
