/* SPDX-License-Identifier: MIT */
/*
 * wcache.h - a drive's volatile write cache, and what a power cut does to
 * the writes it holds.
 *
 * The model.  With write_cache "volatile" a completed write is not yet
 * durable: it sits in the drive's cache until a flush (every write
 * completed before the flush becomes durable) or until more than
 * write_cache_size bytes are unflushed (the oldest writes are destaged,
 * made durable, first).  A write with FUA, a discard, a write-zeroes and a
 * write larger than the cache are durable at completion.  Reads always see
 * the latest completed write.  At a power cut each unflushed write, or
 * each atomic unit of it, is kept or lost:
 *
 *   policy     lose-all (the worst case, default), keep-all, or random
 *              (each unit kept with probability p, 0.5 unless given),
 *              drawn with prng.h's sfs_draw(seed, write number, unit)
 *   units      a write no longer than atomic_write_unit (awu) that does
 *              not cross an atomic_write_boundary (awb, when set) is one
 *              unit, kept or lost whole; any other write is cut at every
 *              multiple of awu into units (torn when some are kept and
 *              some lost)
 *   result     each sector holds the data of the newest kept write that
 *              covers it, or, when none does, the data that was durable
 *              before the oldest unflushed write of it
 *   damage     with rmw_power_safe false (the default where the physical
 *              sector is larger than the logical one), a lost write that
 *              covers a physical sector only in part damages that whole
 *              physical sector (the drive was reading, merging and writing
 *              it back), unless a later kept write rewrote it whole: every
 *              logical sector in it then reads EIO (badsect.h) until a
 *              write covers it whole
 *
 * Write numbers count every write since the cache was opened or last
 * emptied by a cut, so the same seed and the same sequence of writes give
 * the same outcome.
 *
 * Where unflushed data lives: write-through plus an undo log.  Every write
 * goes to the backing file at once, as without a cache; before a volatile
 * write its range's old contents are appended to STORE/.sectorfs/NAME.undo
 * (undolog.h), and flushes and destaging drop entries from its head.  At a
 * cut the log is walked from its newest entry back: a lost unit's sectors
 * not yet settled get the data saved before it, a kept unit settles its
 * sectors, so each ends as the newest kept write left it or as it was
 * before the oldest lost one.  Why this and not a redo cache (writes held
 * in a cache file, reads served through an overlay, flush copying them
 * home):
 *   - crash-safety: after kill -9 the rule is that every completed write
 *     is kept, and write-through has them all in the backing file already:
 *     nothing to replay, no overlay to rebuild, and the next start only
 *     counts the log's entries to say how many unflushed writes it kept.
 *     A redo cache would have to be replayed, and every completed write
 *     would depend on its cache file being whole;
 *   - reads need no overlay and no lookup, so the data path, the stats and
 *     the allocation map stay as they are; only writes change;
 *   - the cut is idempotent: it writes, for each sector, data taken from
 *     the log, which it never modifies, so a cut interrupted by a crash is
 *     finished by running it again (fail.c records the decision first);
 *   - cost: a volatile write reads its range and appends it to the log
 *     (about three transfers where there was one, serialised by the
 *     cache's lock), and the log takes up to write_cache_size plus 48
 *     bytes an entry on the state directory's filesystem, never memory
 *     beyond 40 bytes an entry for the index; a redo cache costs two
 *     writes, a copy at flush and the overlay on every read.  A flush and
 *     destaging cost nothing beyond the header rewrite;
 *   - determinism is the same for both: the outcome is a function of the
 *     seed and the order of the entries.
 * A write larger than the cache, and a discard or write-zeroes (of any
 * size: saving what a 1 TiB discard covers is out of the question), are
 * durable at completion and logged as KEPT entries without data: they
 * settle their range at a cut, so an older lost write under them stays
 * overwritten, as on a drive that completed them.  When nothing is in the
 * cache a KEPT entry is not even logged.
 *
 * The caller owns the ordering: a write's range must be held exclusively
 * (image/io.c's range lock) from sfs_wc_write until its data is written, so
 * that overlapping writes enter the log in the order their data lands; no
 * I/O may run during sfs_wc_resolve, sfs_wc_rollback or sfs_wc_drop.
 */
#ifndef SFS_WCACHE_H
#define SFS_WCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract/failkeys.h"
#include "util/extents.h"
#include "undolog.h"

/* sfs_wc_write flags */
#define SFS_WC_FUA 1u      /* durable at completion (an O_DSYNC/O_SYNC write) */
#define SFS_WC_ZERO 2u     /* a discard or write-zeroes: durable at completion, no data saved */

/* The disk under the cache: whole transfers at byte offsets (multiples of lss), and making
 * what was written durable.  Each returns 0 or a negative errno. */
