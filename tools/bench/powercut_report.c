/* SPDX-License-Identifier: MIT */
/*
 * powercut_report.c - the seed case's figures for people and programs.
 *
 * Each figure of a configuration is the median over the repeats, with
 * its range: the rounds with damage (a flushed block lost or unreadable),
 * the flushed blocks, those lost (other data), those unreadable (EIO) and
 * the sectors the cuts damaged.  Text: one table; JSON: every repeat's
 * counts, and the medians, minima and maxima; the chart: the medians of
 * flushed blocks lost or unreadable and of sectors damaged, per
 * configuration.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "median.h"
#include "powercut.h"
#include "svg.h"

static const char *const fig_names[PC_NFIG] = {
	"damaged_rounds", "flushed_blocks", "flushed_lost", "flushed_unreadable", "flushed_lost_or_unreadable",
	"damaged_sectors",
};

static double fig(const struct pc_counts *c, enum pc_fig f)
{
	switch (f) {
	case PC_DAMAGED_ROUNDS: return c->damaged_rounds;
	case PC_FLUSHED: return (double)c->flushed;
	case PC_LOST: return (double)c->lost;
	case PC_UNREADABLE: return (double)c->unreadable;
	case PC_HURT: return (double)(c->lost + c->unreadable);
	case PC_SECTORS: return (double)c->damaged_sectors;
	default: return NAN;
	}
}

double pc_median(const struct pc_result *r, int i, enum pc_fig f, double *min, double *max)
{
	double v[PC_MAX_REPEAT];
	unsigned n = 0;

	for (unsigned k = 0; k < r->nrep; k++)
		if (r->c[k][i].ran && r->c[k][i].rounds == r->rounds)
			v[n++] = fig(&r->c[k][i], f);
	if (!n) {
		*min = *max = NAN;
		return NAN;
	}
	double m = bench_median(v, n);     /* sorts v */
	*min = v[0];
	*max = v[n - 1];
	return m;
}

/* "19 (12-30)": a median and its range, or "-" when no repeat completed. */
static const char *cell(const struct pc_result *r, int i, enum pc_fig f, char *buf, size_t len)
{
	double lo, hi, m = pc_median(r, i, f, &lo, &hi);

	if (m != m)
		snprintf(buf, len, "-");
	else if (lo == hi)
		snprintf(buf, len, "%g", m);
	else
		snprintf(buf, len, "%g (%g-%g)", m, lo, hi);
	return buf;
}

static void print_text(const void *res)
{
	const struct pc_result *r = res;
	char a[80], b[80], c[80], d[80], e[80];

	printf("powercut: redo blocks written with O_DIRECT, an fdatasync after each; the power cut\n"
	       "after 1 to %u writes (drawn from the seed), policy %s; %u round%s a configuration,\n"
	       "%u repeat%s, seed %" PRIu64 "; the median over the repeats (range)\n\n", r->max_writes, r->policy,
	       r->rounds, r->rounds == 1 ? "" : "s", r->nrep, r->nrep == 1 ? "" : "s", r->seed);
	printf("%-36s %6s %13s %14s %12s %18s %15s\n", "configuration", "rounds", "flushed", "damaged rounds",
	       "flushed lost", "flushed unreadable", "sectors damaged");
	for (int i = 0; i < PC_NCONF; i++)
		printf("%-36s %6u %13s %14s %12s %18s %15s\n", pc_confs[i].label, r->rounds,
		       cell(r, i, PC_FLUSHED, a, sizeof(a)), cell(r, i, PC_DAMAGED_ROUNDS, b, sizeof(b)),
		       cell(r, i, PC_LOST, c, sizeof(c)), cell(r, i, PC_UNREADABLE, d, sizeof(d)),
		       cell(r, i, PC_SECTORS, e, sizeof(e)));
	printf("\nflushed: blocks whose fdatasync returned before the cut; lost: they hold other data;\n"
	       "unreadable: their read fails with EIO (a damaged physical sector); damaged rounds:\n"
	       "rounds with a flushed block lost or unreadable; sectors damaged: the cuts' own count\n");
	if (r->interrupted)
		printf("(interrupted: the figures cover the repeats that ran every round)\n");
}

