/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - the Prometheus text exposition of every image's statistics
 * (see metrics.h for the contract).
 *
 * Families, each one group of samples labelled image="NAME":
 *
 *   sectorfs_<counter>_total              counter    reads, writes, bytes, ...
 *   sectorfs_requests_by_size_total       counter    + size="512".."512K",">=1M"
 *   sectorfs_requests_by_alignment_total  counter    + alignment="512","1K","2K",">=4K"
 *   sectorfs_<gauge>                      gauge      size, sectors, blocks, allocation
 *   sectorfs_image_info                   gauge 1    + sector, provisioning, ...
 *   sectorfs_<class>_latency_seconds      histogram  read, write_overwrite,
 *                                                    write_first, flush
 *   sectorfs_daemon_start_time_seconds    gauge      no image label
 *
 * Images with a failure state (fail.h) add, each family present only
 * when one image has one, a sample per such image:
 *
 *   sectorfs_power_cuts_total, _lost_writes_total, _torn_writes_total,
 *   _damaged_sectors_total, _media_errors_total,
 *   _destaged_bytes_total                 counter
 *   sectorfs_cached_bytes, sectorfs_bad_sectors, sectorfs_power_on
 *                                         gauge
 *
 * A latency bucket le="X" counts the I/Os recorded below X: the daemon
 * records whole nanoseconds, truncated, so a recorded value below 2^k ns
 * was a true one below 2^k ns, and each 2^k is a boundary of its
 * log-linear histogram (stats.c): the cumulative counts are exact, not
 * interpolated.  _count is the histogram's own total (a snapshot taken
 * during I/O may have a count one ahead of its histogram), so that it
 * equals the +Inf bucket as the format requires.  Seconds and le values
 * are printed as exact decimals of the nanoseconds (2^k / 10^9 has at most
 * nine decimals).  Counters only grow within a reset generation; a reset
 * makes them start again from zero, which Prometheus takes as a counter
 * reset (and sectorfs_stats_reset_generation says so exactly).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/escape.h"
#include "metrics.h"

#define NLE (SFS_METRICS_LE_MAX - SFS_METRICS_LE_MIN + 1)

/* The counters of a snapshot, exposed as sectorfs_NAME_total. */
static const struct counter {
	const char *name, *help;
	size_t off;
} counters[] = {
	{ "reads", "Read requests accepted (a read at or past the end is not counted).",
	  offsetof(struct sfs_stats_snap, reads) },
	{ "writes", "Write requests accepted.", offsetof(struct sfs_stats_snap, writes) },
	{ "read_bytes", "Bytes read by accepted reads.", offsetof(struct sfs_stats_snap, bytes_read) },
	{ "written_bytes", "Bytes written by accepted writes.", offsetof(struct sfs_stats_snap, bytes_written) },
	{ "flushes", "Successful fsync and fdatasync requests.", offsetof(struct sfs_stats_snap, flushes) },
	{ "discards", "Accepted discards (fallocate PUNCH_HOLE).", offsetof(struct sfs_stats_snap, discards) },
	{ "discard_bytes", "Bytes of accepted discards.", offsetof(struct sfs_stats_snap, discard_bytes) },
	{ "write_zeroes", "Accepted write-zeroes requests (fallocate ZERO_RANGE).",
	  offsetof(struct sfs_stats_snap, write_zeroes) },
	{ "write_zeroes_bytes", "Bytes of accepted write-zeroes requests.",
	  offsetof(struct sfs_stats_snap, write_zeroes_bytes) },
	{ "first_writes", "Writes that touched at least one never-written block.",
	  offsetof(struct sfs_stats_snap, first_writes) },
	{ "overwrites", "Writes to allocated blocks only.", offsetof(struct sfs_stats_snap, overwrites) },
	{ "zeroed_bytes", "Bytes zeroed by the daemon (lazy and eager zeroing, zero-range, discards of thick images).",
	  offsetof(struct sfs_stats_snap, zeroed_bytes) },
	{ "misaligned_rejected", "Reads, writes, discards and zero-ranges refused with EINVAL for alignment.",
	  offsetof(struct sfs_stats_snap, misaligned_rejected) },
	{ "out_of_range", "Writes, discards and zero-ranges refused with ENOSPC (past the end).",
	  offsetof(struct sfs_stats_snap, out_of_range) },
	{ "rmw_writes", "Accepted writes covering a physical sector in part (read-modify-write).",
	  offsetof(struct sfs_stats_snap, rmw_writes) },
};
#define NCTR (sizeof(counters) / sizeof(counters[0]))

