/* SPDX-License-Identifier: MIT */
/*
 * main.c - sectorfs-stat, an iostat-like view of a sectorfs mount's statistics.
 *
 * Reads MNT/.stats/NAME.json of every image (or of the NAMEs given) and
 * prints a row per image per report: r/s, w/s, rMB/s, wMB/s (MB = 2^20
 * bytes, as iostat), mean latency of reads and writes (weighted by count),
 * p99 latency of writes (overwrite and first-write classes merged) and of
 * reads, the share of writes that were first writes, the misaligned and
 * read-modify-write counts, and alloc%.  Without -i: one report of the
 * totals since mount or reset, rates over the daemon's elapsed_seconds.
 * With -i the first report is the same and each later one covers the span
 * since the previous snapshot, its p99 taken from the difference of the two
 * latency histograms (the interval's own p99), and its span is the
 * difference of the daemon's elapsed times at the two snapshots.  An image
 * that appears, or whose counters restarted (its reset_generation changed,
 * or daemon_start/daemon_pid name another daemon), shows its totals since
 * load or reset; vanished images are dropped.
 * Percentiles use core's histogram code (JSON bucket lower bounds map back
 * to core buckets), so they match the daemon's, within its 1/32 error.
 * Names are printed as ls -b prints them (core/util/escape.h; UTF-8 kept only in
 * a UTF-8 locale), in a column as wide as the longest, counted in terminal
 * columns; --json rows name an image as its NAME.json does.
 * With --refused it prints instead, per image, the daemon's lists of the
 * last refused I/Os and the last read-modify-write writes (refused.c).
 * Exit: 0 (also on SIGINT/SIGTERM), 1 on errors, 2 on usage errors or when
 * MNT is not a sectorfs mount with statistics.
 *
 * Messages are toolutil's ("sectorfs-stat: ...", tool_die).  The options
 * are read here and not by tool_main: its table is of a tool's commands,
 * named by the first argument, each with a fixed number of arguments,
 * while this tool has no commands and takes MNT and any number of NAMEs;
 * and its messages for -i and -c and for unknown options would not be
 * the ones this tool has always printed.  Whether MNT is a sectorfs
 * mount is core's sfs_mount_lookup (the type of the mount on top there).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "util/clock.h"
#include "util/escape.h"
#include "mount/mountpoint.h"
#include "contract/names.h"
#include "stat.h"
#include "stats/stats.h"


/* One image's snapshot, as parsed from NAME.json. */
struct image {
	char name[NAME_MAX + 1];     /* as in the directory: bytes */
	char shown[SFS_ESCAPED_SIZE(NAME_MAX)];  /* for the table: escaped as ls -b does */
	int cols;                    /* terminal columns of shown */
	char json_name[NAME_MAX + 1];  /* for --json: the daemon's "name" (valid UTF-8) */
	uint64_t alloc, total;       /* allocated_blocks, total_blocks */
	struct sfs_stats_snap s;     /* the counters used here and the latency histograms */
};

struct list {
	struct image *v;             /* sorted by name */
	size_t n, cap;
};

/* The numbers of one row; NAN where there is nothing to show (no I/O). */
struct row {
	double secs, rps, wps, rmbps, wmbps, avg_us, wp99_us, rp99_us, first_pct, alloc_pct;
};

static volatile sig_atomic_t stop_flag;
const char *stat_mnt;
bool stat_json, stat_utf8;
static bool tty;

/* ---- is MNT a sectorfs mount? ---- */

