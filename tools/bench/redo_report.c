/* SPDX-License-Identifier: MIT */
/*
 * redo_report.c - the redo log's figures for people and for programs.
 *
 * commits and log writes per second, commits per log write (the group
 * commit factor), redo bytes (the records' payload) against bytes
 * written (whole redo blocks), padding and wastage = padding / bytes
 * written, and the latency of a commit (append to durable) and of one
 * log write (pwrite + fdatasync).  bytes_written is what reached the
 * disk: a script compares it with the image's statistics.
 *
 * With --repeat each redo block's figures are those of its median run
 * by commits/s, with the spread (range over median) of commits/s; with
 * several redo blocks a table compares them (commits/s against the first
 * block's, the wastage the median over the runs).  JSON: the median run's
 * object with "repeat", "runs_commits_per_s", "spread_pct" and
 * "wastage_median"; several blocks: one such object per block under
 * "blocks".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "median.h"
#include "redo.h"
#include "svg.h"
#include "util/units.h"

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

/* One row of the latency table. */
static void print_latency(const char *what, const struct bench_hist *h)
{
	char a[32], b[32], c[32], d[32];

	printf("%-17s %10s %10s %10s %10s\n", what, bench_fmt_us(bench_hist_mean_us(h), a, sizeof(a)),
	       bench_fmt_us(bench_hist_pct_us(h, 50), b, sizeof(b)),
	       bench_fmt_us(bench_hist_pct_us(h, 99), c, sizeof(c)),
	       bench_fmt_us((double)h->max / 1e3, d, sizeof(d)));
}

static void print_run(const struct redo_result *s)
{
	double secs = s->secs;
	uint64_t pad = s->bytes_written - s->redo_bytes;
	double waste = s->bytes_written ? 100.0 * (double)pad / (double)s->bytes_written : 0;
	char a[32], b[32];

	printf("redo log on %s: logical sector %u (%s), physical %u\n", s->d->path, s->d->logical,
	       s->d->sector_from, s->d->physical);
	printf("redo block %s, %u clients, records %s, log %s; ran %.2f s\n\n",
	       tool_fmt_size(s->block, TOOL_SIZE_IEC, a, sizeof(a)), s->clients, s->dist_spec,
	       tool_fmt_size(s->log_size, TOOL_SIZE_IEC, b, sizeof(b)), secs);
	printf("commits           %12" PRIu64 "  %10.1f/s\n", s->commits, per_s(s->commits, secs));
	printf("log writes        %12" PRIu64 "  %10.1f/s   %.2f commits per write, fdatasync after each\n",
	       s->log_writes, per_s(s->log_writes, secs),
	       s->log_writes ? (double)s->commits / (double)s->log_writes : 0.0);
	sfs_format_human(s->redo_bytes, a, sizeof(a));
	printf("redo bytes        %12" PRIu64 "  %10.2f MB/s  (%s of records)\n", s->redo_bytes,
	       per_s(s->redo_bytes, secs) / 1e6, a);
	sfs_format_human(s->bytes_written, a, sizeof(a));
	printf("bytes written     %12" PRIu64 "  %10.2f MB/s  (%s, %" PRIu64 " redo blocks)\n",
	       s->bytes_written, per_s(s->bytes_written, secs) / 1e6, a, s->bytes_written / s->block);
	printf("padding           %12" PRIu64 "  wastage %.1f %% of bytes written\n", pad, waste);
	if (s->wraps)
		printf("log switches      %12" PRIu64 "  (the log wrapped to offset 0)\n", s->wraps);
	printf("\n%-17s %10s %10s %10s %10s\n", "latency", "mean", "p50", "p99", "max");
	print_latency("commit", &s->commit_lat);
	print_latency("write+fdatasync", &s->write_lat);
}

