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
 */
#include <inttypes.h>
#include <stdio.h>

#include "redo.h"
#include "units.h"

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

void redo_print_text(const struct redo_result *s)
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

int redo_print_json(const struct redo_result *s)
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
	return bench_json_print(o);
}

