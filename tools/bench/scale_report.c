/* SPDX-License-Identifier: MIT */
/*
 * scale_report.c - the figures of sectorfs-bench scale (struct
 * scale_result, filled by scale.c), as text for people or as one JSON
 * object (--json), and the medians of the per-I/O comparison.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "median.h"
#include "scale.h"
#include "util/units.h"

/* The median of the ncmp IOPS of v. */
static double scale_iops_median(const struct scale_result *r, const double *v)
{
	double s[MAX_REPEAT];

	memcpy(s, v, r->ncmp * sizeof(*v));
	return bench_median(s, r->ncmp);
}

/* The median of the per-repeat ratios, the store's IOPS over the store of one's. */
static double scale_ratio_median(const struct scale_result *r)
{
	double v[MAX_REPEAT];

	for (unsigned i = 0; i < r->ncmp; i++)
		v[i] = r->iops_big[i] / r->iops_one[i];
	return bench_median(v, r->ncmp);
}

/* What each image read in the touch pass still costs after the quiet, in bytes against idle. */
static double scale_touched_per_image(const struct scale_result *r)
{
	return r->touched > 0 ? (double)(r->rss_touched_idle - r->rss_idle) * 1024.0 / (double)r->touched : NAN;
}

void scale_report_text(const struct scale_result *r)
{
	double per = r->images > 1 ? (double)(r->rss_idle - r->rss_one) * 1024.0 / (double)(r->images - 1) : 0;
	char size[32];

	sfs_format_human(r->size, size, sizeof(size));
	printf("store: %lu thin 4kn images of %s", r->images, size);
	if (r->nofile)
		printf(", daemon under a descriptor limit of %lu", r->nofile);
	printf("\n");
	printf("images listed         %8ld of %lu%s\n", r->listed, r->images,
	       r->listed == (long)r->images ? "" : "  (NOT ALL SERVED: see the daemon's log with --keep)");
	printf("ready, first mount    %8.2f s   (making every backing file and map)\n", r->ready_first);
	printf("ready, later mount    %8.2f s\n", r->ready_later);
	printf("RSS, first mount      %8.1f MiB  descriptors %ld\n", r->rss_first / 1024.0, r->fds_first);
	printf("RSS, later mount      %8.1f MiB  descriptors %ld\n", r->rss_later / 1024.0, r->fds_later);
	printf("RSS idle, after ls -l %8.1f MiB  descriptors %ld, %ld threads\n", r->rss_idle / 1024.0,
	       r->fds_idle, r->threads_idle);
	printf("RSS per image         %8.0f B    (against a store of one image: %.1f MiB)\n", per,
	       r->rss_one / 1024.0);
	printf("ls -l MNT             %8.2f s   first, %.2f s again\n", r->ls1, r->ls2);
	printf("RSS, each image read  %8.1f MiB  (one 4 KiB read of each of %ld images, in %.2f s)\n",
	       r->rss_touched / 1024.0, r->touched, r->touch_s);
	printf("RSS %.0f s after it     %8.1f MiB  (%.0f B per image read, against idle)\n", r->touch_idle_s,
	       r->rss_touched_idle / 1024.0, scale_touched_per_image(r));
	if (r->loaded) {
		long bound = 128 + 2 * r->peak_threads;

		printf("load, %.0f s           %8.0f read + %.0f write IOPS over %u images (4K/64K/1M, QD 4 each)\n",
		       r->load_s, r->load_read_iops, r->load_write_iops, r->load_images);
		printf("RSS peak under load   %8.1f MiB  (%ld threads; bound 128 + 2 x threads = %ld MiB: %s)\n",
		       r->peak_rss / 1024.0, r->peak_threads, bound, r->peak_rss <= bound * 1024 ? "within" : "OVER");
		printf("RSS as the load ends  %8.1f MiB\n", r->rss_end / 1024.0);
		printf("RSS %.0f s after it     %8.1f MiB  (%+.1f MiB against idle)\n", r->after_s,
		       r->rss_after / 1024.0, (r->rss_after - r->rss_idle) / 1024.0);
	}
	if (r->ncmp) {
		printf("4K randread QD1       %8.0f IOPS on an image of this store, %.0f on a store of one\n",
		       scale_iops_median(r, r->iops_big), scale_iops_median(r, r->iops_one));
		printf("                      ratio %.3f (median of %u interleaved repeats:", scale_ratio_median(r), r->ncmp);
		for (unsigned i = 0; i < r->ncmp; i++)
			printf(" %.3f", r->iops_big[i] / r->iops_one[i]);
		printf(")\n");
	}
}

