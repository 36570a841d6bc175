/* SPDX-License-Identifier: MIT */
/*
 * render.c - the two faces of a stats snapshot: text and JSON.
 *
 * MNT/.stats/NAME is for a person running cat: the name as ls -b shows it
 * (escape.h: one line, no terminal controls), geometry and allocation,
 * every counter of NAME.json under the same key with its rate per second,
 * a latency table in microseconds, the size and alignment histograms as
 * '#' bars scaled to their largest bucket, and a one-line verdict on
 * whether the workload would run on a 4Kn disk, for an image with a
 * failure state its failures (failures.c), and, while an
 * eagerzeroedthick image is still being zeroed, how far that has got
 * ("zeroing: 37% (760.0 MiB of 2.0 GiB), in the background").  It stays
 * under 60 lines, and then two short tables, newest first, of the last
 * refused I/Os and the last read-modify-write writes (at most
 * TEXT_RECENT rows each, with who asked; all of them are in NAME.json).
 *
 * MNT/.stats/NAME.json is for scripts: one compact object ending in a
 * newline, with the keys listed in SPEC.md ("Statistics").  Latencies are
 * microseconds with up to 3 decimals (whole nanoseconds); each latency
 * histogram lists its non-empty buckets as [lower_bound_us, count].
 * An image with a failure state has a "failures" object (failures.c).
 * refused_recent and rmw_recent are arrays, newest first, of objects
 * {time, time_ns, op, offset, length, pid, comm} (refused ones also
 * {error, reason}); time is ISO 8601 UTC with microseconds.  The same
 * lists, read back (parse.c), are rendered again on their own for
 * sectorfs-stat --refused --json (sfs_stats_render_recent_json).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "util/escape.h"
#include "stats.h"
#include "failures.h"
#include "util/units.h"

#define BAR_WIDTH 40
#define TEXT_RECENT 5   /* rows of each recent table in the text file */

const char *const sfs_stats_size_labels[SFS_SIZE_NBUCKET] = {
	"512", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", ">=1M",
};

const char *const sfs_stats_align_labels[SFS_ALIGN_NCLASS] = { "512", "1K", "2K", ">=4K" };

const char *const sfs_stats_lat_keys[SFS_LAT_NCLASS] = {
	"read", "write_overwrite", "write_first", "flush",
};

static const char *prov_name(enum sfs_prov p)
{
	const char *n = sfs_prov_name(p);

	return n ? n : "unknown";
}

static const char *const zeroing_names[] = { "none", "done", "running", "stopped", "failed" };

static const char *sector_name(uint32_t lss, uint32_t pss)
{
	const char *n = sfs_sector_name(lss, pss);

	return n ? n : "custom";
}

/* Mean latency in whole nanoseconds (0 when empty). */
static uint64_t mean_ns(const struct sfs_stats_snap *s, enum sfs_lat_class c)
{
	uint64_t n = s->lat[c].count;

	return n ? (s->lat[c].sum_ns + n / 2) / n : 0;
}

static uint64_t align_total(const struct sfs_stats_snap *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < SFS_ALIGN_NCLASS; i++)
		n += s->align_hist[i];
	return n;
}

static uint64_t not_4k_aligned(const struct sfs_stats_snap *s)
{
	return align_total(s) - s->align_hist[SFS_ALIGN_4K];
}

/* ---- JSON ---- */

/* The image name as a JSON string: file names are bytes, so a name that is
 * not UTF-8 shows its bytes >= 0x80 as '?' rather than failing the file. */
