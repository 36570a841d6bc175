/* SPDX-License-Identifier: MIT */
/*
 * zeroing_report.c - the zero-on-new-write experiment's figures for
 * people and for programs.
 *
 * Text: for each pass a table of the six images (IOPS, MB/s, mean and p99
 * write latency, the mean latency of the writes that start a block, the
 * overhead against eagerzeroedthick with the same offload setting, and
 * the daemon's first_writes and zeroed_bytes for the pass).  JSON: one
 * object with every figure, the daemon's counters under "stats" of each
 * image.
 */
#include <math.h>
#include <stdio.h>

#include "units.h"
#include "zeroing.h"

static double image_iops(const struct zeroing_image *r)
{
	return r->secs > 0 ? (double)r->writes / r->secs : 0;
}

static double image_mbps(const struct zeroing_image *r)
{
	return r->secs > 0 ? (double)r->bytes / r->secs / 1e6 : 0;
}

/* Extra time per write against eagerzeroedthick with the same offload, in %; NAN if unknown. */
static double overhead(const struct zeroing_result *z, int pass, int i)
{
	const struct zeroing_image *r = &z->img[pass][i], *base = &z->img[pass][4 + i % 2];

	if (!r->writes || !base->writes || base->secs <= 0)
		return NAN;
	return ((r->secs / (double)r->writes) / (base->secs / (double)base->writes) - 1) * 100;
}

/* The row of image i in pass p, if it ran. */
static void print_row(const struct zeroing_result *z, int p, int i)
{
	const struct zeroing_image *r = &z->img[p][i];
	char a[32];
	double o;

	if (!r->ran || (!r->writes && !r->done))
		return;
	printf("%-16s %-7s %8.0f %8.1f ", zeroing_prov(i), zeroing_offload(i) ? "on" : "off",
	       image_iops(r), image_mbps(r));
	printf("%9s ", bench_fmt_us(bench_hist_mean_us(&r->lat), a, sizeof(a)));
	printf("%9s ", bench_fmt_us(bench_hist_pct_us(&r->lat, 99), a, sizeof(a)));
	printf("%9s ", bench_fmt_us(bench_hist_mean_us(&r->lat_new), a, sizeof(a)));
	o = overhead(z, p, i);
	if (i >= 4)
		printf("%9s", "baseline");
	else if (o == o)
		printf("%+8.1f%%", o);
	else
		printf("%9s", "-");
	sfs_format_human((uint64_t)r->st_zeroed, a, sizeof(a));
	printf(" %7lld %10s%s\n", (long long)r->st_first, a, r->done ? "" : "  (interrupted)");
}

void zeroing_print_text(const struct zeroing_result *z)
{
	static const char *const title[2] = {
		"pass 1: fresh space (each block's first write zeroes the rest of the block)",
		"pass 2: the same space again (every write is an overwrite)",
	};
	char a[32], b[32], c[32];

	printf("zero-on-new-write: 6 images of %s (%s, block %s), ",
	       tool_fmt_size(z->size, TOOL_SIZE_IEC, a, sizeof(a)), z->sector,
	       tool_fmt_size(z->block, TOOL_SIZE_IEC, b, sizeof(b)));
	printf("sequential O_DIRECT writes of %s, QD 1\n", tool_fmt_size(z->xfer, TOOL_SIZE_IEC, c, sizeof(c)));
	printf("store %s%s, mount %s\n", z->tb->store, z->tb->temporary_store ? " (temporary)" : "",
	       z->tb->mnt);
	for (int p = 0; p < 2 && z->img[p][4].ran; p++) {
		printf("\n%s\n%-16s %-7s %8s %8s %9s %9s %9s %9s %7s %10s\n", title[p], "provisioning",
		       "offload", "IOPS", "MB/s", "mean", "p99", "new-block", "overhead", "1st_wr", "zeroed");
		for (int i = 0; i < ZEROING_NIMG; i++)
			print_row(z, p, i);
	}
	printf("\nmean, p99: write latency; new-block: mean latency of the writes that start a block\n"
	       "overhead: extra time per write against eagerzeroedthick with the same offload\n"
	       "1st_wr, zeroed: first_writes and zeroed_bytes counted by the daemon during the pass\n");
}

static json_t *image_json(const struct zeroing_result *z, int p, int i)
{
	const struct zeroing_image *r = &z->img[p][i];
	json_t *o = json_object(), *st = json_object();

	json_object_set_new(o, "name", json_string(z->names[i]));
	json_object_set_new(o, "provisioning", json_string(zeroing_prov(i)));
	json_object_set_new(o, "zero_offload", json_boolean(zeroing_offload(i)));
	json_object_set_new(o, "complete", json_boolean(r->done));
	json_object_set_new(o, "writes", json_integer((json_int_t)r->writes));
	json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(o, "seconds", bench_jreal(r->secs));
	json_object_set_new(o, "iops", bench_jreal(image_iops(r)));
	json_object_set_new(o, "mb_per_s", bench_jreal(image_mbps(r)));
	json_object_set_new(o, "latency", bench_hist_json(&r->lat));
	json_object_set_new(o, "new_block_latency", bench_hist_json(&r->lat_new));
	json_object_set_new(o, "overhead_pct", i >= 4 ? json_real(0) : bench_jreal(overhead(z, p, i)));
	json_object_set_new(st, "writes", json_integer(r->st_writes));
	json_object_set_new(st, "bytes_written", json_integer(r->st_bytes));
	json_object_set_new(st, "first_writes", json_integer(r->st_first));
	json_object_set_new(st, "overwrites", json_integer(r->st_over));
	json_object_set_new(st, "zeroed_bytes", json_integer(r->st_zeroed));
	json_object_set_new(st, "allocated_blocks", json_integer(r->st_alloc));
	json_object_set_new(st, "total_blocks", json_integer(r->st_total));
	json_object_set_new(o, "stats", st);
	return o;
}

int zeroing_print_json(const struct zeroing_result *z)
{
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
	json_object_set_new(o, "interrupted", json_boolean(z->interrupted));
	for (int p = 0; p < 2 && z->img[p][0].ran; p++) {
		json_t *po = json_object(), *imgs = json_array();

		json_object_set_new(po, "pass", json_integer(p + 1));
		json_object_set_new(po, "space", json_string(p == 0 ? "fresh" : "written"));
		for (int i = 0; i < ZEROING_NIMG; i++)
			if (z->img[p][i].ran)
				json_array_append_new(imgs, image_json(z, p, i));
		json_object_set_new(po, "images", imgs);
		json_array_append_new(passes, po);
	}
	json_object_set_new(o, "passes", passes);
	return bench_json_print(o);
}