int scale_report_json(const struct scale_result *r)
{
	json_t *o = json_object(), *a = json_array(), *b = json_array();

	for (unsigned i = 0; i < r->ncmp; i++) {
		json_array_append_new(a, json_real(r->iops_big[i]));
		json_array_append_new(b, json_real(r->iops_one[i]));
	}
	json_object_set_new(o, "images", json_integer((json_int_t)r->images));
	json_object_set_new(o, "image_size", json_integer((json_int_t)r->size));
	json_object_set_new(o, "nofile", json_integer((json_int_t)r->nofile));
	json_object_set_new(o, "images_listed", json_integer(r->listed));
	json_object_set_new(o, "ready_first_s", bench_jreal(r->ready_first));
	json_object_set_new(o, "ready_later_s", bench_jreal(r->ready_later));
	json_object_set_new(o, "rss_first_kib", json_integer(r->rss_first));
	json_object_set_new(o, "fds_first", json_integer(r->fds_first));
	json_object_set_new(o, "rss_later_kib", json_integer(r->rss_later));
	json_object_set_new(o, "fds_later", json_integer(r->fds_later));
	json_object_set_new(o, "rss_idle_kib", json_integer(r->rss_idle));
	json_object_set_new(o, "fds_idle", json_integer(r->fds_idle));
	json_object_set_new(o, "rss_one_image_kib", json_integer(r->rss_one));
	json_object_set_new(o, "rss_per_image_bytes",
			    bench_jreal(r->images > 1 ? (double)(r->rss_idle - r->rss_one) * 1024.0 /
							 (double)(r->images - 1) : NAN));
	json_object_set_new(o, "ls_l_s", bench_jreal(r->ls1));
	json_object_set_new(o, "ls_l_again_s", bench_jreal(r->ls2));
	json_object_set_new(o, "images_touched", json_integer(r->touched));
	json_object_set_new(o, "touch_s", bench_jreal(r->touch_s));
	json_object_set_new(o, "rss_touched_kib", json_integer(r->rss_touched));
	json_object_set_new(o, "touch_idle_seconds", bench_jreal(r->touch_idle_s));
	json_object_set_new(o, "rss_touched_idle_kib", json_integer(r->rss_touched_idle));
	json_object_set_new(o, "rss_per_touched_image_bytes", bench_jreal(scale_touched_per_image(r)));
	if (r->loaded) {
		json_object_set_new(o, "load_seconds", bench_jreal(r->load_s));
		json_object_set_new(o, "load_read_iops", bench_jreal(r->load_read_iops));
		json_object_set_new(o, "load_write_iops", bench_jreal(r->load_write_iops));
		json_object_set_new(o, "rss_peak_kib", json_integer(r->peak_rss));
		json_object_set_new(o, "threads_peak", json_integer(r->peak_threads));
		json_object_set_new(o, "rss_load_end_kib", json_integer(r->rss_end));
		json_object_set_new(o, "after_seconds", bench_jreal(r->after_s));
		json_object_set_new(o, "rss_after_kib", json_integer(r->rss_after));
	}
	json_object_set_new(o, "qd1_iops_store", a);
	json_object_set_new(o, "qd1_iops_one", b);
	json_object_set_new(o, "qd1_ratio_median", bench_jreal(r->ncmp ? scale_ratio_median(r) : NAN));
	return bench_json_print(o);
}
