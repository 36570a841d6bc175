/* SPDX-License-Identifier: MIT */
/*
 * test_stats_fail.c - the failures of an image in its stats files
 * (core/stats/failures.c, render.c, metrics.c).
 *
 * Proves:
 *   - without a failure state the JSON file has no "failures" key, the
 *     text no failure line and the metrics no failure family: an image
 *     without the keys renders as it always did;
 *   - with one, the JSON file has every key of failures.c with its
 *     value, the last cut's LBA ranges inclusive; before the first cut
 *     last_cut is null;
 *   - the text file says the power, the trigger, the counters and the
 *     last cut's ranges;
 *   - the metrics give each failure family once, a sample for each image
 *     with a state and none for the others.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "stats/metrics.h"
#include "stats/stats.h"

static struct sfs_stats_info info_of(const char *name)
{
	struct sfs_stats_info info;

	memset(&info, 0, sizeof(info));
	info.name = name;
	info.geom = (struct sfs_geom){ 1 << 20, 512, 4096, 65536 };
	info.prov = SFS_PROV_THIN;
	info.total_blocks = 16;
	return info;
}

static struct sfs_fail_status status(void)
{
	struct sfs_fail_status st;

	memset(&st, 0, sizeof(st));
	sfs_wc_config_default(&st.wc, 512, 4096);
	st.wc.mode = SFS_WC_VOLATILE;
	st.next = (struct sfs_wc_cut){ .policy = SFS_WC_RANDOM, .p = 0.5, .seed = 42 };
	snprintf(st.trigger, sizeof(st.trigger), "cut-after-writes:9");
	st.trigger_left = 4;
	st.cnt = (struct sfs_fail_counters){ .power_cuts = 2, .lost_writes = 3, .torn_writes = 1, .damaged_sectors = 8,
					     .media_errors = 5, .cached_bytes = 4096, .destaged_bytes = 1 << 20,
					     .bad_sectors = 16 };
	return st;
}

static struct sfs_fail_cutinfo cut(void)
{
	struct sfs_fail_cutinfo c;

	memset(&c, 0, sizeof(c));
	c.number = 2;
	c.time_ns = 1700000000123456789ull;
	c.cut = (struct sfs_wc_cut){ .policy = SFS_WC_LOSE_ALL, .p = 0.5, .seed = 7 };
	snprintf(c.trigger, sizeof(c.trigger), "off:7");
	c.rep.unflushed = 4;
	c.rep.kept = 0;
	c.rep.lost = 3;
	c.rep.torn = 1;
	cr_assert_eq(sfs_ext_set(&c.rep.lost_lba, 0, 8, 1), 0);
	cr_assert_eq(sfs_ext_set(&c.rep.lost_lba, 16, 32, 1), 0);
	cr_assert_eq(sfs_ext_set(&c.rep.torn_lba, 40, 48, 1), 0);
	cr_assert_eq(sfs_ext_set(&c.rep.damaged_lba, 0, 8, 1), 0);
	return c;
}

static json_t *render_json(const struct sfs_stats_info *info)
{
	struct sfs_stats_snap snap;
	json_error_t jerr;
	char *out = NULL;
	size_t len = 0;
	json_t *o;

	sfs_stats_snapshot_empty(1, 0, &snap);
	cr_assert_eq(sfs_stats_render_json(&snap, info, &out, &len), 0);
	o = json_loadb(out, len, 0, &jerr);
	cr_assert_not_null(o, "%s", jerr.text);
	free(out);
	return o;
}

static char *render_text(const struct sfs_stats_info *info)
{
	struct sfs_stats_snap snap;
	char *out = NULL;
	size_t len = 0;

	sfs_stats_snapshot_empty(1, 0, &snap);
	cr_assert_eq(sfs_stats_render_text(&snap, info, &out, &len), 0);
	return out;
}

static uint64_t geti(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "%s is not an integer", key);
	return (uint64_t)json_integer_value(v);
}

/* A key of a JSON object and what it must hold: the string s or, when s is
 * NULL, the integer i; a list of them ends with a NULL key. */
struct want {
	const char *key;
	const char *s;
	uint64_t i;
};

#define WANT_S(key, s) { key, s, 0 }
#define WANT_I(key, i) { key, NULL, i }
#define WANT_END { NULL, NULL, 0 }

/* Expects every key of the list in o (named where in the messages). */
static void expect_keys(json_t *o, const char *where, const struct want *w)
{
	for (; w->key; w++) {
		if (w->s)
			cr_expect_str_eq(json_string_value(json_object_get(o, w->key)), w->s, "%s.%s", where, w->key);
		else
			cr_expect_eq(geti(o, w->key), w->i, "%s.%s is %llu, want %llu", where, w->key,
				     (unsigned long long)geti(o, w->key), (unsigned long long)w->i);
	}
}

Test(stats_fail, none_without_a_state)
{
	struct sfs_stats_info info = info_of("plain");
	json_t *o = render_json(&info);
	char *text = render_text(&info);

	cr_expect_null(json_object_get(o, "failures"));
	cr_expect_null(strstr(text, "power "), "%s", text);
	cr_expect_null(strstr(text, "write cache"), "%s", text);
	json_decref(o);
	free(text);
}

