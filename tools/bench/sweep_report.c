/* SPDX-License-Identifier: MIT */
/*
 * sweep_report.c - the sweep's results for people and for programs.
 *
 * Text: a table (transfer size, write MB/s and IOPS, read MB/s and IOPS)
 * and a horizontal bar chart of MB/s, '#' for writes and '=' for reads,
 * scaled to the fastest test, as ATTO draws it.  A size the disk refused
 * shows "refused (EINVAL)" in place of its figures.  CSV: one row per
 * size and direction.  JSON: one object with every figure, including the
 * totals (bytes_written, bytes_read, failed_ios) that a script compares
 * with the image's statistics.  MB/s are 10^6 bytes per second.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "svg.h"
#include "sweep.h"

#define BAR_WIDTH 48

static const char *const status_names[] = { "not run", "ok", "refused", "error", "skipped" };

static double test_mbps(const struct sweep_test *t)
{
	return t->secs > 0 ? (double)t->bytes / t->secs / 1e6 : 0;
}

static double test_iops(const struct sweep_test *t)
{
	return t->secs > 0 ? (double)t->ios / t->secs : 0;
}

/* "refused (EINVAL)", "error (EIO)", "skipped (> span)", "not run", or "" for a test that ran. */
static const char *what(const struct sweep_test *t, char *buf, size_t len)
{
	char e[16];

	if (t->st == ST_REFUSED || t->st == ST_ERROR)
		snprintf(buf, len, "%s (%s)", status_names[t->st], bench_errno_name(t->err, e, sizeof(e)));
	else if (t->st == ST_SKIPPED)
		snprintf(buf, len, "skipped (> span)");
	else if (t->st == ST_NOT_RUN)
		snprintf(buf, len, "not run");
	else
		buf[0] = '\0';
	return buf;
}

/* The write and the read test of size x, NULL for a direction not asked for. */
static void find_pair(const struct sweep_result *s, uint64_t x, const struct sweep_test **w, const struct sweep_test **r)
{
	*w = *r = NULL;
	for (unsigned i = 0; i < s->ntests; i++)
		if (s->tests[i].xfer == x)
			*(s->tests[i].write ? w : r) = &s->tests[i];
}

static void print_cell(const struct sweep_test *t)
{
	char buf[48];

	if (!t)
		printf("  %11s %11s", "-", "-");
	else if (t->st == ST_OK)
		printf("  %11.2f %11.1f%s", test_mbps(t), test_iops(t), t->cut ? "*" : "");
	else
		printf("  %23s", what(t, buf, sizeof(buf)));
}

static void print_bar(const struct sweep_test *t, const char *label, const char *dir, char fill, double top)
{
	unsigned len;
	char buf[48];

	printf("%9s %-5s |", label, dir);
	if (t->st != ST_OK) {
		printf("%s\n", what(t, buf, sizeof(buf)));
		return;
	}
	len = top > 0 ? (unsigned)(test_mbps(t) / top * BAR_WIDTH + 0.5) : 0;
	for (unsigned j = 0; j < BAR_WIDTH; j++)
		putchar(j < len ? fill : ' ');
	printf(" %.1f\n", test_mbps(t));
}

void sweep_print_text(const struct sweep_result *s)
{
	const struct sweep_test *w, *r;
	double top = 0;
	bool cut = false;
	char a[32], b[32];

	for (unsigned i = 0; i < s->ntests; i++) {
		if (s->tests[i].st == ST_OK && test_mbps(&s->tests[i]) > top)
			top = test_mbps(&s->tests[i]);
		cut |= s->tests[i].cut;
	}
	printf("sweep of %s: %s, logical sector %u (%s), physical %u\n", s->d->path,
	       tool_fmt_size(s->d->size, TOOL_SIZE_IEC, a, sizeof(a)), s->d->logical, s->d->sector_from,
	       s->d->physical);
	printf("span %s, QD %u, %.3g s per test, sequential O_DIRECT\n\n",
	       tool_fmt_size(s->span, TOOL_SIZE_IEC, b, sizeof(b)), s->qd, s->seconds);
	printf("%9s  %11s %11s  %11s %11s\n", "transfer", "write MB/s", "write IOPS", "read MB/s", "read IOPS");
	for (uint64_t x = s->min; x <= s->max; x *= 2) {
		find_pair(s, x, &w, &r);
		printf("%9s", tool_fmt_size(x, TOOL_SIZE_IEC, a, sizeof(a)));
		print_cell(w);
		print_cell(r);
		putchar('\n');
	}
	if (cut)
		printf("* cut short by Ctrl-C\n");
	if (s->nflush)
		printf("flush: fdatasync after a 4 KiB write, mean %.1f us of %u\n", s->flush_us, s->nflush);
	printf("\nMB/s by transfer size  (# write, = read; a full bar is %.1f MB/s)\n", top);
	for (uint64_t x = s->min; x <= s->max; x *= 2) {
		find_pair(s, x, &w, &r);
		tool_fmt_size(x, TOOL_SIZE_IEC, a, sizeof(a));
		if (w && w->st != ST_NOT_RUN)
			print_bar(w, a, "write", '#', top);
		if (r && r->st != ST_NOT_RUN)
			print_bar(r, w && w->st != ST_NOT_RUN ? "" : a, "read", '=', top);
	}
}