static const char *const size_labels[SFS_SIZE_NBUCKET] = {
	"512", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", ">=1M",
};
static const char *const align_labels[SFS_ALIGN_NCLASS] = { "512", "1K", "2K", ">=4K" };
static const char *const lat_names[SFS_LAT_NCLASS] = { "read", "write_overwrite", "write_first", "flush" };
static const char *const lat_help[SFS_LAT_NCLASS] = {
	"Latency of accepted reads inside the daemon.",
	"Latency of writes to allocated blocks only, inside the daemon.",
	"Latency of writes that touched a never-written block (their zeroing included), inside the daemon.",
	"Latency of flushes (fsync, fdatasync) inside the daemon.",
};
static const char *const zeroing_names[] = { "none", "done", "running", "stopped", "failed" };

struct entry {
	char *label;                          /* the image name, escaped for a label value */
	struct sfs_stats_info info;           /* name and recent NULL */
	uint64_t ctr[NCTR];
	uint64_t size_hist[SFS_SIZE_NBUCKET], align_hist[SFS_ALIGN_NCLASS];
	struct {
		uint64_t le[NLE], count, sum_ns;   /* le cumulative; count = the histogram's total */
	} lat[SFS_LAT_NCLASS];
	uint64_t generation, start_ns;        /* reset generation; CLOCK_REALTIME at load or reset */
	bool profiled;                        /* a device profile in force (info.profile not kept) */
	bool failing;                         /* a failure state (info.fail not kept) ... */
	struct sfs_fail_counters fc;          /* ... its counters */
	bool power_on;
	uint64_t model_delay_ns[SFS_LAT_NCLASS];
};

struct sfs_metrics {
	struct entry *v;
	size_t n, cap;
};

int sfs_metrics_new(struct sfs_metrics **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void sfs_metrics_free(struct sfs_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].label);
	free(m->v);
	free(m);
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int sfs_metrics_add(struct sfs_metrics *m, const struct sfs_stats_snap *snap, const struct sfs_stats_info *info)
{
	size_t size = SFS_ESCAPED_SIZE(strlen(info->name));
	struct entry *e;
	uint64_t now;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct entry *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->label = malloc(size);
	if (!e->label || sfs_escape_label(info->name, e->label, size) < 0) {
		free(e->label);
		return -ENOMEM;
	}
	e->info = *info;
	e->info.name = NULL;
	e->info.recent = NULL;
	e->profiled = info->profile != NULL;
	e->info.profile = NULL;
	e->failing = info->fail != NULL;
	if (info->fail) {
		e->fc = info->fail->cnt;
		e->power_on = !info->fail->power_off;
	}
	e->info.fail = NULL;
	e->info.last_cut = NULL;
	memcpy(e->model_delay_ns, snap->model_delay_ns, sizeof(e->model_delay_ns));
	for (size_t i = 0; i < NCTR; i++)
		e->ctr[i] = *(const uint64_t *)(const void *)((const char *)snap + counters[i].off);
	memcpy(e->size_hist, snap->size_hist, sizeof(e->size_hist));
	memcpy(e->align_hist, snap->align_hist, sizeof(e->align_hist));
	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		uint64_t run = 0;
		unsigned b = 0;

		/* le = 2^k: every bucket below the one that starts at 2^k */
		for (unsigned k = 0; k < NLE; k++) {
			unsigned end = sfs_stats_lat_bucket(1ull << (SFS_METRICS_LE_MIN + k));

			for (; b < end; b++)
				run += snap->lat[c].hist[b];
			e->lat[c].le[k] = run;
		}
		for (; b < SFS_LAT_NBUCKET; b++)
			run += snap->lat[c].hist[b];
		e->lat[c].count = run;
		e->lat[c].sum_ns = snap->lat[c].sum_ns;
	}
	e->generation = snap->reset_generation;
	now = real_ns();
	e->start_ns = now > snap->elapsed_ns ? now - snap->elapsed_ns : 0;
	m->n++;
	return 0;
}