Test(stats_fail, json_has_every_key)
{
	struct sfs_stats_info info = info_of("d");
	struct sfs_fail_status st = status();
	struct sfs_fail_cutinfo c = cut();
	json_t *o, *f, *l, *r;

	info.fail = &st;
	info.last_cut = &c;
	o = render_json(&info);
	f = json_object_get(o, "failures");
	cr_assert(json_is_object(f));
	expect_keys(f, "failures", (const struct want[]){
		WANT_S("power", "on"), WANT_S("write_cache", "volatile"), WANT_I("write_cache_size", 32u << 20),
		WANT_I("atomic_write_unit", 4096), WANT_S("power_cut_policy", "random:0.5"),
		WANT_I("power_seed", 42), WANT_S("trigger", "cut-after-writes:9"), WANT_I("trigger_left", 4),
		WANT_I("power_cuts", 2), WANT_I("lost_writes", 3), WANT_I("torn_writes", 1),
		WANT_I("damaged_sectors", 8), WANT_I("media_errors", 5), WANT_I("cached_bytes", 4096),
		WANT_I("destaged_bytes", 1 << 20), WANT_I("bad_sectors", 16), WANT_I("kept_at_start", 0),
		WANT_END });
	cr_expect(json_is_null(json_object_get(f, "atomic_write_boundary")));
	cr_expect(json_is_false(json_object_get(f, "rmw_power_safe")));
	l = json_object_get(f, "last_cut");
	cr_assert(json_is_object(l));
	expect_keys(l, "last_cut", (const struct want[]){
		WANT_I("number", 2), WANT_I("seed", 7), WANT_S("trigger", "off:7"), WANT_S("policy", "lose-all"),
		WANT_S("time", "2023-11-14T22:13:20.123456Z"), WANT_I("unflushed_writes", 4),
		WANT_I("lost_writes", 3), WANT_I("torn_writes", 1), WANT_I("lost_sectors", 24),
		WANT_I("torn_sectors", 8), WANT_I("damaged_sectors", 8), WANT_END });
	r = json_object_get(l, "lost_lba");
	cr_assert_eq(json_array_size(r), 2);
	cr_expect_eq(json_integer_value(json_array_get(json_array_get(r, 1), 0)), 16);
	cr_expect_eq(json_integer_value(json_array_get(json_array_get(r, 1), 1)), 31, "inclusive");
	cr_expect_eq(json_array_size(json_object_get(l, "damaged_lba")), 1);
	json_decref(o);
	sfs_wc_report_free(&c.rep);
}

Test(stats_fail, no_cut_yet)
{
	struct sfs_stats_info info = info_of("d");
	struct sfs_fail_status st = status();
	struct sfs_fail_cutinfo c;
	json_t *o;

	memset(&c, 0, sizeof(c));
	info.fail = &st;
	info.last_cut = &c;
	o = render_json(&info);
	cr_expect(json_is_null(json_object_get(json_object_get(o, "failures"), "last_cut")));
	json_decref(o);
}

Test(stats_fail, text_says_it)
{
	struct sfs_stats_info info = info_of("d");
	struct sfs_fail_status st = status();
	struct sfs_fail_cutinfo c = cut();
	char *text;

	info.fail = &st;
	info.last_cut = &c;
	text = render_text(&info);
	cr_expect_not_null(strstr(text, "power         on, cut-after-writes:9 (4 to go); next cut random:0.5, seed 42"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "2 power cuts, 3 writes lost, 1 torn, 8 sectors damaged"), "%s", text);
	cr_expect_not_null(strstr(text, "5 media errors"), "%s", text);
	cr_expect_not_null(strstr(text, "last cut      #2 at 2023-11-14T22:13:20.123456Z (off:7, lose-all, seed 7)"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "lost LBAs    0-7, 16-31 (24 sectors)"), "%s", text);
	cr_expect_not_null(strstr(text, "torn LBAs    40-47 (8 sectors)"), "%s", text);
	cr_expect_not_null(strstr(text, "damaged LBAs 0-7 (8 sectors)"), "%s", text);
	free(text);
	sfs_wc_report_free(&c.rep);
}

Test(stats_fail, metrics_only_for_images_with_a_state)
{
	struct sfs_stats_info a = info_of("plain"), b = info_of("failing");
	struct sfs_fail_status st = status();
	struct sfs_stats_snap snap;
	struct sfs_metrics *m;
	char *out = NULL;
	size_t len;

	sfs_stats_snapshot_empty(1, 0, &snap);
	cr_assert_eq(sfs_metrics_new(&m), 0);
	cr_assert_eq(sfs_metrics_add(m, &snap, &a), 0);
	cr_assert_eq(sfs_metrics_render(m, &out, &len), 0);
	cr_expect_null(strstr(out, "power_cuts"), "no family without a failing image");
	free(out);
	st.power_off = true;
	b.fail = &st;
	cr_assert_eq(sfs_metrics_add(m, &snap, &b), 0);
	cr_assert_eq(sfs_metrics_render(m, &out, &len), 0);
	cr_expect_not_null(strstr(out, "# TYPE sectorfs_power_cuts_total counter\n"
				       "sectorfs_power_cuts_total{image=\"failing\"} 2\n"), "%s", out);
	cr_expect_not_null(strstr(out, "sectorfs_media_errors_total{image=\"failing\"} 5\n"), "%s", out);
	cr_expect_not_null(strstr(out, "sectorfs_cached_bytes{image=\"failing\"} 4096\n"), "%s", out);
	cr_expect_not_null(strstr(out, "sectorfs_power_on{image=\"failing\"} 0\n"), "%s", out);
	cr_expect_null(strstr(out, "sectorfs_power_on{image=\"plain\"}"), "%s", out);
	free(out);
	sfs_metrics_free(m);
}
