/* SPDX-License-Identifier: MIT */
/*
 * zeroing_report.c - the zero-on-new-write experiment's figures for
 * people and for programs.
 *
 * Every figure of a configuration is the median over the repeats that
 * wrote its image whole.  The overhead is the typical time per write
 * (zeroing.c: from the median latencies of the writes that start a block
 * and of the others, over every repeat) against one baseline, the same
 * figure over every eagerzeroedthick run of the pass, offload on and off
 * together.  The spread is the range of the repeats' typical times per
 * write against their median (0 with one repeat).
 *
 * Text: for each pass a table of the six configurations (IOPS, MB/s, mean
 * and p99 write latency, the mean latency of the writes that start a
 * block, the overhead in time per write and in IOPS, the spread, and the
 * daemon's first_writes and zeroed_bytes for the pass of one repeat).
 * JSON: one object with every figure, each run's under "runs", the
 * daemon's counters (of the first repeat) under "stats" of each image.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "median.h"
#include "svg.h"
#include "util/units.h"
#include "zeroing.h"

static double image_iops(const struct zeroing_image *r)
{
	return r->secs > 0 ? (double)r->writes / r->secs : 0;
}

static double image_mbps(const struct zeroing_image *r)
{
	return r->secs > 0 ? (double)r->bytes / r->secs / 1e6 : 0;
}

enum fig { F_IOPS, F_MBPS, F_MEAN, F_P99, F_NEW, F_PERWRITE, F_SECS };

static double figure(const struct zeroing_result *z, const struct zeroing_image *r, enum fig f);

/* The values of figure f of image i in pass p over the repeats that wrote it whole (v: at least
 * ZEROING_MAX_REPEAT); their number. */
static unsigned values(const struct zeroing_result *z, int p, int i, enum fig f, double *v)
{
	unsigned n = 0;

	for (unsigned r = 0; r < z->nrep; r++)
		if (z->img[r][p][i].ran && z->img[r][p][i].done)
			v[n++] = figure(z, &z->img[r][p][i], f);
	return n;
}

static double med(const struct zeroing_result *z, int p, int i, enum fig f)
{
	double v[ZEROING_MAX_REPEAT];

	return bench_median(v, values(z, p, i, f, v));
}

/* The typical time per write (us) of runs[0..n): (median of the block-starting writes + (k-1)
 * median of the others) / k, k writes a block (zeroing.c says why). */
static double typical(const struct zeroing_result *z, const struct zeroing_image *const *runs, unsigned n)
{
	double k = z->xfer >= z->block ? 1 : (double)(z->block / z->xfer), mn, mo;
	size_t nn = 0, no = 0;
	double *vn, *vo;

	for (unsigned r = 0; r < n; r++) {
		nn += runs[r]->nnew;
		no += runs[r]->nover;
	}
	vn = malloc((nn ? nn : 1) * sizeof(*vn));
	vo = malloc((no ? no : 1) * sizeof(*vo));
	if (!vn || !vo) {
		free(vn);
		free(vo);
		return NAN;
	}
	nn = no = 0;
	for (unsigned r = 0; r < n; r++) {
		for (unsigned j = 0; j < runs[r]->nnew; j++)
			vn[nn++] = runs[r]->new_us[j];
		for (unsigned j = 0; j < runs[r]->nover; j++)
			vo[no++] = runs[r]->over_us[j];
	}
	mn = bench_median(vn, (unsigned)nn);
	mo = no ? bench_median(vo, (unsigned)no) : mn;
	free(vn);
	free(vo);
	return (mn + (k - 1) * mo) / k;
}

static double figure(const struct zeroing_result *z, const struct zeroing_image *r, enum fig f)
{
	switch (f) {
	case F_IOPS: return image_iops(r);
	case F_MBPS: return image_mbps(r);
	case F_MEAN: return bench_hist_mean_us(&r->lat);
	case F_P99: return bench_hist_pct_us(&r->lat, 99);
	case F_NEW: return bench_hist_mean_us(&r->lat_new);
	case F_PERWRITE: return typical(z, &r, 1);
	case F_SECS: return r->secs;
	}
	return NAN;
}