/* Exit 2 with a clear message unless stat_mnt is a sectorfs mount with statistics. */
static void check_mount(void)
{
	char real[PATH_MAX], type[PATH_MAX], source[PATH_MAX], stats[PATH_MAX + 8];
	struct stat st;

	if (!realpath(stat_mnt, real))
		tool_die(2, "%s: %s", stat_mnt, strerror(errno));
	if (!sfs_mount_lookup(real, type, source, sizeof(type)))
		tool_die(2, "%s is not a sectorfs mount (not a mount point)", stat_mnt);
	if (strcmp(type, SFS_FSTYPE) != 0)
		tool_die(2, "%s is not a sectorfs mount (mount type %s, not " SFS_FSTYPE ")", stat_mnt, type);
	snprintf(stats, sizeof(stats), "%s/" SFS_STATS_DIR, real);
	if (stat(stats, &st) == 0)
		return;
	if (errno == ENOENT)
		tool_die(2, "%s is a sectorfs mount without statistics: it was mounted with -o nostats", stat_mnt);
	tool_die(2, "%s: %s", stats, strerror(errno));
}

/* ---- reading the stats files (read.c) ---- */

/* Read MNT/.stats/NAME.json into im: true, or false if the image has vanished; other errors exit 1. */
static bool load_image(const char *name, struct image *im)
{
	static struct sfs_stats_parsed p;   /* large: keep it off the stack */

	if (!stat_load(name, STAT_COUNTERS, &p))
		return false;
	memset(im, 0, sizeof(*im));
	snprintf(im->name, sizeof(im->name), "%s", name);
	sfs_escape_name(name, !stat_utf8, im->shown, sizeof(im->shown));
	im->cols = sfs_escape_columns(im->shown, stat_utf8);
	snprintf(im->json_name, sizeof(im->json_name), "%.*s", (int)sizeof(im->json_name) - 1, p.name);
	im->alloc = p.allocated_blocks;
	im->total = p.total_blocks;
	im->s = p.snap;
	return true;
}

static int name_is(const void *name, const void *im)
{
	return strcmp(name, ((const struct image *)im)->name);
}

/* The image called name in l (NULL if none, or if l is NULL). */
static const struct image *find(const struct list *l, const char *name)
{
	return l ? bsearch(name, l->v, l->n, sizeof(*l->v), name_is) : NULL;
}

