/* SPDX-License-Identifier: MIT */
/*
 * cell.c - an image's statistics, live while busy and packed while
 * idle (see cell.h for the states and the protocol).
 *
 * The packed form is one allocation:
 *
 *   [ generation | start_ns | nvals | nrefused | nrmw ]
 *   [ refused entries ... | rmw entries ... ]   struct sfs_recent_io each,
 *                                               newest first, as listed
 *   [ values ... ]                              nvals uint64_t: the counters
 *                                               of a snapshot that are not 0
 *   [ slots ... ]                               nvals uint16_t: where each
 *                                               value sits in the snapshot
 *
 * An image read once keeps about ten values (reads, bytes, a size and an
 * alignment bucket, the read latency's count, sum, max and bucket): some
 * 130 bytes with the allocator's header, against the tens of KiB its live
 * stats keep resident.  Unpacking puts every value into one shard of new
 * live stats (stats.c's sfs_stats_new_from), which a snapshot sums back
 * to the same figures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "cell.h"

#define NSLOT (sizeof(struct sfs_stats_snap) / sizeof(uint64_t))

_Static_assert(NSLOT <= UINT16_MAX, "a snapshot's slots must be numbered in 16 bits");
_Static_assert(sizeof(struct sfs_recent_io) % sizeof(uint64_t) == 0, "entries are whole words");

struct sfs_stats_packed {
	uint64_t generation, start_ns;
	uint32_t nvals;
	uint16_t nrefused, nrmw;
	uint64_t w[];                 /* entries, values, then slots (top of file) */
};

static const struct sfs_recent_io *entries_of(const struct sfs_stats_packed *pk)
{
	return (const struct sfs_recent_io *)(const void *)pk->w;
}

static const uint64_t *values_of(const struct sfs_stats_packed *pk)
{
	return pk->w + (size_t)(pk->nrefused + pk->nrmw) * (sizeof(struct sfs_recent_io) / sizeof(uint64_t));
}

static const uint16_t *slots_of(const struct sfs_stats_packed *pk)
{
	return (const uint16_t *)(const void *)(values_of(pk) + pk->nvals);
}

static size_t packed_size(size_t nentries, size_t nvals)
{
	return sizeof(struct sfs_stats_packed) + nentries * sizeof(struct sfs_recent_io) +
	       nvals * (sizeof(uint64_t) + sizeof(uint16_t));
}

static uint64_t snap_slot(const struct sfs_stats_snap *s, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)s + i * sizeof(uint64_t), sizeof(v));
	return v;
}

static void set_snap_slot(struct sfs_stats_snap *s, size_t i, uint64_t v)
{
	memcpy((char *)s + i * sizeof(uint64_t), &v, sizeof(v));
}

int sfs_stats_pack(const struct sfs_stats *st, struct sfs_stats_packed **out)
{
	struct sfs_stats_snap *snap = malloc(sizeof(*snap));
	struct sfs_stats_recent *rec = malloc(sizeof(*rec));
	struct sfs_stats_packed *pk = NULL;
	size_t nvals = 0, k = 0;
	uint64_t *vals;
	uint16_t *slots;
	int rc = -ENOMEM;

	if (!snap || !rec)
		goto out;
	sfs_stats_snapshot(st, snap);
	sfs_stats_recent(st, rec);
	for (size_t i = 0; i < NSLOT; i++)
		if (sfs_stats_is_counter(i) && snap_slot(snap, i))
			nvals++;
	pk = malloc(packed_size(rec->nrefused + rec->nrmw, nvals));
	if (!pk)
		goto out;
	pk->generation = snap->reset_generation;
	pk->start_ns = sfs_stats_start(st);
	pk->nvals = (uint32_t)nvals;
	pk->nrefused = (uint16_t)rec->nrefused;
	pk->nrmw = (uint16_t)rec->nrmw;
	memcpy(pk->w, rec->refused, rec->nrefused * sizeof(rec->refused[0]));
	memcpy((char *)pk->w + rec->nrefused * sizeof(rec->refused[0]), rec->rmw, rec->nrmw * sizeof(rec->rmw[0]));
	vals = (uint64_t *)values_of(pk);
	slots = (uint16_t *)slots_of(pk);
	for (size_t i = 0; i < NSLOT; i++) {
		if (sfs_stats_is_counter(i) && snap_slot(snap, i)) {
			vals[k] = snap_slot(snap, i);
			slots[k++] = (uint16_t)i;
		}
	}
	*out = pk;
	rc = 0;
out:
	free(rec);
	free(snap);
	return rc;
}

