/* SPDX-License-Identifier: MIT */
/*
 * crash.h - what the crash explorer's files share: crash.c (the command:
 * options, the dry run, the rounds), crash_sample.c (the sample of crash
 * points, their names), crash_image.c (the image under test, its
 * snapshot and each round's fresh copy), crash_round.c (one round: the
 * workload, the cut, the check, and undoing all of it) and
 * crash_report.c (text and JSON).
 *
 * A crash point is a trigger and a seed:
 *
 *   cut-after-writes:K     the power goes right after the K-th write of
 *                          the round completes (the disk's own trigger)
 *   cut-after-flushes:K    ... after the K-th flush
 *   cut-after-seconds:T    the explorer cuts T seconds into the workload
 *   cut-at-end             the explorer cuts once the workload has exited
 *
 * and the seed is the cut's power_seed, which decides under a random
 * policy which unflushed writes are kept.  "SEED:TRIGGER" names a point:
 * --replay runs that one alone.
 */
#ifndef SFS_BENCH_CRASH_H
#define SFS_BENCH_CRASH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"
#include "loopdev.h"
#include "contract/names.h"

#define CRASH_MAX_POINTS 10000
#define CRASH_WHY_LEN 200
#define CRASH_TAIL_LEN 2048

enum crash_kind { CRASH_NONE, CRASH_WRITES, CRASH_FLUSHES, CRASH_SECONDS, CRASH_END, CRASH_NKINDS };

/* One crash point and what its round found. */
struct crash_point {
	enum crash_kind kind;         /* CRASH_NONE: the dry run, no cut */
	uint64_t k;                   /* WRITES, FLUSHES: the count */
	double at;                    /* SECONDS: into the workload */
	uint64_t seed;                /* the cut's power_seed */
	/* the round */
	bool ran;                     /* it ran to its check */
	bool reached;                 /* the trigger fired before the workload exited */
	bool cut;                     /* the power was cut */
	bool failed;                  /* the check failed (or timed out) */
	bool check_timeout, workload_timeout;
	int workload_status, check_status;   /* exit status, 128 + signal */
	double secs;                  /* the whole round */
	double workload_secs;         /* start to exit or cut */
	long long writes, flushes;    /* the image's, when the workload exited or the power went */
	long long unflushed, kept, lost, torn, damaged;  /* the cut's report; -1 unknown */
	json_t *lba;                  /* the cut's lost_lba, torn_lba, damaged_lba; NULL */
	char kept_image[SFS_NAME_MAX + 1];   /* the image left served (--keep-failing), or "" */
	char why[CRASH_WHY_LEN];      /* the check's last line of output */
	char tail[CRASH_TAIL_LEN];    /* the end of its output (failed points) */
};

/* The image under test (crash_image.c). */
struct crash_image {
	char path[PATH_MAX];          /* IMAGE, resolved: MNT/NAME */
	char mnt[PATH_MAX - 512], store[PATH_MAX - 512];
	char name[SFS_NAME_MAX + 1];
	unsigned logical, physical;
	uint64_t size;
	char *sidecar;                /* STORE/NAME.json, its text */
	char write_cache[16], policy[40];   /* the image's own */
	char work[PATH_MAX - 256];    /* STORE/.crash.XXXXXX: the snapshot, copies on their way */
	int snap;                     /* the snapshot, open; -1 */
	uint64_t snap_bytes;          /* the data it holds */
	bool cloned;                  /* round copies are reflinks (FICLONE) */
};

