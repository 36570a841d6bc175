/* SPDX-License-Identifier: MIT */
/*
 * fail.h - the failures of one disk, on purpose: its power (cuts, on
 * command or at a trigger), its volatile write cache (wcache.h) and its
 * unreadable sectors (badsect.h), with their counters, the report of the
 * last cut, and what of it survives a restart (diskstate.h, undolog.h).
 *
 * The data path calls two hooks around every request:
 *
 *   struct sfs_fail_io io = { .op = SFS_FAIL_WRITE, .off = off, .len = len };
 *   rc = sfs_fail_begin(f, &io);         refuse with rc (-EIO: power off,
 *   if (rc < 0) return rc;               a bad sector read) or go on
 *   rc = ... the transfer ...
 *   sfs_fail_end(f, &io, rc);            heal, flush bookkeeping, triggers
 *
 * Between the two, the request holds the disk's power lock shared, so a
 * cut (which takes it exclusively) happens between requests, never in the
 * middle of one.  Pairs never nest in one thread (the lock lets a waiting
 * cut go first, so a nested shared take would wait for it forever): a
 * read-modify-write is a read's pair, then a write's.  A write also needs
 * its byte range held exclusively from begin to the end of its transfer
 * (wcache.h), which image/io.c's range lock gives.
 *
 * Power.  user.sectorfs.power takes:
 *   on                     power on (after a cut); on a disk that is on,
 *                          cancels a trigger
 *   off, off:SEED          cut now (with SEED for this cut)
 *   cut-after-writes:N     cut once N more writes have completed
 *   cut-after-flushes:N    cut once N more flushes have completed
 * A cut refuses new requests at once, waits for those in flight, then, in
 * this order (the step hook "cut" after each, step.h):
 *   1 the undo log is fsync'd (everything the cut reads is durable)
 *   2 NAME.disk says: power off, this cut (seed, policy) under way, the
 *     damaged sectors it decides added: the commit point
 *   3 the rollback writes the disk and syncs it (idempotent, cut.c)
 *   4 the undo log is emptied, durably
 *   5 NAME.disk says power off, nothing under way
 * A crash before 2 leaves the power on and every completed write kept (a
 * daemon crash); after 2, the next open finishes steps 3 to 5 with the
 * recorded seed and policy and the log's own geometry, so the disk ends as
 * the cut decided.  Nothing else is written: not the sidecar, not another
 * image, the map only as any flush writes it (a block a lost write
 * allocated stays allocated, reading as the cut left it).  After a cut
 * every request fails with EIO until power is set on again.
 *
 * At open, a log with entries and no cut under way is what a daemon crash
 * left: every entry is kept (the backing synced, the log emptied) and
 * sfs_fail_counters' kept_at_start says how many unflushed writes that
 * kept (the caller logs it too).
 *
 * How the image uses it (image.h's "Failures"): image/failures.c opens it
 * with the sidecar's keys and a backing of raw transfers through the
 * allocation map (no stats, no model; the map flushed as the sync);
 * image/io.c calls the hooks around reads, writes, flushes, discards and
 * write-zeroes once their range is taken; fs/io.c makes the writes of an
 * O_DSYNC open FUA (the kernel sends no FUSE_FSYNC after them,
 * doc/failures.md); fs/xattr.c sets and reads the attributes; the stats
 * render sfs_fail_status; the store moves and removes NAME.disk and
 * NAME.undo with the map, pausing the state around it (sfs_fail_pause).
 *
 * Names.  The files are named after the image; a rename of the image
 * moves them (the store does, with the map) while the state is paused,
 * and sfs_fail_resume gives the state its new name.  An unlink removes
 * them and detaches the state (sfs_fail_detach): from then on it writes
 * no file, so nothing is left under a name another image may take.
 */
#ifndef SFS_FAIL_H
#define SFS_FAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "badsect.h"
#include "diskstate.h"
#include "util/log.h"
#include "wcache.h"

#define SFS_FAIL_VALUE_MAX 64      /* a buffer for power, power_seed, power_cut_policy */

enum sfs_fail_op { SFS_FAIL_READ, SFS_FAIL_WRITE, SFS_FAIL_FLUSH, SFS_FAIL_DISCARD, SFS_FAIL_ZERO };