/* ns as exact decimal seconds, without trailing zeros ("0.000000512", "17.179869184", "3"). */
static const char *seconds(uint64_t ns, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	return buf;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One gauge family with one sample per image, from a getter. */
static void gauge(FILE *f, const struct sfs_metrics *m, const char *name, const char *help,
		  uint64_t (*get)(const struct entry *))
{
	family(f, name, "gauge", help);
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "%s{image=\"%s\"} %" PRIu64 "\n", name, m->v[i].label, get(&m->v[i]));
}

static uint64_t g_size(const struct entry *e) { return e->info.geom.size; }
static uint64_t g_lss(const struct entry *e) { return e->info.geom.lss; }
static uint64_t g_pss(const struct entry *e) { return e->info.geom.pss; }
static uint64_t g_bs(const struct entry *e) { return e->info.geom.block_size; }
static uint64_t g_blocks(const struct entry *e) { return e->info.total_blocks; }
static uint64_t g_alloc_blocks(const struct entry *e) { return e->info.allocated_blocks; }
static uint64_t g_zdone(const struct entry *e) { return e->info.zeroing_done; }
static uint64_t g_ztotal(const struct entry *e) { return e->info.zeroing_total; }
static uint64_t g_gen(const struct entry *e) { return e->generation; }

/* Allocated blocks times the block size, at most the disk size (the last block may be partial). */
static uint64_t g_alloc_bytes(const struct entry *e)
{
	uint64_t b = e->info.geom.block_size, n = e->info.allocated_blocks;

	if (b && n > e->info.geom.size / b)
		return e->info.geom.size;
	return n * b;
}

/* The counter families: sectorfs_<counter>_total, then the size and alignment classes. */
static void render_counters(FILE *f, const struct sfs_metrics *m)
{
	char name[96];

	for (size_t c = 0; c < NCTR; c++) {
		snprintf(name, sizeof(name), "sectorfs_%s_total", counters[c].name);
		family(f, name, "counter", counters[c].help);
		for (size_t i = 0; i < m->n; i++)
			fprintf(f, "%s{image=\"%s\"} %" PRIu64 "\n", name, m->v[i].label, m->v[i].ctr[c]);
	}
	family(f, "sectorfs_requests_by_size_total", "counter",
	       "Accepted reads and writes by length: size is the lower bound of a power-of-two class.");
	for (size_t i = 0; i < m->n; i++)
		for (unsigned b = 0; b < SFS_SIZE_NBUCKET; b++)
			fprintf(f, "sectorfs_requests_by_size_total{image=\"%s\",size=\"%s\"} %" PRIu64 "\n",
				m->v[i].label, size_labels[b], m->v[i].size_hist[b]);
	family(f, "sectorfs_requests_by_alignment_total", "counter",
	       "Reads and writes (refused ones too) by the largest power of two dividing offset and length.");
	for (size_t i = 0; i < m->n; i++)
		for (unsigned a = 0; a < SFS_ALIGN_NCLASS; a++)
			fprintf(f, "sectorfs_requests_by_alignment_total{image=\"%s\",alignment=\"%s\"} %" PRIu64 "\n",
				m->v[i].label, align_labels[a], m->v[i].align_hist[a]);
}