/* The counters pk holds, into snap (zeroed first), with its generation. */
static void fill_counters(const struct sfs_stats_packed *pk, struct sfs_stats_snap *snap)
{
	const uint64_t *vals = values_of(pk);
	const uint16_t *slots = slots_of(pk);

	memset(snap, 0, sizeof(*snap));
	for (uint32_t k = 0; k < pk->nvals; k++)
		set_snap_slot(snap, slots[k], vals[k]);
	snap->reset_generation = pk->generation;
}

void sfs_stats_packed_recent(const struct sfs_stats_packed *pk, struct sfs_stats_recent *out)
{
	const struct sfs_recent_io *e = entries_of(pk);

	out->nrefused = pk->nrefused;
	out->nrmw = pk->nrmw;
	memcpy(out->refused, e, pk->nrefused * sizeof(*e));
	memcpy(out->rmw, e + pk->nrefused, pk->nrmw * sizeof(*e));
}

int sfs_stats_unpack(const struct sfs_stats_packed *pk, struct sfs_stats **out)
{
	struct sfs_stats_snap *snap = malloc(sizeof(*snap));
	struct sfs_stats_recent *rec = malloc(sizeof(*rec));
	int rc = -ENOMEM;

	if (snap && rec) {
		fill_counters(pk, snap);
		sfs_stats_packed_recent(pk, rec);
		rc = sfs_stats_new_from(snap, rec, pk->start_ns, out);
	}
	free(rec);
	free(snap);
	return rc;
}

void sfs_stats_packed_snapshot(const struct sfs_stats_packed *pk, struct sfs_stats_snap *snap)
{
	fill_counters(pk, snap);
	snap->elapsed_ns = sfs_now_ns() - pk->start_ns;
	sfs_stats_origin(&snap->daemon_start, &snap->daemon_pid);
}

size_t sfs_stats_packed_size(const struct sfs_stats_packed *pk)
{
	return packed_size((size_t)pk->nrefused + pk->nrmw, pk->nvals);
}

void sfs_stats_packed_free(struct sfs_stats_packed *pk)
{
	free(pk);
}

/* ---- the cell ---- */

void sfs_stats_cell_init(struct sfs_stats_cell *c, bool on)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lk, NULL);
	c->on = on;
	c->gen = sfs_stats_next_generation();
	c->t0 = sfs_now_ns();
}

void sfs_stats_cell_destroy(struct sfs_stats_cell *c)
{
	sfs_stats_free(c->live);
	sfs_stats_packed_free(c->packed);
	c->live = NULL;
	c->packed = NULL;
	pthread_mutex_destroy(&c->lk);
}

struct sfs_stats *sfs_stats_cell_get(struct sfs_stats_cell *c)
{
	/* seq_cst: after this request's entry (sfs_stats_cell_idle's other half) */
	struct sfs_stats *st = __atomic_load_n(&c->live, __ATOMIC_SEQ_CST);