/* Snapshot every wanted image into l, sorted by name. */
static void load_all(struct list *l, char **names, int nnames)
{
	size_t n;
	char **v = stat_names(names, nnames, &n);

	l->n = 0;
	while (n > l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		if (!(l->v = realloc(l->v, l->cap * sizeof(*l->v))))
			tool_die(1, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		l->n += load_image(v[i], &l->v[l->n]);
		free(v[i]);
	}
	free(v);
}

/* ---- one row: the difference of two snapshots ---- */

/* The counters restarted between prev and cur: a reset (or the image loaded again) changed the
 * reset generation, or another daemon serves the mount.  Nothing else is taken for a reset: the
 * daemon's snapshots of one generation only grow, however late they are read. */
static bool was_reset(const struct image *prev, const struct image *cur)
{
	const struct sfs_stats_snap *p = &prev->s, *c = &cur->s;

	return c->reset_generation != p->reset_generation || c->daemon_start != p->daemon_start ||
	       c->daemon_pid != p->daemon_pid;
}

/* The interval's max of class k: exact when the max rose, else capped by its top bucket. */
static uint64_t interval_max(const struct sfs_stats_snap *p, const struct sfs_stats_snap *c,
			     const struct sfs_stats_snap *d, unsigned k)
{
	unsigned top = SFS_LAT_NBUCKET;
	uint64_t cap;

	if (c->lat[k].max_ns > p->lat[k].max_ns)
		return c->lat[k].max_ns;
	while (top > 0 && !d->lat[k].hist[top - 1])
		top--;
	cap = top ? sfs_stats_lat_bucket_low(top) - 1 : 0;    /* the top bucket's last value */
	return cap < c->lat[k].max_ns ? cap : c->lat[k].max_ns;
}

/* d = cur - prev (the interval; true), or cur itself when there is no usable prev (false). */
static bool delta(const struct image *prev, const struct image *cur, struct sfs_stats_snap *d)
{
	const struct sfs_stats_snap *p, *c = &cur->s;

	*d = *c;
	if (!prev || was_reset(prev, cur))
		return false;
	p = &prev->s;
#define SUB(f) (d->f -= p->f)
	SUB(elapsed_ns), SUB(reads), SUB(writes), SUB(bytes_read), SUB(bytes_written);
	SUB(first_writes), SUB(overwrites), SUB(misaligned_rejected), SUB(rmw_writes);
#undef SUB
	for (unsigned k = 0; k < SFS_LAT_NCLASS; k++) {
		d->lat[k].count -= p->lat[k].count;
		d->lat[k].sum_ns = c->lat[k].sum_ns > p->lat[k].sum_ns ? c->lat[k].sum_ns - p->lat[k].sum_ns : 0;
		for (unsigned b = 0; b < SFS_LAT_NBUCKET; b++)
			d->lat[k].hist[b] -= p->lat[k].hist[b];
		d->lat[k].max_ns = interval_max(p, c, d, k);
	}
	return true;
}

/* p99 in us of class a, merged with class b unless b < 0; NAN when empty. */
static double p99_us(const struct sfs_stats_snap *s, int a, int b)
{
	static struct sfs_stats_snap m;
	uint64_t n = 0;

	for (unsigned i = 0; i < SFS_LAT_NBUCKET; i++)
		n += m.lat[0].hist[i] = s->lat[a].hist[i] + (b >= 0 ? s->lat[b].hist[i] : 0);
	m.lat[0].max_ns = s->lat[a].max_ns;
	if (b >= 0 && s->lat[b].max_ns > m.lat[0].max_ns)
		m.lat[0].max_ns = s->lat[b].max_ns;
	return n ? sfs_stats_percentile(&m, 0, 0.99) / 1000.0 : NAN;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static void make_row(const struct image *im, const struct sfs_stats_snap *d, struct row *r)
{
	const int R = SFS_LAT_READ, O = SFS_LAT_WRITE_OVERWRITE, F = SFS_LAT_WRITE_FIRST;
	double secs = d->elapsed_ns / 1e9;

	r->secs = secs;
	r->rps = secs > 0 ? d->reads / secs : 0;
	r->wps = secs > 0 ? d->writes / secs : 0;
	r->rmbps = secs > 0 ? d->bytes_read / secs / 1048576.0 : 0;
	r->wmbps = secs > 0 ? d->bytes_written / secs / 1048576.0 : 0;
	r->avg_us = ratio((d->lat[R].sum_ns + d->lat[O].sum_ns + d->lat[F].sum_ns) / 1000.0,
			  (double)(d->lat[R].count + d->lat[O].count + d->lat[F].count));
	r->wp99_us = p99_us(d, O, F);
	r->rp99_us = p99_us(d, R, -1);
	r->first_pct = ratio(100.0 * d->first_writes, (double)d->writes);
	r->alloc_pct = ratio(100.0 * im->alloc, (double)im->total);
}

/* ---- output ---- */

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* The counts of the row as totals since load or reset, and where they come from. */
static int json_source(json_t *row, const struct image *im, bool interval)
{
	const struct sfs_stats_snap *s = &im->s;
	json_t *t = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "reads", (json_int_t)s->reads, "writes", (json_int_t)s->writes,
			      "bytes_read", (json_int_t)s->bytes_read,
			      "bytes_written", (json_int_t)s->bytes_written,
			      "first_writes", (json_int_t)s->first_writes,
			      "overwrites", (json_int_t)s->overwrites,
			      "misaligned_rejected", (json_int_t)s->misaligned_rejected,
			      "rmw_writes", (json_int_t)s->rmw_writes);

	return json_object_set_new(row, "span", json_string(interval ? "interval" : "total")) |
	       json_object_set_new(row, "elapsed_seconds", json_real(s->elapsed_ns / 1e9)) |
	       json_object_set_new(row, "reset_generation", json_integer((json_int_t)s->reset_generation)) |
	       json_object_set_new(row, "daemon_start", json_integer((json_int_t)s->daemon_start)) |
	       json_object_set_new(row, "daemon_pid", json_integer((json_int_t)s->daemon_pid)) |
	       json_object_set_new(row, "totals", t);
}

static json_t *json_row(const struct image *im, const struct sfs_stats_snap *d, const struct row *r)
{
	return json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:f, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:o}",
			 "image", im->json_name, "seconds", r->secs,
			 "reads", (json_int_t)d->reads, "writes", (json_int_t)d->writes,
			 "bytes_read", (json_int_t)d->bytes_read, "bytes_written", (json_int_t)d->bytes_written,
			 "first_writes", (json_int_t)d->first_writes, "overwrites", (json_int_t)d->overwrites,
			 "misaligned_rejected", (json_int_t)d->misaligned_rejected,
			 "rmw_writes", (json_int_t)d->rmw_writes,
			 "allocated_blocks", (json_int_t)im->alloc, "total_blocks", (json_int_t)im->total,
			 "r_per_s", r->rps, "w_per_s", r->wps, "rMB_per_s", r->rmbps, "wMB_per_s", r->wmbps,
			 "avg_latency_us", num(r->avg_us), "write_p99_us", num(r->wp99_us),
			 "read_p99_us", num(r->rp99_us), "first_write_pct", num(r->first_pct),
			 "alloc_pct", num(r->alloc_pct));
}