static int print_json(const void *res)
{
	const struct pc_result *r = res;
	json_t *o = json_object(), *confs = json_array();

	json_object_set_new(o, "command", json_string("powercut"));
	json_object_set_new(o, "rounds", json_integer(r->rounds));
	json_object_set_new(o, "repeat", json_integer(r->nrep));
	json_object_set_new(o, "seed", json_integer((json_int_t)(r->seed > INT64_MAX ? 0 : r->seed)));
	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "max_writes", json_integer(r->max_writes));
	json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
	for (int i = 0; i < PC_NCONF; i++) {
		const struct pc_conf *cf = &pc_confs[i];
		json_t *co = json_object(), *reps = json_array(), *med = json_object(), *mn = json_object(),
		       *mx = json_object();

		json_object_set_new(co, "configuration", json_string(cf->label));
		json_object_set_new(co, "sector", json_string(cf->sector));
		json_object_set_new(co, "rmw_power_safe", cf->rmw ? json_boolean(cf->rmw[0] == 't') : json_null());
		json_object_set_new(co, "block", json_integer(cf->block));
		for (unsigned k = 0; k < r->nrep; k++) {
			const struct pc_counts *c = &r->c[k][i];
			json_t *ro = json_object();

			if (!c->ran)
				continue;
			json_object_set_new(ro, "rounds", json_integer(c->rounds));
			for (int f = 0; f < PC_NFIG; f++)
				json_object_set_new(ro, fig_names[f], json_integer((json_int_t)fig(c, (enum pc_fig)f)));
			json_object_set_new(ro, "last_write_lost", json_integer(c->last_lost));
			json_array_append_new(reps, ro);
		}
		for (int f = 0; f < PC_NFIG; f++) {
			double lo, hi, m = pc_median(r, i, (enum pc_fig)f, &lo, &hi);

			json_object_set_new(med, fig_names[f], bench_jreal(m));
			json_object_set_new(mn, fig_names[f], bench_jreal(lo));
			json_object_set_new(mx, fig_names[f], bench_jreal(hi));
		}
		json_object_set_new(co, "repeats", reps);
		json_object_set_new(co, "median", med);
		json_object_set_new(co, "min", mn);
		json_object_set_new(co, "max", mx);
		json_array_append_new(confs, co);
	}
	json_object_set_new(o, "configurations", confs);
	return bench_json_print(o);
}

static void chart(const void *res, struct svg_chart *c)
{
	const struct pc_result *r = res;

	svg_chart_init(c, "sectorfs-bench powercut: what a power cut does to flushed redo blocks", NULL,
		       "flushed blocks lost or unreadable", "sectors damaged", NULL);
	SVG_TEXT(c->subtitle, "redo writes, fdatasync after each, a cut after 1 to %u writes, policy %s; "
		 "seed %" PRIu64 "; medians of %u repeat%s", r->max_writes, r->policy, r->seed, r->nrep,
		 r->nrep == 1 ? "" : "s");
	SVG_TEXT(c->ylabel, "per %u rounds (median)", r->rounds);
	for (int i = 0; i < PC_NCONF; i++, c->ncats++) {
		SVG_TEXT(c->cats[i], "%s", pc_confs[i].chart);
		for (int s = 0; s < 2; s++) {
			double lo, hi, m = pc_median(r, i, s ? PC_SECTORS : PC_HURT, &lo, &hi);

			if (m == m)
				svg_bar(c, i, s, m, "%g", m);
		}
	}
}

/* Some repeat ran. */
static bool any(const void *res)
{
	return ((const struct pc_result *)res)->nrep > 0;
}

const struct bench_figures powercut_figures = {
	.text = print_text, .json = print_json, .chart = chart, .any = any,
	.cut = ": the figures cover the rounds done so far",
};