static json_t *redo_run_json(const struct redo_result *s)
{
	const struct bench_hist *cl = &s->commit_lat;
	double secs = s->secs;
	json_t *o = json_object();
	uint64_t pad = s->bytes_written - s->redo_bytes;

	json_object_set_new(o, "command", json_string("redo"));
	json_object_set_new(o, "image", json_string(s->d->path));
	json_object_set_new(o, "logical_sector", json_integer(s->d->logical));
	json_object_set_new(o, "physical_sector", json_integer(s->d->physical));
	json_object_set_new(o, "sector_from", json_string(s->d->sector_from));
	json_object_set_new(o, "redo_block", json_integer(s->block));
	json_object_set_new(o, "clients", json_integer(s->clients));
	json_object_set_new(o, "record_dist", json_string(s->dist_spec));
	json_object_set_new(o, "log_size", json_integer((json_int_t)s->log_size));
	json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
	json_object_set_new(o, "seconds", bench_jreal(secs));
	json_object_set_new(o, "commits", json_integer((json_int_t)s->commits));
	json_object_set_new(o, "commits_per_s", bench_jreal(per_s(s->commits, secs)));
	json_object_set_new(o, "log_writes", json_integer((json_int_t)s->log_writes));
	json_object_set_new(o, "log_writes_per_s", bench_jreal(per_s(s->log_writes, secs)));
	json_object_set_new(o, "fdatasyncs", json_integer((json_int_t)s->log_writes));
	json_object_set_new(o, "commits_per_write",
			    bench_jreal(s->log_writes ? (double)s->commits / (double)s->log_writes : 0));
	json_object_set_new(o, "redo_bytes", json_integer((json_int_t)s->redo_bytes));
	json_object_set_new(o, "bytes_written", json_integer((json_int_t)s->bytes_written));
	json_object_set_new(o, "blocks_written", json_integer((json_int_t)(s->bytes_written / s->block)));
	json_object_set_new(o, "padding_bytes", json_integer((json_int_t)pad));
	json_object_set_new(o, "wastage", bench_jreal(s->bytes_written ? (double)pad / (double)s->bytes_written : 0));
	json_object_set_new(o, "mb_per_s_written", bench_jreal(per_s(s->bytes_written, secs) / 1e6));
	json_object_set_new(o, "log_switches", json_integer((json_int_t)s->wraps));
	json_object_set_new(o, "commit_latency", bench_hist_json(cl));
	json_object_set_new(o, "write_latency", bench_hist_json(&s->write_lat));
	return o;
}


static double commits_per_s(const struct redo_result *r)
{
	return per_s(r->commits, r->secs);
}

static int cmp_run(const void *a, const void *b)
{
	double x = commits_per_s(*(const struct redo_result *const *)a);
	double y = commits_per_s(*(const struct redo_result *const *)b);

	return x < y ? -1 : x > y;
}

const struct redo_result *redo_median(const struct redo_set *set, unsigned b, double *spread_pct)
{
	const struct redo_result *v[REDO_MAX_REPEAT], *m;
	unsigned n = 0;

	for (unsigned k = 0; k < set->nrep; k++)
		if (set->runs[b][k].d)
			v[n++] = &set->runs[b][k];
	if (!n) {
		*spread_pct = 0;
		return NULL;
	}
	qsort(v, n, sizeof(v[0]), cmp_run);
	m = v[(n - 1) / 2];
	*spread_pct = commits_per_s(m) > 0 ? (commits_per_s(v[n - 1]) - commits_per_s(v[0])) / commits_per_s(m) * 100 : 0;
	return m;
}

static double wastage(const struct redo_result *r)
{
	return r->bytes_written ? (double)(r->bytes_written - r->redo_bytes) / (double)r->bytes_written : 0;
}

/* The median wastage of block b's runs. */
static double wastage_median(const struct redo_set *set, unsigned b)
{
	double v[REDO_MAX_REPEAT];
	unsigned n = 0;

	for (unsigned k = 0; k < set->nrep; k++)
		if (set->runs[b][k].d)
			v[n++] = wastage(&set->runs[b][k]);
	return n ? bench_median(v, n) : 0;
}