struct sfs_wc_backing {
	int (*read)(void *arg, void *buf, size_t len, uint64_t off);
	int (*write)(void *arg, const void *buf, size_t len, uint64_t off);
	int (*sync)(void *arg);
	void *arg;
};

/* What a cut did, in logical sectors (LBAs). */
struct sfs_wc_report {
	uint64_t unflushed;        /* writes in the cache at the cut (durable ones not counted) */
	uint64_t kept, lost, torn; /* of them: kept whole, lost whole, kept in part */
	struct sfs_extents lost_lba;     /* the ranges of the writes lost whole */
	struct sfs_extents torn_lba;     /* the lost units of the torn ones */
	struct sfs_extents damaged_lba;  /* whole physical sectors left unreadable */
};

/* What the cache holds now. */
struct sfs_wc_state {
	uint64_t entries;          /* entries in the log (unflushed writes and durable ones after them) */
	uint64_t writes;           /* unflushed writes */
	uint64_t cached_bytes;     /* their bytes */
	uint64_t destaged_bytes;   /* bytes destaged since open */
	uint64_t next_seq;         /* the next write's number */
	uint64_t loaded;           /* entries found in the log when it was opened (0 after a drop) */
};

struct sfs_wc;

/* Open the cache of a disk: its log dirfd/fname (NAME.undo), made empty when absent; a log
 * found there is loaded as it is (its entries counted in sfs_wc_state's loaded) and must be
 * settled, kept (sfs_wc_keep) or cut (sfs_wc_resolve, sfs_wc_rollback, sfs_wc_drop), before
 * the next write.  c and b are copied.  0; -EPERM (the log is not a regular file of one link),
 * -EUCLEAN (it is not a log: its header is damaged), -ENOMEM or -errno, with err naming the
 * file. */
int sfs_wc_open(const struct sfs_wc_config *c, const struct sfs_wc_backing *b, int dirfd, const char *fname,
		struct sfs_wc **out, char *err, size_t errlen);

/* The log is called fname in its directory from now on (the image was renamed, its files
 * moved while no call on wc ran). */
void sfs_wc_set_name(struct sfs_wc *wc, const char *fname);

/* Free the cache; the log stays as it is.  NULL is fine. */
void sfs_wc_close(struct sfs_wc *wc);

/* A write of [off, off+len) is about to be made (flags SFS_WC_*): its range's old contents
 * saved (a volatile write), the oldest writes destaged to make room.  Precondition: the
 * caller holds the range exclusively until the data is written, and the loaded log is
 * settled.  0, or the backing's or the log's -errno: then the write must not be made. */
int sfs_wc_write(struct sfs_wc *wc, uint64_t off, uint64_t len, unsigned flags);

/* A flush starts: the mark that sfs_wc_flushed takes once every write before it is durable. */
uint64_t sfs_wc_flush_mark(struct sfs_wc *wc);

/* The writes numbered below mark are durable (the backing was synced): drop them.  0 or
 * -errno (the log's header not rewritten; the entries are dropped all the same). */
int sfs_wc_flushed(struct sfs_wc *wc, uint64_t mark);

/* What the cache holds now. */
void sfs_wc_state(struct sfs_wc *wc, struct sfs_wc_state *st);

/* The geometry the entries are resolved with: the config's, or a loaded log's. */
struct sfs_undo_geom sfs_wc_geom(struct sfs_wc *wc);

/* Make the log durable (fsync): before a cut is recorded.  0 or -errno. */
int sfs_wc_sync_log(struct sfs_wc *wc);

/* Decide the cut c over the entries now in the cache, touching nothing: rep (initialised
 * here, freed with sfs_wc_report_free) says what is kept, lost, torn and damaged.  A pure
 * function of the entries, their geometry and c.  0 or -ENOMEM. */
int sfs_wc_resolve(struct sfs_wc *wc, const struct sfs_wc_cut *c, struct sfs_wc_report *rep);

/* Apply the cut c (as sfs_wc_resolve decides it) to the backing: every sector as the result
 * rule says, then the backing synced.  Idempotent: run again after a crash, it gives the same
 * disk.  0 or -errno (the log's or the backing's). */
int sfs_wc_rollback(struct sfs_wc *wc, const struct sfs_wc_cut *c);

/* Forget every entry (after a cut, or kept): the log emptied (fsync'd when durable), the
 * write numbers start again at 0, the geometry is the config's.  0 or -errno. */
int sfs_wc_drop(struct sfs_wc *wc, bool durable);

/* Keep every entry (what a daemon crash does): sync the backing, then drop them.  0 or -errno. */
int sfs_wc_keep(struct sfs_wc *wc);

/* Free what rep holds (a zeroed or resolved report). */
void sfs_wc_report_free(struct sfs_wc_report *rep);

#endif