/* The gauges of each image: geometry, allocation, zeroing, sectorfs_image_info, and when its
 * counters started. */
static void render_gauges(FILE *f, const struct sfs_metrics *m)
{
	char buf[48];

	gauge(f, m, "sectorfs_size_bytes", "Disk size.", g_size);
	gauge(f, m, "sectorfs_logical_sector_size_bytes", "Logical sector size.", g_lss);
	gauge(f, m, "sectorfs_physical_sector_size_bytes", "Physical sector size.", g_pss);
	gauge(f, m, "sectorfs_block_size_bytes", "Allocation and zeroing unit.", g_bs);
	gauge(f, m, "sectorfs_blocks", "Blocks of the disk (the allocation map's length).", g_blocks);
	gauge(f, m, "sectorfs_allocated_blocks", "Blocks written, zeroed or allocated (set in the map).",
	      g_alloc_blocks);
	gauge(f, m, "sectorfs_allocated_bytes", "Allocated blocks times the block size, at most the disk size.",
	      g_alloc_bytes);
	gauge(f, m, "sectorfs_zeroing_done_bytes", "Eager zeroing: bytes of blocks zeroed or written.", g_zdone);
	gauge(f, m, "sectorfs_zeroing_total_bytes", "Eager zeroing: bytes to zero (0 unless eagerzeroedthick).",
	      g_ztotal);
	family(f, "sectorfs_image_info", "gauge", "The image as served (always 1).");
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->v[i];
		const char *sector = sfs_sector_name(e->info.geom.lss, e->info.geom.pss);
		const char *prov = sfs_prov_name(e->info.prov);

		fprintf(f, "sectorfs_image_info{image=\"%s\",sector=\"%s\",provisioning=\"%s\",zero_offload=\"%s\","
			"backing_io=\"%s\",zeroing=\"%s\"} 1\n", e->label, sector ? sector : "custom",
			prov ? prov : "unknown",
			!e->info.zero_offload ? "false" : e->info.zero_offload_fallback ? "fallback" : "true",
			e->info.direct ? "direct" : "buffered", zeroing_names[e->info.zeroing]);
	}
	gauge(f, m, "sectorfs_stats_reset_generation",
	      "Changes whenever the image's counters start again from zero (load, reset).", g_gen);
	family(f, "sectorfs_stats_start_time_seconds", "gauge",
	       "Unix time the image's counters started from zero (load or last reset).");
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "sectorfs_stats_start_time_seconds{image=\"%s\"} %s\n", m->v[i].label,
			seconds(m->v[i].start_ns, buf, sizeof(buf)));
}

/* One histogram family per latency class: the le buckets, +Inf, _sum and _count of each image. */
static void render_latency(FILE *f, const struct sfs_metrics *m)
{
	char name[96], buf[48], le[48];

	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		snprintf(name, sizeof(name), "sectorfs_%s_latency_seconds", lat_names[c]);
		family(f, name, "histogram", lat_help[c]);
		for (size_t i = 0; i < m->n; i++) {
			const struct entry *e = &m->v[i];

			for (unsigned k = 0; k < NLE; k++)
				fprintf(f, "%s_bucket{image=\"%s\",le=\"%s\"} %" PRIu64 "\n", name, e->label,
					seconds(1ull << (SFS_METRICS_LE_MIN + k), le, sizeof(le)), e->lat[c].le[k]);
			fprintf(f, "%s_bucket{image=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name, e->label, e->lat[c].count);
			fprintf(f, "%s_sum{image=\"%s\"} %s\n", name, e->label, seconds(e->lat[c].sum_ns, buf, sizeof(buf)));
			fprintf(f, "%s_count{image=\"%s\"} %" PRIu64 "\n", name, e->label, e->lat[c].count);
		}
	}
}

/* The time each image's device profile held requests back: the family only when some image has a
 * profile, a sample per class of each image that has one. */