static void print_text(const void *res)
{
	const struct redo_set *set = res;
	const struct redo_result *m, *first = NULL;
	double spread;
	char a[32];

	for (unsigned b = 0; b < set->nblocks; b++) {
		if (!(m = redo_median(set, b, &spread)))
			continue;
		if (b)
			printf("\n");
		print_run(m);
		printf("\nrepeats           %12u  median run by commits/s; spread %.1f %% (range over median)\n",
		       set->nrep, spread);
		printf("commits/s of each %12s ", "");
		for (unsigned k = 0; k < set->nrep; k++)
			if (set->runs[b][k].d)
				printf(" %.0f", commits_per_s(&set->runs[b][k]));
		printf("\n");
	}
	if (set->nblocks < 2)
		return;
	printf("\n%-10s %12s %8s %9s %12s %14s\n", "redo block", "commits/s", "spread", "wastage", "MB/s written",
	       "commits/s vs");
	for (unsigned b = 0; b < set->nblocks; b++) {
		if (!(m = redo_median(set, b, &spread)))
			continue;
		if (!first)
			first = m;
		printf("%-10s %12.1f %7.1f%% %8.1f%% %12.2f ", tool_fmt_size(m->block, TOOL_SIZE_IEC, a, sizeof(a)),
		       commits_per_s(m), spread, wastage_median(set, b) * 100, per_s(m->bytes_written, m->secs) / 1e6);
		if (m == first)
			printf("%14s\n", "baseline");
		else
			printf("%+13.1f%%\n", (commits_per_s(m) / commits_per_s(first) - 1) * 100);
	}
}

static int print_json(const void *res)
{
	const struct redo_set *set = res;
	json_t *blocks = json_array(), *o = NULL;

	for (unsigned b = 0; b < set->nblocks; b++) {
		const struct redo_result *m;
		json_t *bo, *runs = json_array();
		double spread;

		if (!(m = redo_median(set, b, &spread)))
			continue;
		bo = redo_run_json(m);
		for (unsigned k = 0; k < set->nrep; k++)
			if (set->runs[b][k].d)
				json_array_append_new(runs, bench_jreal(commits_per_s(&set->runs[b][k])));
		json_object_set_new(bo, "repeat", json_integer(set->nrep));
		json_object_set_new(bo, "runs_commits_per_s", runs);
		json_object_set_new(bo, "spread_pct", bench_jreal(spread));
		json_object_set_new(bo, "wastage_median", bench_jreal(wastage_median(set, b)));
		json_array_append_new(blocks, bo);
	}
	/* one redo block: its object, as always; several: each under "blocks" */
	if (set->nblocks == 1 && json_array_size(blocks) == 1) {
		o = json_incref(json_array_get(blocks, 0));
		json_decref(blocks);
	} else {
		o = json_object();
		json_object_set_new(o, "command", json_string("redo"));
		json_object_set_new(o, "repeat", json_integer(set->nrep));
		json_object_set_new(o, "blocks", blocks);
	}
	return bench_json_print(o);
}

static void chart(const void *res, struct svg_chart *c)
{
	const struct redo_set *set = res;
	const struct redo_result *m = NULL;
	char a[32];
	double spread;

	svg_chart_init(c, "sectorfs-bench redo: commits per second by redo block",
		       "commits/s (median run)", "commits/s, label: wastage", NULL);
	for (unsigned b = 0; b < set->nblocks; b++) {
		const struct redo_result *r = redo_median(set, b, &spread);

		if (!r)
			continue;
		m = r;
		SVG_TEXT(c->cats[c->ncats], "%s redo block", tool_fmt_size(r->block, TOOL_SIZE_IEC, a, sizeof(a)));
		svg_bar(c, c->ncats++, 0, commits_per_s(r), "wastage %.1f%%", wastage_median(set, b) * 100);
	}
	if (m)
		SVG_TEXT(c->subtitle, "%s: logical sector %u, physical %u; %u clients, records %s; %u repeat%s",
			 m->d->path, m->d->logical, m->d->physical, m->clients, m->dist_spec, set->nrep,
			 set->nrep == 1 ? "" : "s");
}

const struct bench_figures redo_figures = { .text = print_text, .json = print_json, .chart = chart };
