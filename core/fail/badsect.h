/* SPDX-License-Identifier: MIT */
/*
 * badsect.h - a disk's unreadable sectors: the media errors a user plants
 * (xattr user.sectorfs.bad_sectors) and the physical sectors a power cut
 * damaged (wcache.h).
 *
 * Positions are logical sectors (LBAs), as null_blk's badblocks and the
 * kernel's I/O error messages give them.  Each range has one kind:
 *
 *   bad       reads fail with EIO; a write of a sector heals that sector
 *             (a drive remaps a sector when it is written)
 *   sticky    reads fail with EIO; writes succeed and heal nothing (a
 *             sector the drive cannot remap)
 *   damaged   a physical sector left half written by a power cut: every
 *             logical sector in it reads EIO until one write covers the
 *             whole physical sector (a write of a part of it would need
 *             the drive to read the rest, which it cannot)
 *
 * The attribute's value is a list of commands separated by blanks, commas
 * or newlines, applied in order, all or none:
 *
 *   +START[-END][:sticky|:damaged]   add (END inclusive, default START)
 *   -START[-END]                     remove, whatever the kind
 *   clear                            remove every range
 *
 * Reading the attribute lists the ranges, one per line, in the form they
 * are added with: "START-END", "START-END:sticky", "START-END:damaged".
 * A damaged range added by hand is widened to whole physical sectors (as
 * far as the disk goes: its size need only be whole logical sectors).
 */
#ifndef SFS_BADSECT_H
#define SFS_BADSECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/extents.h"

#define SFS_BAD_PLAIN 1u
#define SFS_BAD_STICKY 2u
#define SFS_BAD_DAMAGED 4u
#define SFS_BAD_ANY (SFS_BAD_PLAIN | SFS_BAD_STICKY | SFS_BAD_DAMAGED)

/* The most ranges a list holds: the attribute and the state file stay small. */
#define SFS_BAD_MAX_RANGES 65536

struct sfs_badsect {
	struct sfs_extents ext;   /* LBAs, tagged SFS_BAD_* */
	uint32_t lss, pss;        /* logical and physical sector, bytes */
	uint64_t nsect;           /* the disk's size in logical sectors */
};

/* An empty list for a disk of nsect logical sectors of lss bytes, physical sector pss
 * (lss and pss powers of two, pss >= lss). */
void sfs_bad_init(struct sfs_badsect *b, uint32_t lss, uint32_t pss, uint64_t nsect);

/* Free the list's memory; it is empty and usable again. */
void sfs_bad_free(struct sfs_badsect *b);

/* The disk grew (or shrank) to nsect sectors; ranges past the end are kept, and reported by
 * no read (none reaches there). */
void sfs_bad_resize(struct sfs_badsect *b, uint64_t nsect);

/* Apply the commands of value (len bytes, not NUL-terminated), all or none.  0; -EINVAL
 * with err naming the command and what is wrong with it (syntax, END before START, a sector
 * past the end of the disk, an unknown kind); -E2BIG for more than SFS_BAD_MAX_RANGES ranges;
 * -ENOMEM.  *changed (may be NULL) says whether the list changed. */
int sfs_bad_apply(struct sfs_badsect *b, const char *value, size_t len, bool *changed, char *err, size_t errlen);

/* Apply one command (cmd, len bytes: "+START[-END][:kind]", "-START[-END]" or "clear") onto b
 * in place, without the copy that makes sfs_bad_apply all or none: for a list being built
 * that is thrown away on failure (diskstate.c's load).  0; -EINVAL, -E2BIG or -ENOMEM with err
 * as sfs_bad_apply's (b may then hold a part of the command). */
int sfs_bad_apply_one(struct sfs_badsect *b, const char *cmd, size_t len, char *err, size_t errlen);

/* The listing into a malloc'd NUL-terminated string (*out; "" for an empty list), its length
 * into *outlen.  0 or -ENOMEM. */
int sfs_bad_format(const struct sfs_badsect *b, char **out, size_t *outlen);

/* May bytes [off, off+len) be read?  0, or -EIO with the first unreadable LBA in *lba (may be
 * NULL) and its kind in *kind (may be NULL). */
int sfs_bad_check_read(const struct sfs_badsect *b, uint64_t off, uint64_t len, uint64_t *lba, unsigned *kind);

/* A write of bytes [off, off+len) completed: heal the bad sectors it wrote and the damaged
 * physical sectors it covered whole.  0, or -ENOMEM with part healed.  *changed (may be NULL)
 * says whether the list changed. */
int sfs_bad_heal(struct sfs_badsect *b, uint64_t off, uint64_t len, bool *changed);

/* Mark the physical sectors that bytes [off, off+len) touch as damaged (a power cut's), over
 * whatever kind they had, up to the end of the disk.  0 or -ENOMEM. */
int sfs_bad_damage(struct sfs_badsect *b, uint64_t off, uint64_t len);

/* Logical sectors of the given kinds (SFS_BAD_* bits). */
uint64_t sfs_bad_count(const struct sfs_badsect *b, unsigned kinds);

/* Copy src into dst (dst's old list freed).  0 or -ENOMEM. */
int sfs_bad_copy(struct sfs_badsect *dst, const struct sfs_badsect *src);

/* The name of a kind ("bad", "sticky", "damaged"). */
const char *sfs_bad_kind_name(unsigned kind);

#endif