	if (st || !c->on)
		return st;
	pthread_mutex_lock(&c->lk);
	st = c->live;
	if (!st && (c->packed ? sfs_stats_unpack(c->packed, &st) : sfs_stats_new_at(c->gen, c->t0, &st)) == 0) {
		sfs_stats_packed_free(c->packed);
		c->packed = NULL;
		__atomic_store_n(&c->live, st, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&c->lk);
	return st;
}

void sfs_stats_cell_snapshot(struct sfs_stats_cell *c, struct sfs_stats_snap *snap)
{
	pthread_mutex_lock(&c->lk);
	if (c->live)
		sfs_stats_snapshot(c->live, snap);
	else if (c->packed)
		sfs_stats_packed_snapshot(c->packed, snap);
	else
		sfs_stats_snapshot_empty(c->gen, c->t0, snap);
	pthread_mutex_unlock(&c->lk);
}

void sfs_stats_cell_recent(struct sfs_stats_cell *c, struct sfs_stats_recent *out)
{
	pthread_mutex_lock(&c->lk);
	if (c->live) {
		sfs_stats_recent(c->live, out);
	} else if (c->packed) {
		sfs_stats_packed_recent(c->packed, out);
	} else {
		out->nrefused = 0;
		out->nrmw = 0;
	}
	pthread_mutex_unlock(&c->lk);
}

int sfs_stats_cell_command(struct sfs_stats_cell *c, const char *buf, size_t len)
{
	int rc;

	pthread_mutex_lock(&c->lk);
	if (c->live) {
		rc = sfs_stats_command(c->live, buf, len);
	} else if ((rc = sfs_stats_command_check(buf, len)) == 0) {
		/* a reset of stats nobody records into: the empty ones of a new generation */
		sfs_stats_packed_free(c->packed);
		c->packed = NULL;
		c->gen = sfs_stats_next_generation();
		c->t0 = sfs_now_ns();
	}
	pthread_mutex_unlock(&c->lk);
	return rc;
}

enum sfs_stats_state sfs_stats_cell_state(struct sfs_stats_cell *c)
{
	enum sfs_stats_state s;

	pthread_mutex_lock(&c->lk);
	s = c->live ? SFS_STATS_LIVE : c->packed ? SFS_STATS_PACKED : SFS_STATS_NONE;
	pthread_mutex_unlock(&c->lk);
	return s;
}

int sfs_stats_cell_idle(struct sfs_stats_cell *c)
{
	struct sfs_stats_packed *pk;
	struct sfs_stats *st;
	uint64_t in, out;
	int rc;

	if (!__atomic_load_n(&c->live, __ATOMIC_ACQUIRE))
		return 0;                           /* none, or packed already: nothing to do */
	if (pthread_mutex_trylock(&c->lk) != 0)
		return 0;                           /* a reader or an unpacking: busy, look again later */
	st = c->live;
	in = __atomic_load_n(&c->in, __ATOMIC_SEQ_CST);
	out = __atomic_load_n(&c->out, __ATOMIC_ACQUIRE);
	if (!st || in + out != c->seen) {
		c->seen = in + out;                 /* requests came or went since the last look */
		pthread_mutex_unlock(&c->lk);
		return 0;
	}
	/* the pointer first, then the entries: a request entered before this store is counted below,
	 * one that enters after it finds NULL and waits for the mutex */
	__atomic_store_n(&c->live, NULL, __ATOMIC_SEQ_CST);
	in = __atomic_load_n(&c->in, __ATOMIC_SEQ_CST);
	out = __atomic_load_n(&c->out, __ATOMIC_ACQUIRE);   /* what the requests recorded is seen */
	if (in != out || in + out != c->seen) {
		__atomic_store_n(&c->live, st, __ATOMIC_SEQ_CST);
		c->seen = in + out;
		pthread_mutex_unlock(&c->lk);
		return 0;
	}
	rc = sfs_stats_pack(st, &pk);
	if (rc < 0) {
		__atomic_store_n(&c->live, st, __ATOMIC_SEQ_CST);
	} else {
		c->packed = pk;
		sfs_stats_free(st);
		rc = 1;
	}
	pthread_mutex_unlock(&c->lk);
	return rc;
}