/* One request between sfs_fail_begin and sfs_fail_end. */
struct sfs_fail_io {
	enum sfs_fail_op op;
	uint64_t off, len;         /* bytes; none for a flush */
	unsigned flags;            /* a write: SFS_WC_FUA */
	/* set by begin */
	uint64_t mark;             /* a flush's mark (wcache.h) */
	uint64_t bad_lba;          /* a refused read: the first unreadable sector */
	unsigned bad_kind;         /* ... its kind, SFS_BAD_* (0: the power is off) */
};

struct sfs_fail_config {
	struct sfs_wc_config wc;   /* the cache's keys and the disk's geometry */
	struct sfs_wc_cut cut;     /* the policy, probability and seed of cuts */
	uint64_t size;             /* the disk's size in bytes */
};

struct sfs_fail_counters {
	uint64_t power_cuts;       /* cuts since open or reset */
	uint64_t lost_writes;      /* writes lost whole by them */
	uint64_t torn_writes;      /* writes kept in part */
	uint64_t damaged_sectors;  /* logical sectors they left unreadable */
	uint64_t media_errors;     /* reads refused for a bad or damaged sector */
	uint64_t cached_bytes;     /* unflushed now */
	uint64_t destaged_bytes;   /* destaged since open */
	uint64_t kept_at_start;    /* unflushed writes a daemon crash left, kept at open */
	uint64_t bad_sectors;      /* in the list now, every kind */
};

/* Everything the stats show of a disk's failures (sfs_fail_status). */
struct sfs_fail_status {
	bool power_off;
	char trigger[SFS_FAIL_VALUE_MAX];   /* the trigger waiting to fire, "" for none */
	uint64_t trigger_left;              /* ... the writes or flushes it waits for */
	struct sfs_wc_cut next;             /* the policy and seed of the next cut */
	struct sfs_wc_config wc;            /* the cache's keys */
	struct sfs_fail_counters cnt;
};

/* The last cut. */
struct sfs_fail_cutinfo {
	uint64_t number;           /* 1 for the first cut since open; 0: none yet */
	uint64_t time_ns;          /* when (CLOCK_REALTIME, ns since the epoch) */
	struct sfs_wc_cut cut;     /* its policy, probability and seed */
	char trigger[SFS_FAIL_VALUE_MAX]; /* "off", "cut-after-writes:5", "cut-after-flushes:1" */
	struct sfs_wc_report rep;  /* what it kept, lost, tore and damaged */
};

struct sfs_fail;

/* Open the failure state of image name: its NAME.disk and NAME.undo in state_fd, b the raw
 * transfers of its disk (wcache.h).  A cut under way is finished and a crash's log kept
 * (above), each logged through log.  cfg is copied.  0; -EUCLEAN (NAME.disk or NAME.undo
 * damaged), -EPERM (not regular files), -EINVAL (cfg breaks a key's rule), -ENOMEM or -errno,
 * with err naming the file and the reason. */
int sfs_fail_open(int state_fd, const char *name, const struct sfs_fail_config *cfg, const struct sfs_wc_backing *b,
		  const struct sfs_log *log, struct sfs_fail **out, char *err, size_t errlen);

/* Close: writes still in the cache are kept (the image flushed before), the log removed.
 * Precondition: no request between begin and end.  0 or -errno (f is freed either way). */
int sfs_fail_close(struct sfs_fail *f);

/* Before request io: 0 (then sfs_fail_end must follow), or -EIO (power off: io->bad_kind 0;
 * a read of an unreadable sector: io->bad_lba, io->bad_kind), or the cache's -errno for a
 * write whose old contents could not be saved. */
int sfs_fail_begin(struct sfs_fail *f, struct sfs_fail_io *io);

/* After request io, rc its result: on success a write heals bad sectors (persisted), a flush
 * drops what it made durable, and a trigger that comes due cuts the power now.  Errors of
 * that bookkeeping are logged, never returned: the request is done. */
void sfs_fail_end(struct sfs_fail *f, struct sfs_fail_io *io, int rc);

