/* SPDX-License-Identifier: MIT */
/*
 * undolog.h - the file that holds what a volatile write cache has not yet
 * made durable: STORE/.sectorfs/NAME.undo (wcache.h says why it is an undo
 * log and how it is used).
 *
 *   0     header, 512 bytes (64 used)
 *         "SFSUNDO\0" | version 1 | lss pss awu awb flags (u32 each)
 *         | gen | live | mark (u64 each) | CRC-32C of bytes 0..55 | 0
 *   512   entry, entry, ...   each: a 48-byte head, then its data, padded
 *         to 8 bytes
 *         head: 0x4f444e55 ("UNDO") | kind (u32) | seq | off | len | gen
 *               (u64 each) | CRC-32C of bytes 0..39 and the data | 0
 *
 * All numbers little-endian.  A WRITE entry holds the bytes [off, off+len)
 * of the disk as they were just before the write numbered seq; a KEPT
 * entry (a write durable at completion: FUA, discard, write-zeroes, or a
 * write larger than the cache) holds no data.  gen is the file's
 * generation, new at each reset, so that no entry of an older life of the
 * file passes for one of this one.  live is the offset of the oldest entry
 * not yet flushed or destaged and mark its number: entries before live, or
 * numbered below mark, are durable and no longer in the log.
 *
 * The header records the geometry the entries were made under (sector
 * sizes, atomic write unit and boundary, rmw_power_safe in flags bit 0), so
 * that a cut interrupted by a crash is finished as it was decided even
 * when the sidecar has changed since.
 *
 * Entries are appended; a scan walks them from live and stops at the first
 * that is not whole (bad magic, generation, CRC, a number that does not
 * follow, a range that is not whole logical sectors): after kill -9 that
 * is the end of what was written.
 */
#ifndef SFS_UNDOLOG_H
#define SFS_UNDOLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract/names.h"

#define SFS_UNDO_HDR_LEN 512ull            /* where the first entry starts */
#define SFS_UNDO_HEAD_LEN 48ull            /* an entry's head */

/* The geometry the entries of a log were made under. */
struct sfs_undo_geom {
	uint32_t lss, pss;        /* logical and physical sector */
	uint32_t awu;             /* atomic write unit */
	uint32_t awb;             /* atomic write boundary, 0: none */
	bool rmw_power_safe;
};

struct sfs_undo_hdr {
	struct sfs_undo_geom g;
	uint64_t gen;             /* the file's generation */
	uint64_t live;            /* offset of the oldest entry in the log (the tail when none) */
	uint64_t mark;            /* its number (the next write's when none) */
};

enum sfs_undo_kind { SFS_UNDO_WRITE = 1, SFS_UNDO_KEPT = 2 };

struct sfs_undo_rec {
	enum sfs_undo_kind kind;
	uint64_t seq;             /* the write's number since power-on */
	uint64_t off, len;        /* the disk range it wrote, bytes */
	uint64_t at;              /* where its entry starts in the file */
};

/* Bytes the entry of r takes in the file, head and padding included. */
uint64_t sfs_undo_rec_size(const struct sfs_undo_rec *r);

/* Open dirfd/fname read-write (no symlink followed, no FIFO waited on), creating it (mode
 * 0600, empty) when create.  The fd, or -ENOENT (absent, !create), -EPERM (not a regular
 * file, or more than one link), -errno. */
int sfs_undo_open(int dirfd, const char *fname, bool create);

/* Write h as the file's header.  0 or -errno. */
int sfs_undo_write_hdr(int fd, const struct sfs_undo_hdr *h);

/* Read the header into h.  0; -ENODATA when the file is shorter than a header (a file just
 * created); -EUCLEAN when it is not one (magic, version, checksum, a geometry that is not);
 * -errno. */
int sfs_undo_read_hdr(int fd, struct sfs_undo_hdr *h);

/* Write r's entry (head and, for a WRITE entry, r->len bytes of data) at r->at.  0 or -errno. */
int sfs_undo_append(int fd, uint64_t gen, const struct sfs_undo_rec *r, const void *data);

/* Call cb for each whole entry from h->live, in order, while it returns 0; *tail (may be
 * NULL) is set to the offset after the last whole entry.  The entries, or cb's non-zero
 * return, or -errno (-ENOMEM). */
long sfs_undo_scan(int fd, const struct sfs_undo_hdr *h, int (*cb)(void *ctx, const struct sfs_undo_rec *r),
		   void *ctx, uint64_t *tail);

/* Read the saved data of disk bytes [from, from+len) (inside r's range) into buf.  0, -EIO
 * when the file ends before them, or -errno. */
int sfs_undo_read(int fd, const struct sfs_undo_rec *r, uint64_t from, void *buf, uint64_t len);

/* Empty the log: a new generation, live at the first entry's place, mark as given, then the
 * file cut there.  fsync'd when durable.  0 or -errno. */
int sfs_undo_reset(int fd, struct sfs_undo_hdr *h, uint64_t mark, bool durable);

/* Copy the entries [h->live, tail) to a new file (a temporary one in dirfd) where they start
 * at SFS_UNDO_HDR_LEN, and rename it over dirfd/fname: *fd is the new file's (the old one
 * closed), h->live SFS_UNDO_HDR_LEN, *shift how far every entry moved down.  On failure the
 * old file stays as it was.  0 or -errno. */
int sfs_undo_compact(int dirfd, const char *fname, int *fd, struct sfs_undo_hdr *h, uint64_t tail,
		     uint64_t *shift);

/* A fresh generation (time, process and a counter, mixed).  Never fails. */
uint64_t sfs_undo_new_gen(void);

#endif