/* A number for the table with one decimal, or "-" when there is none. */
static const char *cell(double v, char *buf)
{
	if (isnan(v))
		return "-";
	snprintf(buf, 32, "%.1f", v);
	return buf;
}

static void text_header(int w, double interval)
{
	char when[32];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	if (interval > 0)
		printf("%s  interval of %g s\n", when, interval);
	else
		printf("%s  totals since mount or reset\n", when);
	printf("%s%-*s %9s %9s %8s %8s %9s %9s %9s %6s %8s %8s %6s%s\n", tty ? "\033[1m" : "",
	       w, "image", "r/s", "w/s", "rMB/s", "wMB/s", "avg_us", "wp99_us", "rp99_us",
	       "first%", "misalign", "rmw", "alloc%", tty ? "\033[0m" : "");
}

static void text_row(int w, const struct image *im, const struct sfs_stats_snap *d, const struct row *r)
{
	char b[5][32];

	/* The name column is as wide as the longest name: pad by columns, not bytes. */
	printf("%s%*s %9.2f %9.2f %8.2f %8.2f %9s %9s %9s %6s %8" PRIu64 " %8" PRIu64 " %6s\n",
	       im->shown, w - im->cols, "", r->rps, r->wps, r->rmbps, r->wmbps, cell(r->avg_us, b[0]),
	       cell(r->wp99_us, b[1]), cell(r->rp99_us, b[2]), cell(r->first_pct, b[3]),
	       d->misaligned_rejected, d->rmw_writes, cell(r->alloc_pct, b[4]));
}

/* Print report number seq: cur against prev (NULL for the first, totals). */
static void report(const struct list *prev, const struct list *cur, unsigned seq, double interval)
{
	static struct sfs_stats_snap d;
	json_t *rows = json_array(), *o;
	int w = 8;
	struct row r;

	for (size_t i = 0; i < cur->n; i++)
		if (cur->v[i].cols > w)
			w = cur->v[i].cols;
	if (!stat_json)
		text_header(w, prev ? interval : 0);
	for (size_t i = 0; i < cur->n; i++) {
		bool diffed = delta(find(prev, cur->v[i].name), &cur->v[i], &d);

		make_row(&cur->v[i], &d, &r);
		if (stat_json) {
			json_t *row = json_row(&cur->v[i], &d, &r);

			if (!row || json_source(row, &cur->v[i], diffed) < 0 ||
			    json_array_append_new(rows, row) < 0)
				tool_die(1, "cannot format the JSON report");
		} else {
			text_row(w, &cur->v[i], &d, &r);
		}
	}
	if (stat_json) {
		o = json_pack("{s:I, s:s, s:I, s:o}", "report", (json_int_t)seq,
			      "kind", prev ? "interval" : "total", "time", (json_int_t)time(NULL), "images", rows);
		if (!o || json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0)
			tool_die(1, "cannot format the JSON report");
		json_decref(o);
	} else {
		json_decref(rows);
	}
	putchar('\n');
	if (fflush(stdout) != 0 || ferror(stdout))
		tool_die(1, "writing the report: %s", strerror(errno));
}