/* The explorer. */
struct crash {
	/* options */
	const char *workload, *check, *policy;
	bool loop, json, keep_failing;
	bool kinds[CRASH_NKINDS];
	unsigned npoints;
	uint64_t seed;
	double timeout, time_limit;
	bool replay;
	/* state */
	struct crash_image img;
	char tmp[PATH_MAX - 256];     /* TMPDIR/sectorfs-crash.XXXXXX: round dirs, outputs */
	struct tool_progress prog;
	uint64_t t0;
	/* the round under way (undone by crash_round_end) */
	unsigned round;
	char rname[SFS_NAME_MAX + 1]; /* its image's name, "" when none */
	char rpath[PATH_MAX];         /* MNT/rname */
	char rdir[PATH_MAX];          /* its scratch directory, SECTORFS_CRASH_DIR */
	struct loopdev lo;
	pid_t child;                  /* a workload or check running, 0 when none */
	/* results */
	struct crash_point dry;
	struct crash_point *pts;
	unsigned npts, nran, nfailed;
	bool interrupted, time_up;
};

/* ---- crash_sample.c ---- */

/* The words of --on, by kind ("writes"; "none" for CRASH_NONE). */
extern const char *const crash_kind_names[CRASH_NKINDS];

/* The trigger of p as text ("cut-after-writes:12"; "none" for the dry run) into buf; buf. */
const char *crash_trigger(const struct crash_point *p, char *buf, size_t len);

/* Parse "SEED:TRIGGER" (a seed from 0 to 2^64-1, decimal or 0x; a trigger as crash_trigger
 * writes it, K from 1, T from 0 to 10^6) into p, zeroed first.  0, or -1 when s is not one. */
int crash_parse_point(const char *s, struct crash_point *p);

/* The crash points of a run that made writes and flushes in secs seconds, npoints (> 0) of
 * them at most, of the kinds on, drawn from seed, into pts (room for npoints, zeroed): how
 * many (0 when none of the kinds on has a point: no writes, say).  Never fails. */
unsigned crash_sample(const bool on[CRASH_NKINDS], long long writes, long long flushes, double secs,
		      unsigned npoints, uint64_t seed, struct crash_point *pts);

/* ---- crash_image.c ---- */

/* Find IMAGE (path): a file of a sectorfs mount, powered on, whose store we can write; its
 * geometry, sidecar and failure keys into c->img.  0, or -1 (printed). */
int crash_image_find(struct crash *c, const char *path);

/* Copy the image's data (the extents its backing file holds, read through the mount; all-zero
 * 4 KiB runs left as holes) into a snapshot in STORE/.crash.XXXXXX.  0, or -1 (printed). */
int crash_image_snapshot(struct crash *c);

/* Make round's image c->rname from the snapshot (a reflink where the store's filesystem can,
 * else a copy of its data extents), declare it with the image's sidecar and look it up.  0, or
 * -1 (printed). */
int crash_image_make(struct crash *c);

/* Remove the round's image through the mount (sidecar, backing file and state together), or
 * with keep leave it served and forget it.  0, or -1 (printed). */
int crash_image_remove(struct crash *c, bool keep);

/* Remove the snapshot and its directory; free the sidecar. */
void crash_image_close(struct crash *c);

/* Set user.sectorfs.KEY of the round's image to value; 0, or -1 (printed). */
int crash_set_attr(struct crash *c, const char *key, const char *value);

/* user.sectorfs.power of the round's image: 1 on, 0 off, -1 unreadable. */
int crash_power_on(struct crash *c);

/* MNT/.stats/rname.json; NULL (printed) when it cannot be read. */
json_t *crash_round_stats(struct crash *c);

/* ---- crash_round.c ---- */

/* Run the round of point p: a fresh image, the workload, the cut, power on, the check.  0,
 * 1 when interrupted, -1 on an error that ends the exploration (printed).  The round is
 * undone in every case. */
int crash_round(struct crash *c, struct crash_point *p);

/* Undo what the round under way left: its processes, mounts, loop device, image (left
 * served when keep) and directory.  0, or -1 when something could not be undone (printed). */
int crash_round_end(struct crash *c, bool keep);

/* ---- crash_report.c ---- */

/* The points that failed, then the one-line summary, on stdout. */
void crash_print_text(const struct crash *c);

/* Everything as one JSON object on stdout; 0 or 1. */
int crash_print_json(const struct crash *c);

/* The one-line summary into buf. */
const char *crash_summary(const struct crash *c, char *buf, size_t len);

#endif