/* Set user.sectorfs.power (value, len bytes, a trailing newline ignored).  0; -EINVAL with err
 * naming what is wrong (also: a trigger set while the power is off); or the -errno with which
 * the cut or the power-on could not be recorded, err saying why (a cut that fails before its
 * commit leaves the power on; one that fails after it leaves the power off and the cut to be
 * finished by the next power-on or start). */
int sfs_fail_power_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen);

/* "on" or "off". */
const char *sfs_fail_power(struct sfs_fail *f);

/* Set user.sectorfs.power_seed (a decimal or 0x number).  0 or -EINVAL with err. */
int sfs_fail_seed_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen);

/* The seed of the next cut. */
uint64_t sfs_fail_seed(struct sfs_fail *f);

/* Set user.sectorfs.power_cut_policy (sfs_wc_parse_policy).  0 or -EINVAL with err. */
int sfs_fail_policy_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen);

/* The policy as it is set, into buf (len bytes). */
void sfs_fail_policy(struct sfs_fail *f, char *buf, size_t len);

/* Apply commands to user.sectorfs.bad_sectors (badsect.h) and persist them, all or none.
 * 0; -EINVAL/-E2BIG with err; or the save's -errno (the list as before). */
int sfs_fail_bad_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen);

/* The listing of user.sectorfs.bad_sectors into a malloc'd string.  0 or -ENOMEM. */
int sfs_fail_bad_get(struct sfs_fail *f, char **out, size_t *len);

/* The disk now has size bytes (a grow): bad sectors may be added up to its new end. */
void sfs_fail_resize(struct sfs_fail *f, uint64_t size);

/* The counters now. */
void sfs_fail_counters(struct sfs_fail *f, struct sfs_fail_counters *c);

/* Zero the counters (a stats reset); the cache's state and the list stay. */
void sfs_fail_reset_counters(struct sfs_fail *f);

/* A copy of the last cut into out (free with sfs_wc_report_free(&out->rep)).  0 or -ENOMEM. */
int sfs_fail_last_cut(struct sfs_fail *f, struct sfs_fail_cutinfo *out);

/* The power, the trigger, the next cut's settings, the keys and the counters, into out. */
void sfs_fail_status(struct sfs_fail *f, struct sfs_fail_status *out);

/* What STORE/.sectorfs (statefd) says of image name's failures, read without serving it (for
 * sectorfs-img): its NAME.disk (ds: the power, a cut under way, the bad sectors; the defaults
 * when there is none) and the entries of its NAME.undo (*writes: unflushed writes a crash
 * left, kept at the next start; 0 when there is no log).  The disk has sectors lss/pss and
 * size bytes.  0 with ds to free (sfs_disk_free); -EUCLEAN (a damaged NAME.disk or a log
 * header that is not one), -EPERM or -errno, with err naming the file and the reason. */
int sfs_fail_peek(int statefd, const char *name, uint32_t lss, uint32_t pss, uint64_t size,
		  struct sfs_diskstate *ds, uint64_t *writes, char *err, size_t errlen);

/* Before the store renames image from over image to (STORE/.sectorfs is statefd): for each of
 * NAME.disk and NAME.undo that to has and from has not, give from one that says nothing (a
 * disk that is on with an empty list, an empty log of from's sectors lss/pss), so that the
 * move replaces to's and no state of the image replaced stays behind.  Durable.  0 or -errno. */
int sfs_fail_cover_files(int statefd, const char *from, const char *to, uint32_t lss, uint32_t pss);

/* Hold the state still: wait for the requests in flight, then let no request, cut, attribute
 * or heal run and no file of the state be written until sfs_fail_resume.  For the store, while
 * it moves or removes NAME.disk and NAME.undo.  Never fails. */
void sfs_fail_pause(struct sfs_fail *f);

/* End a pause; name (may be NULL: unchanged) is the image's name from now on, under which its
 * files were just moved. */
void sfs_fail_resume(struct sfs_fail *f, const char *name);

/* The image was unlinked and its files removed (precondition: paused): from now on the state
 * writes no file (its cache is dropped: writes are durable, as nothing can cut a disk that no
 * name reaches; the power and the list stay as they are, in memory).  Never fails. */
void sfs_fail_detach(struct sfs_fail *f);

#endif
