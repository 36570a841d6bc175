/* SPDX-License-Identifier: MIT */
/*
 * cell.h - an image's statistics as the image holds them: live
 * while it is busy, packed once it has been idle a while.
 *
 * Live stats (stats.h) are a mapping of about 177 KiB, of which an image
 * that had some I/O keeps tens of KiB resident for as long as it is
 * loaded; ten thousand images read once would hold hundreds of MiB.  So
 * a cell holds them in one of three states:
 *
 *   none ──first I/O──▶ live ──idle look, twice quiet──▶ packed
 *                        ▲                                  │
 *                        └──────────── next I/O ────────────┘
 *
 * none:   never recorded into; a snapshot is zeros of the generation and
 *         start the stats will have (as before any I/O).
 * live:   the sharded, lock-free stats of stats.c.
 * packed: every value the stats held (each counter and histogram bucket
 *         that is not zero, the max fields, the reset generation, the
 *         start of the elapsed time, both recent lists), in one small
 *         allocation (sfs_stats_pack): a snapshot, a render or the recent
 *         lists of a packed cell are those of the live stats it came from,
 *         exactly; the next I/O unpacks it into live stats again.
 *
 * Requests that record go in and out of the cell (sfs_stats_cell_enter,
 * sfs_stats_cell_leave: two atomic adds, the hot path's whole cost) and
 * take the live stats with sfs_stats_cell_get in between.  Packing
 * (sfs_stats_cell_idle, from the daemon's idle thread) takes the cell's
 * mutex, clears the live pointer, then looks whether any request is in
 * (entered and not left): if so it puts the pointer back and leaves the
 * stats live; if not, no request can hold the old pointer (one that
 * entered after the clear finds it NULL and waits for the mutex), so the
 * stats are packed and unmapped.  Both sides use sequentially consistent
 * atomics (a request: its entry, then the pointer; packing: the pointer,
 * then the entries), so at least one of them sees the other.  Readers
 * (snapshot, recent lists, reset) take the mutex, so stats are never
 * packed or freed under them.
 */
#ifndef SFS_STATS_CELL_H
#define SFS_STATS_CELL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/* ---- the packed form ---- */

struct sfs_stats_packed;   /* opaque, one allocation */

/* Pack what st holds: its snapshot's counters (those not zero), max fields and reset generation,
 * the start of its elapsed time, its recent lists.  Precondition: nothing records into st or
 * resets it meanwhile.  0 or -ENOMEM. */
int sfs_stats_pack(const struct sfs_stats *st, struct sfs_stats_packed **out);

/* Live stats holding exactly what pk holds.  0 or -ENOMEM. */
int sfs_stats_unpack(const struct sfs_stats_packed *pk, struct sfs_stats **out);

/* The snapshot and recent lists of the stats pk was packed from (the elapsed time to now). */
void sfs_stats_packed_snapshot(const struct sfs_stats_packed *pk, struct sfs_stats_snap *snap);
void sfs_stats_packed_recent(const struct sfs_stats_packed *pk, struct sfs_stats_recent *out);

/* The bytes pk takes. */
size_t sfs_stats_packed_size(const struct sfs_stats_packed *pk);

/* Free pk (NULL is fine). */
void sfs_stats_packed_free(struct sfs_stats_packed *pk);

/* ---- the cell ---- */

enum sfs_stats_state { SFS_STATS_NONE, SFS_STATS_LIVE, SFS_STATS_PACKED };

/* The fields are cell.c's. */
struct sfs_stats_cell {
	struct sfs_stats *live;           /* atomic: the stats recorded into, NULL when none or packed */
	struct sfs_stats_packed *packed;  /* under lk: the values while idle */
	uint64_t gen, t0;                 /* under lk: the generation and start of stats made now */
	uint64_t in, out;                 /* atomic: requests that entered, and that left */
	uint64_t seen;                    /* under lk: in + out, when the idle look last came */
	pthread_mutex_t lk;
	bool on;                          /* keep statistics at all */
};

/* An empty cell (state none), keeping stats when on. */
void sfs_stats_cell_init(struct sfs_stats_cell *c, bool on);

/* Free what c holds.  Precondition: no other call on c runs or can start. */
void sfs_stats_cell_destroy(struct sfs_stats_cell *c);

/* A request that may record begins, and ends.  Cheap: one atomic add each. */
static inline void sfs_stats_cell_enter(struct sfs_stats_cell *c)
{
	__atomic_add_fetch(&c->in, 1, __ATOMIC_SEQ_CST);
}

static inline void sfs_stats_cell_leave(struct sfs_stats_cell *c)
{
	__atomic_add_fetch(&c->out, 1, __ATOMIC_RELEASE);
}

/* The live stats to record into, made or unpacked if need be; valid until the matching leave.
 * NULL when the cell keeps no stats or memory ran out.  Precondition: entered. */
struct sfs_stats *sfs_stats_cell_get(struct sfs_stats_cell *c);

/* A snapshot and the recent lists, in whatever state c is (none: zeros, empty lists). */
void sfs_stats_cell_snapshot(struct sfs_stats_cell *c, struct sfs_stats_snap *snap);
void sfs_stats_cell_recent(struct sfs_stats_cell *c, struct sfs_stats_recent *out);

/* Run a command written to a stats file, as sfs_stats_command: "reset" zeroes every counter and
 * list and takes a new generation, whatever the state (packed or none: nothing is made, the
 * empty snapshot takes the new generation).  0, or -EINVAL (nothing changes). */
int sfs_stats_cell_command(struct sfs_stats_cell *c, const char *buf, size_t len);

/* The state c is in now (a hint while requests run). */
enum sfs_stats_state sfs_stats_cell_state(struct sfs_stats_cell *c);

/* The idle look: pack c's live stats when no request entered or left since the previous look
 * (so none is in).  1 when it packed them, 0 when it did not (none, packed already, busy, or this
 * look starts the quiet time), -ENOMEM (still live).  Never waits for a request. */
int sfs_stats_cell_idle(struct sfs_stats_cell *c);

#endif
