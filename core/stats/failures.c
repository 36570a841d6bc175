/* SPDX-License-Identifier: MIT */
/*
 * failures.c - an image's failures in its stats files (failures.h):
 * the power, the write cache's keys, the next cut's policy, seed and
 * trigger, the counters, and the report of the last cut by LBA range.
 *
 * NAME.json gets one object, "failures":
 *
 *   {"power": "on", "write_cache": "volatile", "write_cache_size": 33554432,
 *    "atomic_write_unit": 4096, "atomic_write_boundary": null,
 *    "rmw_power_safe": false, "power_cut_policy": "lose-all", "power_seed": 0,
 *    "trigger": null, "trigger_left": 0,
 *    "power_cuts": 1, "cached_bytes": 0, "destaged_bytes": 0, "lost_writes": 3,
 *    "torn_writes": 0, "damaged_sectors": 8, "media_errors": 2,
 *    "bad_sectors": 8, "kept_at_start": 0,
 *    "last_cut": {"number": 1, "time": "...Z", "time_ns": ..., "trigger": "off",
 *                 "seed": 0, "policy": "lose-all", "unflushed_writes": 3,
 *                 "kept_writes": 0, "lost_writes": 3, "torn_writes": 0,
 *                 "lost_sectors": 24, "torn_sectors": 0, "damaged_sectors": 8,
 *                 "lost_lba": [[0, 7], [16, 31]], "torn_lba": [],
 *                 "damaged_lba": [[0, 7]]}}
 *
 * (last_cut null before the first cut).  LBA ranges are [first, last],
 * inclusive, as the bad-sector list and the kernel's I/O errors give
 * them; every range is listed.  The text file shows the same in a few
 * lines, at most TEXT_RANGES ranges of each list.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "failures.h"
#include "util/units.h"

#define TEXT_RANGES 8

/* A list of LBA ranges as [[first, last], ...]. */
static json_t *json_ranges(const struct sfs_extents *e)
{
	json_t *a = json_array();
	int err = !a;

	for (size_t i = 0; !err && i < e->n; i++)
		err |= json_array_append_new(a, json_pack("[I, I]", (json_int_t)e->v[i].start,
							  (json_int_t)(e->v[i].end - 1)));
	if (err) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *json_last_cut(const struct sfs_fail_cutinfo *c)
{
	const struct sfs_wc_report *r = &c->rep;
	char policy[64], when[48];

	if (!c->number)
		return json_null();
	sfs_wc_format_policy(&c->cut, policy, sizeof(policy));
	return json_pack("{s:I, s:s, s:I, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
			 "number", (json_int_t)c->number,
			 "time", sfs_stats_iso_time(c->time_ns, when, sizeof(when)),
			 "time_ns", (json_int_t)c->time_ns, "trigger", c->trigger, "seed", (json_int_t)c->cut.seed,
			 "policy", policy, "unflushed_writes", (json_int_t)r->unflushed,
			 "kept_writes", (json_int_t)r->kept, "lost_writes", (json_int_t)r->lost,
			 "torn_writes", (json_int_t)r->torn,
			 "lost_sectors", (json_int_t)sfs_ext_count(&r->lost_lba, ~0u),
			 "torn_sectors", (json_int_t)sfs_ext_count(&r->torn_lba, ~0u),
			 "damaged_sectors", (json_int_t)sfs_ext_count(&r->damaged_lba, ~0u),
			 "lost_lba", json_ranges(&r->lost_lba), "torn_lba", json_ranges(&r->torn_lba),
			 "damaged_lba", json_ranges(&r->damaged_lba));
}

int sfs_stats_fail_json(json_t *o, const struct sfs_stats_info *info)
{
	const struct sfs_fail_status *s = info->fail;
	const struct sfs_fail_counters *c;
	char policy[64];
	json_t *f;

	if (!s)
		return 0;
	c = &s->cnt;
	sfs_wc_format_policy(&s->next, policy, sizeof(policy));
	f = json_pack("{s:s, s:s, s:I, s:I, s:o, s:b, s:s, s:I, s:o, s:I}", "power", s->power_off ? "off" : "on",
		      "write_cache", s->wc.mode == SFS_WC_VOLATILE ? "volatile" : "none",
		      "write_cache_size", (json_int_t)s->wc.size, "atomic_write_unit", (json_int_t)s->wc.awu,
		      "atomic_write_boundary", s->wc.awb ? json_integer(s->wc.awb) : json_null(),
		      "rmw_power_safe", (int)s->wc.rmw_power_safe, "power_cut_policy", policy,
		      "power_seed", (json_int_t)s->next.seed,
		      "trigger", s->trigger[0] ? json_string(s->trigger) : json_null(),
		      "trigger_left", (json_int_t)s->trigger_left);
	if (!f)
		return -1;
	if (json_object_update_new(f, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
						"power_cuts", (json_int_t)c->power_cuts,
						"cached_bytes", (json_int_t)c->cached_bytes,
						"destaged_bytes", (json_int_t)c->destaged_bytes,
						"lost_writes", (json_int_t)c->lost_writes,
						"torn_writes", (json_int_t)c->torn_writes,
						"damaged_sectors", (json_int_t)c->damaged_sectors,
						"media_errors", (json_int_t)c->media_errors,
						"bad_sectors", (json_int_t)c->bad_sectors,
						"kept_at_start", (json_int_t)c->kept_at_start,
						"last_cut", info->last_cut ? json_last_cut(info->last_cut)
									   : json_null())) < 0) {
		json_decref(f);
		return -1;
	}
	return json_object_set_new(o, "failures", f);
}