/* The typical time per write over every repeat of images i0..i1 in pass p. */
static double typical_of(const struct zeroing_result *z, int p, int i0, int i1)
{
	const struct zeroing_image *runs[2 * ZEROING_MAX_REPEAT];
	unsigned n = 0;

	for (int i = i0; i <= i1; i++)
		for (unsigned r = 0; r < z->nrep; r++)
			if (z->img[r][p][i].ran && z->img[r][p][i].done)
				runs[n++] = &z->img[r][p][i];
	return n ? typical(z, runs, n) : NAN;
}

/* The baseline of pass p: the typical time per write of every eagerzeroedthick run. */
static double baseline(const struct zeroing_result *z, int p)
{
	return typical_of(z, p, 4, 5);
}

/* Extra time per write against the baseline, in %; NAN if unknown. */
static double overhead(const struct zeroing_result *z, int p, int i)
{
	return (typical_of(z, p, i, i) / baseline(z, p) - 1) * 100;
}

/* The change of IOPS against the baseline's, in % (negative: fewer). */
static double iops_change(const struct zeroing_result *z, int p, int i)
{
	return (baseline(z, p) / typical_of(z, p, i, i) - 1) * 100;
}

/* The range of the repeats' typical times per write against their median, in %. */
static double spread(const struct zeroing_result *z, int p, int i)
{
	double v[ZEROING_MAX_REPEAT];
	unsigned n = values(z, p, i, F_PERWRITE, v);
	double m = bench_median(v, n);

	return n ? (v[n - 1] - v[0]) / m * 100 : NAN;
}

static bool any_done(const struct zeroing_result *z, int p, int i)
{
	double v[ZEROING_MAX_REPEAT];

	return values(z, p, i, F_IOPS, v) > 0;
}

/* The row of image i in pass p, if it ran. */
static void print_row(const struct zeroing_result *z, int p, int i)
{
	const struct zeroing_image *r = &z->img[0][p][i];
	char a[32];
	double o;

	if (!any_done(z, p, i))
		return;
	printf("%-16s %-7s %8.0f %8.1f ", zeroing_prov(i), zeroing_offload(i) ? "on" : "off",
	       med(z, p, i, F_IOPS), med(z, p, i, F_MBPS));
	printf("%9s ", bench_fmt_us(med(z, p, i, F_MEAN), a, sizeof(a)));
	printf("%9s ", bench_fmt_us(med(z, p, i, F_P99), a, sizeof(a)));
	printf("%9s ", bench_fmt_us(med(z, p, i, F_NEW), a, sizeof(a)));
	o = overhead(z, p, i);
	if (o == o)
		printf("%+8.1f%% %+7.1f%%", o, iops_change(z, p, i));
	else
		printf("%9s %8s", "-", "-");
	printf(" %6.1f%%", spread(z, p, i));
	sfs_format_human((uint64_t)r->st_zeroed, a, sizeof(a));
	printf(" %7lld %10s\n", (long long)r->st_first, a);
}