void sweep_print_csv(const struct sweep_result *s)
{
	char e[16];

	printf("size_bytes,direction,status,errno,threads,ios,bytes,failed_ios,seconds,mb_per_s,iops,"
	       "lat_mean_us,lat_p99_us,cut_short\n");
	for (unsigned i = 0; i < s->ntests; i++) {
		const struct sweep_test *t = &s->tests[i];

		if (t->st == ST_NOT_RUN)
			continue;
		printf("%" PRIu64 ",%s,%s,%s,%u,%" PRIu64 ",%" PRIu64 ",%u,%.6f,%.3f,%.1f,%.1f,%.1f,%d\n",
		       t->xfer, t->write ? "write" : "read", status_names[t->st],
		       t->err ? bench_errno_name(t->err, e, sizeof(e)) : "", t->threads, t->ios, t->bytes,
		       t->failed, t->secs, test_mbps(t), test_iops(t), bench_hist_mean_us(&t->lat),
		       bench_hist_pct_us(&t->lat, 99), t->cut);
	}
}

static json_t *test_json(const struct sweep_test *t)
{
	json_t *o = json_object();
	char e[16];

	json_object_set_new(o, "status", json_string(status_names[t->st]));
	json_object_set_new(o, "errno", t->err ? json_string(bench_errno_name(t->err, e, sizeof(e))) : json_null());
	json_object_set_new(o, "error", t->err ? json_string(strerror(t->err)) : json_null());
	json_object_set_new(o, "threads", json_integer(t->threads));
	json_object_set_new(o, "ios", json_integer((json_int_t)t->ios));
	json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
	json_object_set_new(o, "failed_ios", json_integer(t->failed));
	json_object_set_new(o, "seconds", bench_jreal(t->secs));
	json_object_set_new(o, "mb_per_s", bench_jreal(test_mbps(t)));
	json_object_set_new(o, "iops", bench_jreal(test_iops(t)));
	json_object_set_new(o, "latency", bench_hist_json(&t->lat));
	json_object_set_new(o, "cut_short", json_boolean(t->cut));
	return o;
}

int sweep_print_json(const struct sweep_result *s)
{
	json_t *o = json_object(), *res = json_array(), *row = NULL;
	uint64_t wb = 0, rb = 0, wio = 0, rio = 0, failed = 0;

	json_object_set_new(o, "command", json_string("sweep"));
	json_object_set_new(o, "image", json_string(s->d->path));
	json_object_set_new(o, "disk_size", json_integer((json_int_t)s->d->size));
	json_object_set_new(o, "logical_sector", json_integer(s->d->logical));
	json_object_set_new(o, "physical_sector", json_integer(s->d->physical));
	json_object_set_new(o, "sector_from", json_string(s->d->sector_from));
	json_object_set_new(o, "span", json_integer((json_int_t)s->span));
	json_object_set_new(o, "qd", json_integer(s->qd));
	json_object_set_new(o, "seconds_per_test", bench_jreal(s->seconds));
	json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
	for (unsigned i = 0; i < s->ntests; i++) {
		const struct sweep_test *t = &s->tests[i];

		if (!row || json_integer_value(json_object_get(row, "size")) != (json_int_t)t->xfer) {
			row = json_object();
			json_object_set_new(row, "size", json_integer((json_int_t)t->xfer));
			json_array_append_new(res, row);
		}
		if (t->st != ST_NOT_RUN)
			json_object_set_new(row, t->write ? "write" : "read", test_json(t));
		*(t->write ? &wb : &rb) += t->bytes;
		*(t->write ? &wio : &rio) += t->ios;
		failed += t->failed;
	}
	wb += (uint64_t)s->nflush * SWEEP_CHAN_XFER;   /* the flush line's writes */
	wio += s->nflush;
	json_object_set_new(o, "results", res);
	if (s->nflush) {   /* the flush line: nflush writes of 4 KiB, each followed by a timed fdatasync */
		json_t *fl = json_object();

		json_object_set_new(fl, "mean_us", bench_jreal(s->flush_us));
		json_object_set_new(fl, "median_us", bench_jreal(s->flush_med_us));
		json_object_set_new(fl, "fdatasyncs", json_integer(s->nflush));
		json_object_set_new(fl, "bytes", json_integer((json_int_t)s->nflush * SWEEP_CHAN_XFER));
		json_object_set_new(o, "flush", fl);
	} else {
		json_object_set_new(o, "flush", json_null());
	}
	json_object_set_new(o, "bytes_written", json_integer((json_int_t)wb));
	json_object_set_new(o, "bytes_read", json_integer((json_int_t)rb));
	json_object_set_new(o, "write_ios", json_integer((json_int_t)wio));
	json_object_set_new(o, "read_ios", json_integer((json_int_t)rio));
	json_object_set_new(o, "failed_ios", json_integer((json_int_t)failed));
	return bench_json_print(o);
}

void sweep_chart(const void *res, struct svg_chart *c)
{
	const struct sweep_result *s = res;
	const struct sweep_test *w, *r;
	char a[32];

	svg_chart_init(c, "sectorfs-bench sweep: throughput by transfer size",
		       "MB/s (10^6 bytes per second)", "write", "read", NULL);
	SVG_TEXT(c->subtitle, "%s: logical sector %u, physical %u; QD %u, %.3g s per test, sequential O_DIRECT",
		 s->d->path, s->d->logical, s->d->physical, s->qd, s->seconds);
	for (uint64_t x = s->min; x <= s->max && c->ncats < SVG_MAX_CATS; x *= 2, c->ncats++) {
		find_pair(s, x, &w, &r);
		SVG_TEXT(c->cats[c->ncats], "%s", tool_fmt_size(x, TOOL_SIZE_IEC, a, sizeof(a)));
		for (int j = 0; j < 2; j++) {
			const struct sweep_test *t = j ? r : w;

			if (!t || t->st == ST_NOT_RUN)
				continue;
			if (t->st == ST_OK)
				svg_bar(c, c->ncats, j, test_mbps(t), NULL);
			else
				SVG_TEXT(c->mark[c->ncats][j], "%s", status_names[t->st]);
		}
	}
}
