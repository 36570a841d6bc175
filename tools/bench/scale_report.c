/* SPDX-License-Identifier: MIT */
/*
 * scale_report.c - the figures of sectorfs-bench scale, as text for
 * people or as one JSON object (--json), and the medians of the per-I/O
 * comparison.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "median.h"
#include "scale.h"
#include "testbed.h"
#include "units.h"


/* The median of the ncmp IOPS of v. */
static double scale_iops_median(const struct scale *sc, const double *v)
{
	double s[MAX_REPEAT];

	memcpy(s, v, sc->ncmp * sizeof(*v));
	return bench_median(s, sc->ncmp);
}

/* The median of the per-repeat ratios, the store's IOPS over the store of one's. */
static double scale_ratio_median(const struct scale *sc)
{
	double r[MAX_REPEAT];

	for (unsigned i = 0; i < sc->ncmp; i++)
		r[i] = sc->iops_big[i] / sc->iops_one[i];
	return bench_median(r, sc->ncmp);
}

void scale_report_text(const struct scale *sc)
{
	double per = sc->images > 1 ? (double)(sc->rss_idle - sc->rss_one) * 1024.0 / (double)(sc->images - 1) : 0;
	char size[32];

	sfs_format_human(sc->size, size, sizeof(size));
	printf("store: %lu thin 4kn images of %s", sc->images, size);
	if (sc->nofile)
		printf(", daemon under a descriptor limit of %lu", sc->nofile);
	printf("\n");
	printf("images listed         %8ld of %lu%s\n", sc->listed, sc->images,
	       sc->listed == (long)sc->images ? "" : "  (NOT ALL SERVED: see the daemon's log with --keep)");
	printf("ready, first mount    %8.2f s   (making every backing file and map)\n", sc->ready_first);
	printf("ready, later mount    %8.2f s\n", sc->ready_later);
	printf("RSS, first mount      %8.1f MiB  descriptors %ld\n", sc->rss_first / 1024.0, sc->fds_first);
	printf("RSS, later mount      %8.1f MiB  descriptors %ld\n", sc->rss_later / 1024.0, sc->fds_later);
	printf("RSS idle, after ls -l %8.1f MiB  descriptors %ld, %ld threads\n", sc->rss_idle / 1024.0,
	       sc->fds_idle, sc->threads_idle);
	printf("RSS per image         %8.0f B    (against a store of one image: %.1f MiB)\n", per,
	       sc->rss_one / 1024.0);
	printf("ls -l MNT             %8.2f s   first, %.2f s again\n", sc->ls1, sc->ls2);
	if (sc->have_fio && sc->load_s > 0) {
		long bound = 128 + 2 * sc->peak_threads;

		printf("load, %.0f s           %8.0f read + %.0f write IOPS over %d images (4K/64K/1M, QD 4 each)\n",
		       sc->load_s, sc->load_read_iops, sc->load_write_iops,
		       sc->images < LOAD_IMAGES ? (int)sc->images : LOAD_IMAGES);
		printf("RSS peak under load   %8.1f MiB  (%ld threads; bound 128 + 2 x threads = %ld MiB: %s)\n",
		       sc->peak_rss / 1024.0, sc->peak_threads, bound, sc->peak_rss <= bound * 1024 ? "within" : "OVER");
		printf("RSS as the load ends  %8.1f MiB\n", sc->rss_end / 1024.0);
		printf("RSS %.0f s after it     %8.1f MiB  (%+.1f MiB against idle)\n", sc->after_s,
		       sc->rss_after / 1024.0, (sc->rss_after - sc->rss_idle) / 1024.0);
	}
	if (sc->ncmp) {
		printf("4K randread QD1       %8.0f IOPS on an image of this store, %.0f on a store of one\n",
		       scale_iops_median(sc, sc->iops_big), scale_iops_median(sc, sc->iops_one));
		printf("                      ratio %.3f (median of %u interleaved repeats:", scale_ratio_median(sc), sc->ncmp);
		for (unsigned i = 0; i < sc->ncmp; i++)
			printf(" %.3f", sc->iops_big[i] / sc->iops_one[i]);
		printf(")\n");
	}
}

int scale_report_json(const struct scale *sc)
{
	json_t *o = json_object(), *a = json_array(), *b = json_array();

	for (unsigned i = 0; i < sc->ncmp; i++) {
		json_array_append_new(a, json_real(sc->iops_big[i]));
		json_array_append_new(b, json_real(sc->iops_one[i]));
	}
	json_object_set_new(o, "images", json_integer((json_int_t)sc->images));
	json_object_set_new(o, "image_size", json_integer((json_int_t)sc->size));
	json_object_set_new(o, "nofile", json_integer((json_int_t)sc->nofile));
	json_object_set_new(o, "images_listed", json_integer(sc->listed));
	json_object_set_new(o, "ready_first_s", bench_jreal(sc->ready_first));
	json_object_set_new(o, "ready_later_s", bench_jreal(sc->ready_later));
	json_object_set_new(o, "rss_first_kib", json_integer(sc->rss_first));
	json_object_set_new(o, "fds_first", json_integer(sc->fds_first));
	json_object_set_new(o, "rss_later_kib", json_integer(sc->rss_later));
	json_object_set_new(o, "fds_later", json_integer(sc->fds_later));
	json_object_set_new(o, "rss_idle_kib", json_integer(sc->rss_idle));
	json_object_set_new(o, "fds_idle", json_integer(sc->fds_idle));
	json_object_set_new(o, "rss_one_image_kib", json_integer(sc->rss_one));
	json_object_set_new(o, "rss_per_image_bytes",
			    bench_jreal(sc->images > 1 ? (double)(sc->rss_idle - sc->rss_one) * 1024.0 /
							 (double)(sc->images - 1) : NAN));
	json_object_set_new(o, "ls_l_s", bench_jreal(sc->ls1));
	json_object_set_new(o, "ls_l_again_s", bench_jreal(sc->ls2));
	if (sc->have_fio && sc->load_s > 0) {
		json_object_set_new(o, "load_seconds", bench_jreal(sc->load_s));
		json_object_set_new(o, "load_read_iops", bench_jreal(sc->load_read_iops));
		json_object_set_new(o, "load_write_iops", bench_jreal(sc->load_write_iops));
		json_object_set_new(o, "rss_peak_kib", json_integer(sc->peak_rss));
		json_object_set_new(o, "threads_peak", json_integer(sc->peak_threads));
		json_object_set_new(o, "rss_load_end_kib", json_integer(sc->rss_end));
		json_object_set_new(o, "after_seconds", bench_jreal(sc->after_s));
		json_object_set_new(o, "rss_after_kib", json_integer(sc->rss_after));
	}
	json_object_set_new(o, "qd1_iops_store", a);
	json_object_set_new(o, "qd1_iops_one", b);
	json_object_set_new(o, "qd1_ratio_median", bench_jreal(sc->ncmp ? scale_ratio_median(sc) : NAN));
	return bench_json_print(o);
}