static void print_text(const void *res)
{
	const struct zeroing_result *z = res;
	static const char *const title[2] = {
		"pass 1: fresh space (each block's first write zeroes the rest of the block)",
		"pass 2: the same space again (every write is an overwrite)",
	};
	char a[32], b[32], c[32];

	printf("zero-on-new-write: 6 images of %s (%s, block %s), ",
	       tool_fmt_size(z->size, TOOL_SIZE_IEC, a, sizeof(a)), z->sector,
	       tool_fmt_size(z->block, TOOL_SIZE_IEC, b, sizeof(b)));
	printf("sequential O_DIRECT writes of %s, QD 1\n", tool_fmt_size(z->xfer, TOOL_SIZE_IEC, c, sizeof(c)));
	printf("%u repeat%s, interleaved, medians; device profile: %s\n", z->nrep, z->nrep == 1 ? "" : "s",
	       z->profile ? z->profile : "none (the host's own timing)");
	printf("store %s%s, mount %s\n", z->tb->store, z->tb->temporary_store ? " (temporary)" : "",
	       z->tb->mnt);
	for (int p = 0; p < 2 && z->img[0][p][4].ran; p++) {
		printf("\n%s\n%-16s %-7s %8s %8s %9s %9s %9s %9s %8s %7s %7s %10s\n", title[p], "provisioning",
		       "offload", "IOPS", "MB/s", "mean", "p99", "new-block", "overhead", "IOPS", "spread",
		       "1st_wr", "zeroed");
		for (int i = 0; i < ZEROING_NIMG; i++)
			print_row(z, p, i);
	}
	printf("\nmean, p99: write latency; new-block: mean latency of the writes that start a block\n"
	       "overhead, IOPS: extra typical time per write, and change of IOPS, against the baseline:\n"
	       "  every eagerzeroedthick run of the pass (offload on and off); typical: from the median\n"
	       "  latencies of the writes that start a block and of the others, so that stalls of the\n"
	       "  host do not count\n"
	       "spread: range of the repeats' typical times per write, against their median\n"
	       "1st_wr, zeroed: first_writes and zeroed_bytes counted by the daemon during the pass\n");
	if (z->interrupted)
		printf("(interrupted: the figures cover the repeats that wrote each image whole)\n");
}

static json_t *zeroing_run_json(const struct zeroing_image *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "complete", json_boolean(r->done));
	json_object_set_new(o, "seconds", bench_jreal(r->secs));
	json_object_set_new(o, "iops", bench_jreal(image_iops(r)));
	json_object_set_new(o, "mean_us", bench_jreal(bench_hist_mean_us(&r->lat)));
	json_object_set_new(o, "new_block_mean_us", bench_jreal(bench_hist_mean_us(&r->lat_new)));
	return o;
}

static json_t *image_json(const struct zeroing_result *z, int p, int i)
{
	const struct zeroing_image *r = &z->img[0][p][i];
	json_t *o = json_object(), *st = json_object(), *runs = json_array();
	const struct { const char *key; json_int_t v; } counts[] = {   /* the daemon's, in "stats" */
		{ "writes", r->st_writes }, { "bytes_written", r->st_bytes },
		{ "first_writes", r->st_first }, { "overwrites", r->st_over },
		{ "zeroed_bytes", r->st_zeroed }, { "allocated_blocks", r->st_alloc },
		{ "total_blocks", r->st_total },
	};
	struct bench_hist lat, lat_new;

	bench_hist_init(&lat);
	bench_hist_init(&lat_new);
	for (unsigned k = 0; k < z->nrep; k++)
		if (z->img[k][p][i].ran) {
			bench_hist_merge(&lat, &z->img[k][p][i].lat);
			bench_hist_merge(&lat_new, &z->img[k][p][i].lat_new);
			json_array_append_new(runs, zeroing_run_json(&z->img[k][p][i]));
		}
	json_object_set_new(o, "name", json_string(z->names[0][i]));
	json_object_set_new(o, "provisioning", json_string(zeroing_prov(i)));
	json_object_set_new(o, "zero_offload", json_boolean(zeroing_offload(i)));
	json_object_set_new(o, "complete", json_boolean(r->done));
	json_object_set_new(o, "writes", json_integer((json_int_t)r->writes));
	json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(o, "seconds", bench_jreal(med(z, p, i, F_SECS)));
	json_object_set_new(o, "iops", bench_jreal(med(z, p, i, F_IOPS)));
	json_object_set_new(o, "mb_per_s", bench_jreal(med(z, p, i, F_MBPS)));
	json_object_set_new(o, "mean_us", bench_jreal(med(z, p, i, F_MEAN)));
	json_object_set_new(o, "latency", bench_hist_json(&lat));          /* every repeat's writes */
	json_object_set_new(o, "new_block_latency", bench_hist_json(&lat_new));
	json_object_set_new(o, "typical_us_per_write", bench_jreal(typical_of(z, p, i, i)));
	json_object_set_new(o, "overhead_pct", bench_jreal(overhead(z, p, i)));
	json_object_set_new(o, "iops_change_pct", bench_jreal(iops_change(z, p, i)));
	json_object_set_new(o, "spread_pct", bench_jreal(spread(z, p, i)));
	json_object_set_new(o, "runs", runs);
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		json_object_set_new(st, counts[k].key, json_integer(counts[k].v));
	json_object_set_new(o, "stats", st);
	return o;
}

