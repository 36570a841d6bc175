/* SPDX-License-Identifier: MIT */
/*
 * cut.c - a power cut over a volatile write cache (wcache.h): which
 * units of the unflushed writes are kept, what that leaves in each
 * sector, and which physical sectors it damages.
 *
 * Both walks go from the newest entry to the oldest:
 *
 *   resolve:   entry e (newest first)
 *              - count it kept, lost or torn; its lost ranges to the report
 *              - damage: a physical sector P that e covers in part, in a
 *                lost unit, is damaged unless `whole` holds P
 *              - `whole` += the physical sectors e wrote whole and kept
 *                (a later write that rewrote P whole and was kept leaves
 *                P readable whatever an older one did)
 *
 *   rollback:  entry e (newest first)
 *              - a kept unit (a KEPT entry whole) settles its bytes
 *              - a lost unit writes, into the bytes not yet settled, the
 *                data saved before e
 *              so a sector ends with the data saved before the oldest
 *              lost write above its newest kept one: what the newest kept
 *              write left, or what was durable before them all.
 *
 * Every decision is unit_kept(): a function of the cut, the entry's number
 * and the unit's index, nothing else.  The rollback reads only the log,
 * which it does not change, so running it twice gives the same disk.
 */
#include "wcache_internal.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "util/prng.h"

/* Is the write e one atomic unit? */
static bool atomic_whole(const struct sfs_undo_geom *g, const struct wc_ent *e)
{
	return e->len <= g->awu && (!g->awb || e->off / g->awb == (e->off + e->len - 1) / g->awb);
}

/* The end of e's unit that starts at pos. */
static uint64_t unit_end(const struct sfs_undo_geom *g, const struct wc_ent *e, uint64_t pos)
{
	uint64_t end = e->off + e->len, next;

	if (atomic_whole(g, e))
		return end;
	next = (pos / g->awu + 1) * g->awu;
	return next < end ? next : end;
}

/* Does unit k of e survive cut c? */
static bool unit_kept(const struct sfs_wc_cut *c, const struct wc_ent *e, uint64_t k)
{
	if (e->kind == SFS_UNDO_KEPT)
		return true;
	switch (c->policy) {
	case SFS_WC_KEEP_ALL:
		return true;
	case SFS_WC_RANDOM:
		return sfs_draw_unit(sfs_draw(c->seed, e->seq, k)) < c->p;
	default:
		return false;
	}
}

void sfs_wc_report_free(struct sfs_wc_report *rep)
{
	sfs_ext_free(&rep->lost_lba);
	sfs_ext_free(&rep->torn_lba);
	sfs_ext_free(&rep->damaged_lba);
}

/* ---- resolve ---- */

/* Is any unit of e that meets [s, t) lost? */
static bool lost_in(const struct sfs_undo_geom *g, const struct sfs_wc_cut *c, const struct wc_ent *e,
		    uint64_t s, uint64_t t)
{
	uint64_t k = 0;

	for (uint64_t pos = e->off, ue; pos < e->off + e->len; pos = ue, k++) {
		ue = unit_end(g, e, pos);
		if (ue > s && pos < t && !unit_kept(c, e, k))
			return true;
	}
	return false;
}

/* The physical sectors e covers only in part and loses: damaged unless rewritten whole later. */
static int damage(const struct sfs_undo_geom *g, const struct sfs_wc_cut *c, const struct wc_ent *e,
		  const struct sfs_extents *whole, struct sfs_extents *dmg)
{
	uint64_t end = e->off + e->len, ends[2] = { e->off, end - 1 };
	int rc = 0;

	for (int i = 0; i < 2 && rc == 0; i++) {
		uint64_t ps = ends[i] / g->pss * g->pss, pe = ps + g->pss;

		if (i == 1 && ps == ends[0] / g->pss * g->pss)
			break;                           /* head and tail in one physical sector */
		if (ps >= e->off && pe <= end)
			continue;                        /* covered whole: no read-modify-write */
		if (lost_in(g, c, e, ps, pe) && !sfs_ext_any(whole, ps, pe, 1, NULL))
			rc = sfs_ext_set(dmg, ps / g->lss, pe / g->lss, 1);
	}
	return rc;
}

/* Add to whole the physical sectors e wrote whole in kept units. */
static int note_whole(const struct sfs_undo_geom *g, const struct sfs_wc_cut *c, const struct wc_ent *e,
		      struct sfs_extents *whole)
{
	uint64_t end = e->off + e->len, run = e->off, k = 0;
	int rc = 0;