/* ---- command line and the main loop ---- */

static void on_signal(int sig)
{
	stop_flag = 1;
}

/* SIGINT and SIGTERM set stop_flag; reads restart (SA_RESTART), the sleep is restarted by hand. */
static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Sleep until t (ns on core's clock, clock.h), or until a signal asks to stop. */
static void sleep_until(uint64_t t)
{
	struct timespec ts = sfs_ns_ts(t);
	int rc;

	while (!stop_flag && (rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) != 0)
		if (rc != EINTR)
			tool_die(1, "clock_nanosleep: %s", strerror(rc));
}

static void usage(FILE *f)
{
	fputs("usage: " PROG " MNT [NAME...] [-i SECONDS] [-c COUNT] [--json]\n"
	      "       " PROG " --refused MNT [NAME...] [--json]\n"
	      "\n"
	      "An iostat-like view of the statistics of a sectorfs mount (MNT/.stats).\n"
	      "\n"
	      "  -r, --refused           instead, each image's last refused I/Os (misaligned,\n"
	      "                          out of range) and last read-modify-write writes,\n"
	      "                          newest first, with the process that issued them\n"
	      "  -i, --interval SECONDS  report every SECONDS (fractions allowed): first the\n"
	      "                          totals since mount or reset, then each interval, as\n"
	      "                          the difference of the daemon's own snapshots (an\n"
	      "                          image reset in between shows its totals since then)\n"
	      "  -c, --count COUNT       stop after COUNT reports (with -i)\n"
	      "      --json              one JSON object per report, one per line\n"
	      "  -h, --help              this help\n"
	      "  -V, --version           print the version\n"
	      "Columns and JSON keys: see sectorfs-stat(1).\n", f);
}

/* A positive number for option opt (a whole one if integer), else exit 2. */
static double parse_positive(char opt, const char *s, bool integer)
{
	char *end;
	double v;

	errno = 0;
	v = integer ? (double)strtol(s, &end, 10) : strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e9)
		tool_die(2, "-%c %s: expected a positive %s", opt, s, integer ? "integer" : "number of seconds");
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' }, { "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' }, { "refused", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
	};
	struct list a = { 0 }, b = { 0 }, *prev = &a, *cur = &b, *tmp;
	double interval = 0, count = 0;
	bool refused = false;
	uint64_t next;
	int c;

	tool_set_prog(PROG);
	while ((c = getopt_long(argc, argv, "i:c:rhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': interval = parse_positive('i', optarg, false); break;
		case 'c': count = parse_positive('c', optarg, true); break;
		case 'j': stat_json = true; break;
		case 'r': refused = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': puts(PROG " " PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (count > 0 && interval == 0)
		tool_die(2, "-c needs -i");
	if (refused && interval > 0)
		tool_die(2, "--refused shows the lists once: no -i or -c");
	stat_mnt = argv[optind++];
	tty = isatty(STDOUT_FILENO);
	setlocale(LC_CTYPE, "");           /* for the widths of names only; numbers stay in C */
	stat_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	check_mount();
	if (refused)
		return stat_refused(argv + optind, argc - optind);
	install_signals();

	load_all(cur, argv + optind, argc - optind);
	for (int i = optind; i < argc; i++)
		if (!find(cur, argv[i]))
			stat_no_image(argv[i]);
	report(NULL, cur, 1, interval);
	next = sfs_now_ns();
	for (unsigned n = 2; interval > 0 && (count == 0 || n <= count) && !stop_flag; n++) {
		next += (uint64_t)llround(interval * 1e9);
		sleep_until(next);
		if (stop_flag)
			break;
		tmp = prev, prev = cur, cur = tmp;
		load_all(cur, argv + optind, argc - optind);
		report(prev, cur, n, interval);
	}
	free(a.v);
	free(b.v);
	return 0;
}