static int print_json(const void *res)
{
	const struct zeroing_result *z = res;
	json_t *o = json_object(), *passes = json_array();

	json_object_set_new(o, "command", json_string("zeroing"));
	json_object_set_new(o, "store", json_string(z->tb->store));
	json_object_set_new(o, "mount", json_string(z->tb->mnt));
	json_object_set_new(o, "temporary_store", json_boolean(z->tb->temporary_store));
	json_object_set_new(o, "size", json_integer((json_int_t)z->size));
	json_object_set_new(o, "sector", json_string(z->sector));
	json_object_set_new(o, "block_size", json_integer((json_int_t)z->block));
	json_object_set_new(o, "xfer", json_integer((json_int_t)z->xfer));
	json_object_set_new(o, "qd", json_integer(1));
	json_object_set_new(o, "repeat", json_integer(z->nrep));
	json_object_set_new(o, "profile", z->profile ? json_string(z->profile) : json_null());
	json_object_set_new(o, "interrupted", json_boolean(z->interrupted));
	for (int p = 0; p < 2 && z->img[0][p][0].ran; p++) {
		json_t *po = json_object(), *imgs = json_array();

		json_object_set_new(po, "pass", json_integer(p + 1));
		json_object_set_new(po, "space", json_string(p == 0 ? "fresh" : "written"));
		json_object_set_new(po, "baseline_us_per_write", bench_jreal(baseline(z, p)));
		for (int i = 0; i < ZEROING_NIMG; i++)
			if (z->img[0][p][i].ran)
				json_array_append_new(imgs, image_json(z, p, i));
		json_object_set_new(po, "images", imgs);
		json_array_append_new(passes, po);
	}
	json_object_set_new(o, "passes", passes);
	return bench_json_print(o);
}

static void chart(const void *res, struct svg_chart *c)
{
	const struct zeroing_result *z = res;
	char a[32], b[32];

	svg_chart_init(c, "sectorfs-bench zeroing: zero on new write",
		       "write IOPS (from the typical time per write)", "pass 1: fresh space",
		       "pass 2: written space", NULL);
	SVG_TEXT(c->subtitle, "%s, block %s, %s writes, QD 1; medians of %u repeat%s; profile %s; label: overhead",
		 z->sector, tool_fmt_size(z->block, TOOL_SIZE_IEC, a, sizeof(a)),
		 tool_fmt_size(z->xfer, TOOL_SIZE_IEC, b, sizeof(b)), z->nrep, z->nrep == 1 ? "" : "s",
		 z->profile ? z->profile : "none");
	for (int i = 0; i < ZEROING_NIMG; i++, c->ncats++) {
		SVG_TEXT(c->cats[i], "%s %s", zeroing_prov(i), zeroing_offload(i) ? "on" : "off");
		for (int p = 0; p < 2; p++) {
			double o;

			if (!any_done(z, p, i))
				continue;
			o = overhead(z, p, i);
			svg_bar(c, i, p, 1e6 / typical_of(z, p, i, i), o == o ? "%+.1f%%" : NULL, o);
		}
	}
}

/* The first repeat's first baseline ran: what the rest compares with. */
static bool any(const void *res)
{
	return ((const struct zeroing_result *)res)->img[0][0][4].ran;
}

const struct bench_figures zeroing_figures = {
	.text = print_text, .json = print_json, .chart = chart, .any = any,
	.cut = ": the figures cover the writes done so far",
};