static json_t *json_name(const char *name)
{
	json_t *v = json_string(name);
	char *copy;

	if (v)
		return v;
	copy = strdup(name);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

static json_t *us(uint64_t ns)
{
	return json_real((double)ns / 1000.0);
}

static json_t *json_counts(const uint64_t *v, const char *const *labels, unsigned n)
{
	json_t *o = json_object();
	int err = !o;

	for (unsigned i = 0; !err && i < n; i++)
		err |= json_object_set_new(o, labels[i], json_integer((json_int_t)v[i]));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *json_latency(const struct sfs_stats_snap *s, enum sfs_lat_class c)
{
	json_t *o = json_object(), *hist = json_array();
	int err = 0;

	if (!o || !hist) {
		json_decref(o);
		json_decref(hist);
		return NULL;
	}
	for (unsigned b = 0; b < SFS_LAT_NBUCKET; b++)
		if (s->lat[c].hist[b])
			err |= json_array_append_new(hist, json_pack("[fI]",
						     sfs_stats_lat_bucket_low(b) / 1000.0,
						     (json_int_t)s->lat[c].hist[b]));
	err |= json_object_set_new(o, "count", json_integer((json_int_t)s->lat[c].count));
	err |= json_object_set_new(o, "mean", us(mean_ns(s, c)));
	err |= json_object_set_new(o, "p50", us(sfs_stats_percentile(s, c, 0.50)));
	err |= json_object_set_new(o, "p90", us(sfs_stats_percentile(s, c, 0.90)));
	err |= json_object_set_new(o, "p99", us(sfs_stats_percentile(s, c, 0.99)));
	err |= json_object_set_new(o, "p999", us(sfs_stats_percentile(s, c, 0.999)));
	err |= json_object_set_new(o, "max", us(s->lat[c].max_ns));
	err |= json_object_set_new(o, "histogram", hist);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

const char *sfs_stats_iso_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char sec[24];

	if (!gmtime_r(&t, &tm) || strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(sec, sizeof(sec), "?");
	snprintf(buf, len, "%s.%06uZ", sec, (unsigned)(ns % 1000000000u / 1000u));
	return buf;
}

const char *sfs_stats_refusal_name(int err)
{
	return err == EINVAL ? "EINVAL" : err == ENOSPC ? "ENOSPC" : err == EIO ? "EIO" : "?";
}

static const char *err_reason(int err)
{
	return err == EINVAL ? "misaligned" : err == ENOSPC ? "out_of_range" : err == EIO ? "media_error" : "?";
}

/* A recent list as a JSON array, newest first; refused entries carry their error too. */
static json_t *json_recent(const struct sfs_recent_io *v, size_t n, bool refused)
{
	json_t *a = json_array();
	int err = !a;

	for (size_t i = 0; !err && i < n; i++) {
		char when[48];
		json_t *e = json_pack("{s:s, s:I, s:s, s:I, s:I, s:i, s:o}",
				      "time", sfs_stats_iso_time(v[i].time_ns, when, sizeof(when)),
				      "time_ns", (json_int_t)v[i].time_ns, "op", sfs_io_op_name(v[i].op),
				      "offset", (json_int_t)v[i].off, "length", (json_int_t)v[i].len,
				      "pid", (int)v[i].pid, "comm", json_name(v[i].comm));

		if (e && refused)
			err |= json_object_set_new(e, "error", json_string(sfs_stats_refusal_name(v[i].err))) |
			       json_object_set_new(e, "reason", json_string(err_reason(v[i].err)));
		err |= !e || json_array_append_new(a, e);
	}
	if (err) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* Close a stream from open_memstream(out, ...): 0, or -ENOMEM (*out freed) if a write failed. */
static int finish(FILE *f, bool failed, char **out)
{
	failed |= ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The steps of the JSON file, each setting its keys of o in the order of SPEC.md; non-zero if
 * one could not be set. */
#define SET(key, val) (err |= json_object_set_new(o, key, val))
#define SETU(key, val) SET(key, json_integer((json_int_t)(val)))

void sfs_stats_zero_fallback_reason(int e, char *buf, size_t len)
{
	snprintf(buf, len, "the backing filesystem has no FALLOC_FL_ZERO_RANGE: %s", strerror(e));
}

void sfs_stats_zero_offload_text(const struct sfs_stats_info *info, char *buf, size_t len)
{
	char why[128];

	if (!info->zero_offload || !info->zero_offload_fallback) {
		snprintf(buf, len, "%s", info->zero_offload ? "on" : "off");
		return;
	}
	sfs_stats_zero_fallback_reason(info->zero_offload_fallback, why, sizeof(why));
	snprintf(buf, len, "fell back to writing zeros (%s)", why);
}

/* The image as served: name, geometry, provisioning, backing I/O, zero offload (in force, and
 * why not when the sidecar asks for it), profile, transport, serving. */
static int json_set_image(json_t *o, const struct sfs_stats_info *info)
{
	char fallback[128];
	int err = 0;

	sfs_stats_zero_fallback_reason(info->zero_offload_fallback, fallback, sizeof(fallback));

	SET("name", json_name(info->name));
	SETU("logical_sector_size", info->geom.lss);
	SETU("physical_sector_size", info->geom.pss);
	SET("provisioning", json_string(prov_name(info->prov)));
	SETU("block_size", info->geom.block_size);
	SETU("size", info->geom.size);
	SET("zero_offload", json_boolean(info->zero_offload && !info->zero_offload_fallback));
	SET("zero_offload_fallback", info->zero_offload_fallback ? json_string(fallback) : json_null());
	SET("backing_io", json_string(info->direct ? "direct" : "buffered"));
	SET("profile", info->profile ? json_string(info->profile) : json_null());
	if (info->transport)
		SET("transport", json_string(info->transport));
	if (info->serve)
		SET("serve", json_string(info->serve));
	return err;
}

/* Which run of counters this is, and the counters. */
static int json_set_counters(json_t *o, const struct sfs_stats_snap *s)
{
	int err = 0;

	SET("elapsed_seconds", json_real((double)s->elapsed_ns / 1e9));
	SETU("reset_generation", s->reset_generation);
	SETU("daemon_start", s->daemon_start);
	SETU("daemon_pid", s->daemon_pid);
	SETU("reads", s->reads);
	SETU("writes", s->writes);
	SETU("bytes_read", s->bytes_read);
	SETU("bytes_written", s->bytes_written);
	SETU("flushes", s->flushes);
	SETU("discards", s->discards);
	SETU("discard_bytes", s->discard_bytes);
	SETU("write_zeroes", s->write_zeroes);
	SETU("write_zeroes_bytes", s->write_zeroes_bytes);
	SETU("first_writes", s->first_writes);
	SETU("overwrites", s->overwrites);
	SETU("zeroed_bytes", s->zeroed_bytes);
	SETU("bounced_bytes", s->bounced_bytes);
	SETU("misaligned_rejected", s->misaligned_rejected);
	SETU("out_of_range", s->out_of_range);
	SETU("rmw_writes", s->rmw_writes);
	return err;
}

/* Allocation and eager zeroing. */
static int json_set_allocation(json_t *o, const struct sfs_stats_info *info)
{
	int err = 0;

	SETU("allocated_blocks", info->allocated_blocks);
	SETU("total_blocks", info->total_blocks);
	SET("zeroing", json_string(zeroing_names[info->zeroing]));
	SETU("zeroing_done_bytes", info->zeroing_done);
	SETU("zeroing_total_bytes", info->zeroing_total);
	return err;
}

/* The size and alignment histograms, and the recent refused and read-modify-write I/Os. */
static int json_set_shapes(json_t *o, const struct sfs_stats_snap *s, const struct sfs_stats_info *info)
{
	const struct sfs_stats_recent *r = info->recent;
	int err = 0;

	SET("size_histogram", json_counts(s->size_hist, sfs_stats_size_labels, SFS_SIZE_NBUCKET));
	SET("alignment_histogram", json_counts(s->align_hist, sfs_stats_align_labels, SFS_ALIGN_NCLASS));
	SETU("not_4k_aligned", not_4k_aligned(s));
	SET("refused_recent", r ? json_recent(r->refused, r->nrefused, true) : json_array());
	SET("rmw_recent", r ? json_recent(r->rmw, r->nrmw, false) : json_array());
	return err;
}

/* The latency classes, and with a device profile the delay it added to each. */
static int json_set_latency(json_t *o, const struct sfs_stats_snap *s, const struct sfs_stats_info *info)
{
	json_t *lat = json_object();
	int err = !lat;

	for (unsigned c = 0; lat && c < SFS_LAT_NCLASS; c++)
		err |= json_object_set_new(lat, sfs_stats_lat_keys[c], json_latency(s, c));
	SET("latency_us", lat);
	if (info->profile) {
		json_t *md = json_object();

		for (unsigned c = 0; md && c < SFS_LAT_NCLASS; c++)
			err |= json_object_set_new(md, sfs_stats_lat_keys[c], json_real((double)s->model_delay_ns[c] / 1e3));
		SET("model_delay_us", md ? md : json_null());
	}
	return err;
}
#undef SETU
#undef SET

int sfs_stats_render_json(const struct sfs_stats_snap *s, const struct sfs_stats_info *info,
			  char **out, size_t *len)
{
	json_t *o = json_object();
	int err;
	FILE *f;

	if (!o)
		return -ENOMEM;
	/* one step after the other: the keys keep their order */
	err = json_set_image(o, info);
	err |= json_set_counters(o, s);
	err |= json_set_allocation(o, info);
	err |= json_set_shapes(o, s, info);
	err |= json_set_latency(o, s, info);
	err |= sfs_stats_fail_json(o, info);
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	f = open_memstream(out, len);
	if (!f) {
		json_decref(o);
		return -ENOMEM;
	}
	/* 15 significant digits print k/1000 exactly, so microseconds keep 3 decimals. */
	err = json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	fputc('\n', f);
	return finish(f, err, out);
}

int sfs_stats_render_recent_json(const char *name, const struct sfs_stats_recent *r, char **out,
				 size_t *len)
{
	json_t *o = json_object();
	int err = !o;
	FILE *f;

	if (o)
		err = json_object_set_new(o, "image", json_name(name)) |
		      json_object_set_new(o, "refused_recent", json_recent(r->refused, r->nrefused, true)) |
		      json_object_set_new(o, "rmw_recent", json_recent(r->rmw, r->nrmw, false));
	f = err ? NULL : open_memstream(out, len);
	if (!f) {
		json_decref(o);
		return -ENOMEM;
	}
	err = json_dumpf(o, f, JSON_COMPACT);
	json_decref(o);
	return finish(f, err, out);
}

/* ---- text ---- */

static double per_sec(uint64_t v, double secs)
{
	return secs > 0 ? (double)v / secs : 0;
}

static void text_count(FILE *f, const char *key, uint64_t v, double secs)
{
	fprintf(f, "%-20s %12" PRIu64 " %12.1f/s\n", key, v, per_sec(v, secs));
}

static void text_bytes(FILE *f, const char *key, uint64_t v, double secs)
{
	char h[32], r[32];

	sfs_format_human(v, h, sizeof(h));
	sfs_format_human((uint64_t)per_sec(v, secs), r, sizeof(r));
	fprintf(f, "%-20s %12s %12s/s\n", key, h, r);
}

static void text_latency(FILE *f, const struct sfs_stats_snap *s)
{
	fprintf(f, "%-16s %8s %9s %9s %9s %9s %9s %9s\n", "latency (us)", "count",
		"p50", "p90", "p99", "p99.9", "max", "mean");
	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		uint64_t v[] = {
			sfs_stats_percentile(s, c, 0.50), sfs_stats_percentile(s, c, 0.90),
			sfs_stats_percentile(s, c, 0.99), sfs_stats_percentile(s, c, 0.999),
			s->lat[c].max_ns, mean_ns(s, c),
		};

		fprintf(f, "%-16s %8" PRIu64, sfs_stats_lat_keys[c], s->lat[c].count);
		for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			if (s->lat[c].count)
				fprintf(f, " %9.1f", v[i] / 1000.0);
			else
				fprintf(f, " %9s", "-");
		}
		fputc('\n', f);
	}
}

static void text_histogram(FILE *f, const char *title, const uint64_t *v,
			   const char *const *labels, unsigned n)
{
	uint64_t max = 0;

	for (unsigned i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	fprintf(f, "%s\n", title);
	for (unsigned i = 0; i < n; i++) {
		/* Scaled to the largest bucket; any non-empty bucket gets at least one '#'. */
		unsigned w = max ? (unsigned)((v[i] * BAR_WIDTH + max - 1) / max) : 0;
		char bar[BAR_WIDTH + 1];

		memset(bar, '#', w);
		bar[w] = '\0';
		fprintf(f, "  %5s  %-*s %" PRIu64 "\n", labels[i], BAR_WIDTH, bar, v[i]);
	}
}

/* Eager zeroing not finished: how far, and whether it runs. */
static void text_zeroing(FILE *f, const struct sfs_stats_info *info)
{
	unsigned pct = info->zeroing_total ? (unsigned)(info->zeroing_done * 100 / info->zeroing_total) : 0;
	char done[32], total[32];

	if (info->zeroing == SFS_ZEROING_NONE || info->zeroing == SFS_ZEROING_DONE)
		return;
	sfs_format_human(info->zeroing_done, done, sizeof(done));
	sfs_format_human(info->zeroing_total, total, sizeof(total));
	fprintf(f, "zeroing: %u%% (%s of %s)", pct, done, total);
	if (info->zeroing == SFS_ZEROING_RUNNING)
		fputs(", in the background\n", f);
	else if (info->zeroing == SFS_ZEROING_FAILED)
		fprintf(f, ", failed: %s; resumes when the image is next opened\n", strerror(-info->zeroing_err));
	else
		fputs(", stopped; resumes when the image is next opened\n", f);
}

static void text_verdict(FILE *f, const struct sfs_stats_snap *s)
{
	uint64_t total = align_total(s), bad = not_4k_aligned(s);

	if (total == 0)
		fputs("4Kn ready: unknown (no I/O yet)\n", f);
	else if (bad == 0)
		fprintf(f, "4Kn ready: yes (all %" PRIu64 " I/Os 4 KiB aligned)\n", total);
	else
		fprintf(f, "4Kn ready: no (%" PRIu64 " of %" PRIu64 " I/Os not 4 KiB aligned)\n",
			bad, total);
}

/* A recent list as a table of its newest TEXT_RECENT entries. */
static void text_recent(FILE *f, const char *title, const struct sfs_recent_io *v, size_t n, bool refused)
{
	char comm[SFS_ESCAPED_SIZE(SFS_COMM_LEN)], when[48], pid[16];

	if (n == 0) {
		fprintf(f, "%s: none\n", title);
		return;
	}
	if (n <= TEXT_RECENT)
		fprintf(f, "%s (%zu, newest first)\n", title, n);
	else
		fprintf(f, "%s (newest %d of the %zu kept; all: NAME.json, sectorfs-stat --refused)\n",
			title, TEXT_RECENT, n);
	fprintf(f, "  %-15s %-12s %14s %9s %-7s %8s  %s\n", "time (UTC)", "op", "offset", "length",
		refused ? "error" : "", "pid", "command");
	for (size_t i = 0; i < n && i < TEXT_RECENT; i++) {
		if (!v[i].comm[0] || sfs_escape_name(v[i].comm, false, comm, sizeof(comm)) < 0)
			snprintf(comm, sizeof(comm), "-");
		/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ": the time of day, to the microsecond */
		sfs_stats_iso_time(v[i].time_ns, when, sizeof(when));
		when[26] = '\0';
		if (v[i].pid > 0)
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
		else
			snprintf(pid, sizeof(pid), "-");
		fprintf(f, "  %-15s %-12s %14" PRIu64 " %9" PRIu64 " %-7s %8s  %s\n", when + 11,
			sfs_io_op_name(v[i].op), v[i].off, v[i].len, refused ? sfs_stats_refusal_name(v[i].err) : "", pid, comm);
	}
}

/* Unix time t as "YYYY-MM-DD HH:MM:SS UTC" in buf. */
static const char *utc_time(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

int sfs_stats_render_text(const struct sfs_stats_snap *s, const struct sfs_stats_info *info,
			  char **out, size_t *len)
{
	const struct sfs_geom *g = &info->geom;
	double secs = (double)s->elapsed_ns / 1e9;
	char size[32], bsize[32], when[32], zo[192], *name;
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	sfs_format_human(g->size, size, sizeof(size));
	sfs_format_size(g->block_size, bsize, sizeof(bsize));
	name = malloc(SFS_ESCAPED_SIZE(strlen(info->name)));
	if (!name || sfs_escape_name(info->name, false, name, SFS_ESCAPED_SIZE(strlen(info->name))) < 0) {
		free(name);
		return finish(f, true, out);
	}
	fprintf(f, "sectorfs stats: %s\n", name);   /* as ls -b shows it: one line, no escape codes */
	free(name);
	fprintf(f, "geometry      %s: logical %" PRIu32 " / physical %" PRIu32 "\n",
		sector_name(g->lss, g->pss), g->lss, g->pss);
	sfs_stats_zero_offload_text(info, zo, sizeof(zo));
	fprintf(f, "provisioning  %s, block size %s, zero offload %s\n", prov_name(info->prov), bsize, zo);
	fprintf(f, "size          %s (%" PRIu64 " bytes)\n", size, g->size);
	fprintf(f, "backing I/O   %s\n", info->direct ? "O_DIRECT" : "buffered (page cache)");
	if (info->profile) {
		fprintf(f, "profile       %s (requests complete no earlier than it says)\n", info->profile);
		fprintf(f, "model delay   ");
		for (unsigned c = 0; c < SFS_LAT_NCLASS; c++)
			fprintf(f, "%s%s %.0f us", c ? ", " : "", sfs_stats_lat_keys[c], (double)s->model_delay_ns[c] / 1e3);
		fputc('\n', f);
	}
	fprintf(f, "allocation    %" PRIu64 "/%" PRIu64 " blocks (%.1f%%)\n",
		info->allocated_blocks, info->total_blocks,
		info->total_blocks ? 100.0 * info->allocated_blocks / info->total_blocks : 0.0);
	text_zeroing(f, info);
	fprintf(f, "elapsed       %.1f s since load or reset (reset_generation %" PRIu64 ")\n", secs,
		s->reset_generation);
	fprintf(f, "daemon        pid %" PRIu64 ", started %s (daemon_start %" PRIu64 ")\n\n",
		s->daemon_pid, utc_time(s->daemon_start, when, sizeof(when)), s->daemon_start);

	fprintf(f, "%-20s %12s %14s\n", "counter", "total", "rate");
	text_count(f, "reads", s->reads, secs);
	text_count(f, "writes", s->writes, secs);
	text_count(f, "first_writes", s->first_writes, secs);
	text_count(f, "overwrites", s->overwrites, secs);
	text_count(f, "rmw_writes", s->rmw_writes, secs);
	text_count(f, "flushes", s->flushes, secs);
	text_count(f, "discards", s->discards, secs);
	text_count(f, "write_zeroes", s->write_zeroes, secs);
	text_count(f, "misaligned_rejected", s->misaligned_rejected, secs);
	text_count(f, "out_of_range", s->out_of_range, secs);
	text_bytes(f, "bytes_read", s->bytes_read, secs);
	text_bytes(f, "bytes_written", s->bytes_written, secs);
	text_bytes(f, "discard_bytes", s->discard_bytes, secs);
	text_bytes(f, "write_zeroes_bytes", s->write_zeroes_bytes, secs);
	text_bytes(f, "zeroed_bytes", s->zeroed_bytes, secs);
	fputc('\n', f);

	text_latency(f, s);
	fputc('\n', f);
	text_histogram(f, "I/O size (reads and writes)", s->size_hist, sfs_stats_size_labels, SFS_SIZE_NBUCKET);
	fputc('\n', f);
	text_histogram(f, "alignment (every I/O, refused ones too)", s->align_hist, sfs_stats_align_labels,
		       SFS_ALIGN_NCLASS);
	fputc('\n', f);
	text_verdict(f, s);
	fputc('\n', f);
	if (info->fail) {
		sfs_stats_fail_text(f, info);
		fputc('\n', f);
	}
	text_recent(f, "refused I/Os", info->recent ? info->recent->refused : NULL,
		    info->recent ? info->recent->nrefused : 0, true);
	text_recent(f, "read-modify-write writes", info->recent ? info->recent->rmw : NULL,
		    info->recent ? info->recent->nrmw : 0, false);

	return finish(f, false, out);
}