static void render_model_delay(FILE *f, const struct sfs_metrics *m)
{
	char buf[48];

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].profiled) {
			family(f, "sectorfs_model_delay_seconds_total", "counter",
			       "Time the image's device profile held requests back, by latency class.");
			break;
		}
	for (size_t i = 0; i < m->n; i++)
		for (unsigned c = 0; m->v[i].profiled && c < SFS_LAT_NCLASS; c++)
			fprintf(f, "sectorfs_model_delay_seconds_total{image=\"%s\",class=\"%s\"} %s\n", m->v[i].label,
				lat_names[c], seconds(m->v[i].model_delay_ns[c], buf, sizeof(buf)));
}

/* The failure families (top of file): only when some image has a failure state. */
static const struct fail_family {
	const char *name, *type, *help;
	size_t off;                   /* in struct sfs_fail_counters; SIZE_MAX: the power */
} fail_families[] = {
	{ "sectorfs_power_cuts_total", "counter", "Power cuts (user.sectorfs.power off, or a trigger).",
	  offsetof(struct sfs_fail_counters, power_cuts) },
	{ "sectorfs_lost_writes_total", "counter", "Unflushed writes power cuts lost whole.",
	  offsetof(struct sfs_fail_counters, lost_writes) },
	{ "sectorfs_torn_writes_total", "counter", "Unflushed writes power cuts kept in part.",
	  offsetof(struct sfs_fail_counters, torn_writes) },
	{ "sectorfs_damaged_sectors_total", "counter", "Logical sectors power cuts left unreadable.",
	  offsetof(struct sfs_fail_counters, damaged_sectors) },
	{ "sectorfs_media_errors_total", "counter", "Reads refused with EIO for a bad or damaged sector.",
	  offsetof(struct sfs_fail_counters, media_errors) },
	{ "sectorfs_destaged_bytes_total", "counter", "Bytes the volatile write cache destaged to make room.",
	  offsetof(struct sfs_fail_counters, destaged_bytes) },
	{ "sectorfs_cached_bytes", "gauge", "Bytes in the volatile write cache now (unflushed).",
	  offsetof(struct sfs_fail_counters, cached_bytes) },
	{ "sectorfs_bad_sectors", "gauge", "Logical sectors in the bad-sector list now (every kind).",
	  offsetof(struct sfs_fail_counters, bad_sectors) },
	{ "sectorfs_power_on", "gauge", "1 while the disk has power, 0 after a cut until it is set on.", SIZE_MAX },
};

static void render_failures(FILE *f, const struct sfs_metrics *m)
{
	size_t i;

	for (i = 0; i < m->n && !m->v[i].failing; i++)
		;
	if (i == m->n)
		return;
	for (size_t k = 0; k < sizeof(fail_families) / sizeof(fail_families[0]); k++) {
		const struct fail_family *ff = &fail_families[k];

		family(f, ff->name, ff->type, ff->help);
		for (i = 0; i < m->n; i++) {
			const struct entry *e = &m->v[i];
			uint64_t v = ff->off == SIZE_MAX ? e->power_on
							  : *(const uint64_t *)(const void *)((const char *)&e->fc + ff->off);

			if (e->failing)
				fprintf(f, "%s{image=\"%s\"} %" PRIu64 "\n", ff->name, e->label, v);
		}
	}
}

int sfs_metrics_render(const struct sfs_metrics *m, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	uint64_t start, pid;
	bool failed;

	if (!f)
		return -ENOMEM;
	render_counters(f, m);
	render_gauges(f, m);
	render_latency(f, m);
	render_model_delay(f, m);
	render_failures(f, m);
	sfs_stats_origin(&start, &pid);
	family(f, "sectorfs_daemon_start_time_seconds", "gauge", "Unix time the daemon began serving the mount.");
	fprintf(f, "sectorfs_daemon_start_time_seconds %" PRIu64 "\n", start);

	failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