	for (uint64_t pos = e->off, ue; pos < end && rc == 0; pos = ue, k++) {
		bool kept = unit_kept(c, e, k);

		ue = unit_end(g, e, pos);
		if (!kept || ue == end) {   /* a run of kept units ends: its whole physical sectors */
			uint64_t re = kept ? ue : pos;
			uint64_t ps = (run + g->pss - 1) / g->pss * g->pss, pe = re / g->pss * g->pss;

			if (ps < pe)
				rc = sfs_ext_set(whole, ps, pe, 1);
			run = ue;
		}
	}
	return rc;
}

/* Count e kept, lost or torn, and put its lost ranges in the report. */
static int tally(const struct sfs_undo_geom *g, const struct sfs_wc_cut *c, const struct wc_ent *e,
		 struct sfs_wc_report *rep)
{
	uint64_t k = 0, kept = 0, lost = 0;
	int rc = 0;

	for (uint64_t pos = e->off, ue; pos < e->off + e->len; pos = ue, k++) {
		ue = unit_end(g, e, pos);
		if (unit_kept(c, e, k))
			kept++;
		else
			lost++;
	}
	rep->unflushed++;
	if (!lost) {
		rep->kept++;
		return 0;
	}
	if (!kept) {
		rep->lost++;
		return sfs_ext_set(&rep->lost_lba, e->off / g->lss, (e->off + e->len) / g->lss, 1);
	}
	rep->torn++;
	k = 0;
	for (uint64_t pos = e->off, ue; pos < e->off + e->len && rc == 0; pos = ue, k++) {
		ue = unit_end(g, e, pos);
		if (!unit_kept(c, e, k))
			rc = sfs_ext_set(&rep->torn_lba, pos / g->lss, ue / g->lss, 1);
	}
	return rc;
}

int sfs_wc_resolve(struct sfs_wc *wc, const struct sfs_wc_cut *c, struct sfs_wc_report *rep)
{
	struct sfs_undo_geom g;
	struct sfs_extents whole;
	bool rmw;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	sfs_ext_init(&whole);
	pthread_mutex_lock(&wc->lk);
	g = wc->lg;
	rmw = !g.rmw_power_safe && g.pss > g.lss;
	for (size_t i = wc->n; i-- > wc->head && rc == 0;) {
		const struct wc_ent *e = &wc->ents[i];

		if (e->kind == SFS_UNDO_WRITE) {
			rc = tally(&g, c, e, rep);
			if (rc == 0 && rmw)
				rc = damage(&g, c, e, &whole, &rep->damaged_lba);
		}
		if (rc == 0 && rmw)
			rc = note_whole(&g, c, e, &whole);
	}
	pthread_mutex_unlock(&wc->lk);
	sfs_ext_free(&whole);
	if (rc < 0)
		sfs_wc_report_free(rep);
	return rc;
}

/* ---- roll back ---- */

/* Write e's saved data into the bytes of [s, t) that settled does not hold. */
static int restore(struct sfs_wc *wc, const struct wc_ent *e, const struct sfs_extents *settled, uint64_t s,
		   uint64_t t)
{
	struct sfs_undo_rec r = sfs_wc_rec(e);
	size_t i = sfs_ext_find(settled, s);
	int rc = 0;

	while (s < t && rc == 0) {
		uint64_t gap_end = t, chunk;

		if (i < settled->n && settled->v[i].start <= s) {   /* settled: skip it */
			s = settled->v[i].end;
			i++;
			continue;
		}
		if (i < settled->n && settled->v[i].start < gap_end)
			gap_end = settled->v[i].start;
		chunk = gap_end - s < wc->buflen ? gap_end - s : wc->buflen;
		rc = sfs_undo_read(wc->fd, &r, s, wc->buf, chunk);
		if (rc == 0)
			rc = wc->b.write(wc->b.arg, wc->buf, chunk, s);
		s += chunk;
	}
	return rc;
}

int sfs_wc_rollback(struct sfs_wc *wc, const struct sfs_wc_cut *c)
{
	struct sfs_extents settled;
	struct sfs_undo_geom g;
	int rc;

	sfs_ext_init(&settled);
	pthread_mutex_lock(&wc->lk);
	g = wc->lg;
	rc = sfs_wc_buf(wc, 1u << 20);
	for (size_t i = wc->n; i-- > wc->head && rc == 0;) {
		const struct wc_ent *e = &wc->ents[i];
		uint64_t k = 0;

		for (uint64_t pos = e->off, ue; pos < e->off + e->len && rc == 0; pos = ue, k++) {
			ue = unit_end(&g, e, pos);
			if (unit_kept(c, e, k))
				rc = sfs_ext_set(&settled, pos, ue, 1);
			else
				rc = restore(wc, e, &settled, pos, ue);
		}
	}
	if (rc == 0)
		rc = wc->b.sync(wc->b.arg);
	pthread_mutex_unlock(&wc->lk);
	sfs_ext_free(&settled);
	return rc;
}