/* One list of a cut's LBA ranges as a text line. */
static void text_ranges(FILE *f, const char *what, const struct sfs_extents *e)
{
	fprintf(f, "  %-13s", what);
	if (!e->n) {
		fputs("none\n", f);
		return;
	}
	for (size_t i = 0; i < e->n && i < TEXT_RANGES; i++)
		fprintf(f, "%s%" PRIu64 "-%" PRIu64, i ? ", " : "", e->v[i].start, e->v[i].end - 1);
	if (e->n > TEXT_RANGES)
		fprintf(f, ", ... (%zu ranges; all in NAME.json)", e->n);
	fprintf(f, " (%" PRIu64 " sectors)\n", sfs_ext_count(e, ~0u));
}

void sfs_stats_fail_text(FILE *f, const struct sfs_stats_info *info)
{
	const struct sfs_fail_status *s = info->fail;
	const struct sfs_fail_cutinfo *l = info->last_cut;
	const struct sfs_fail_counters *c;
	char policy[64], size[32], cached[32], destaged[32], when[48];

	if (!s)
		return;
	c = &s->cnt;
	sfs_wc_format_policy(&s->next, policy, sizeof(policy));
	sfs_format_human(s->wc.size, size, sizeof(size));
	sfs_format_human(c->cached_bytes, cached, sizeof(cached));
	sfs_format_human(c->destaged_bytes, destaged, sizeof(destaged));
	fprintf(f, "power         %s", s->power_off ? "off (every I/O fails with EIO until it is set on)" : "on");
	if (s->trigger[0])
		fprintf(f, ", %s (%" PRIu64 " to go)", s->trigger, s->trigger_left);
	fprintf(f, "; next cut %s, seed %" PRIu64 "\n", policy, s->next.seed);
	if (s->wc.mode == SFS_WC_VOLATILE)
		fprintf(f, "write cache   volatile, %s: %s unflushed, %s destaged; atomic write unit %" PRIu32
			"%s, rmw_power_safe %s\n", size, cached, destaged, s->wc.awu,
			s->wc.awb ? " (with a boundary)" : "", s->wc.rmw_power_safe ? "true" : "false");
	else
		fprintf(f, "write cache   none (every completed write is durable)\n");
	fprintf(f, "failures      %" PRIu64 " power cuts, %" PRIu64 " writes lost, %" PRIu64 " torn, %" PRIu64
		" sectors damaged; %" PRIu64 " bad sectors now, %" PRIu64 " media errors\n", c->power_cuts,
		c->lost_writes, c->torn_writes, c->damaged_sectors, c->bad_sectors, c->media_errors);
	if (c->kept_at_start)
		fprintf(f, "              %" PRIu64 " unflushed writes a daemon crash left were kept at start\n",
			c->kept_at_start);
	if (!l || !l->number)
		return;
	sfs_wc_format_policy(&l->cut, policy, sizeof(policy));
	sfs_stats_iso_time(l->time_ns, when, sizeof(when));
	fprintf(f, "last cut      #%" PRIu64 " at %s (%s, %s, seed %" PRIu64 "): %" PRIu64 " unflushed writes, %"
		PRIu64 " kept, %" PRIu64 " lost, %" PRIu64 " torn\n", l->number, when, l->trigger, policy, l->cut.seed,
		l->rep.unflushed, l->rep.kept, l->rep.lost, l->rep.torn);
	text_ranges(f, "lost LBAs", &l->rep.lost_lba);
	text_ranges(f, "torn LBAs", &l->rep.torn_lba);
	text_ranges(f, "damaged LBAs", &l->rep.damaged_lba);
}
