/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - unit tests of core/stats/metrics.c and sfs_escape_label.
 *
 * Label values escaped as the exposition format wants (and injectively,
 * bytes that are not UTF-8 as /xHH), counters and gauges of two images
 * with their values, latency buckets that count exactly the values below
 * each le (at and around the boundaries), +Inf equal to _count, exact
 * sums, and every family a single group with its HELP and TYPE first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/escape.h"
#include "stats/metrics.h"
#include "util/clock.h"
#include "stats/stats.h"

static void label_is(const char *name, const char *want)
{
	char buf[SFS_ESCAPED_SIZE(64)];

	cr_assert_eq(sfs_escape_label(name, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, want, "label of \"%s\"", name);
}

Test(escape_label, exposition_escapes_and_bytes_that_are_not_utf8)
{
	char small[4];

	label_is("vm1", "vm1");
	label_is("a\"b", "a\\\"b");
	label_is("a\\b", "a\\\\b");
	label_is("a\nb", "a\\nb");
	label_is("tab\there", "tab\there");
	label_is("d\xc3\xa9j\xc3\xa0", "d\xc3\xa9j\xc3\xa0");          /* UTF-8 kept */
	label_is("bad\xff", "bad/xff");
	label_is("\xc3(", "/xc3(");                                   /* a broken sequence */
	label_is("\xed\xa0\x80", "/xed/xa0/x80");                     /* a surrogate */
	cr_assert_eq(sfs_escape_label("abcd", small, sizeof(small)), -ENOSPC);
	cr_assert_str_eq(small, "abc");
	cr_assert_eq(sfs_escape_label("ab\xff", small, sizeof(small)), -ENOSPC);
	cr_assert_str_eq(small, "ab", "never half an escape");
}

/* The line of the exposition that starts with prefix, or NULL. */
static const char *line_of(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, n) == 0)
			return p + n;
	return NULL;
}

static void value_is(const char *text, const char *prefix, const char *want)
{
	const char *v = line_of(text, prefix);
	size_t n = strlen(want);

	cr_assert_not_null(v, "no line %s", prefix);
	cr_assert(strncmp(v, want, n) == 0 && v[n] == '\n', "%s: expected %s, got %.30s", prefix, want, v);
}

static struct sfs_stats_info info_of(const char *name, uint64_t size, uint32_t lss, uint32_t pss)
{
	return (struct sfs_stats_info){
		.name = name, .geom = { .size = size, .lss = lss, .pss = pss, .block_size = 1 << 20 },
		.prov = SFS_PROV_THIN, .zero_offload = true, .direct = true,
		.allocated_blocks = 3, .total_blocks = size >> 20,
	};
}

Test(metrics, counters_gauges_and_exact_buckets)
{
	struct sfs_stats *a = NULL, *b = NULL;
	struct sfs_stats_snap *s = malloc(sizeof(*s));
	struct sfs_stats_info ia = info_of("vm1", 1 << 30, 4096, 4096);
	struct sfs_stats_info ib = info_of("we\"ird", (3 << 20) - 512, 512, 4096);
	struct sfs_metrics *m = NULL;
	char *out = NULL;
	size_t len;

	cr_assert_not_null(s);
	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &a), 0);
	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &b), 0);
	/* reads at and around the first two boundaries, 512 ns and 1024 ns, and one of 20 s */
	sfs_stats_read(a, 0, 4096, 511);
	sfs_stats_read(a, 0, 4096, 512);
	sfs_stats_read(a, 0, 4096, 1000);
	sfs_stats_read(a, 0, 4096, 1023);
	sfs_stats_read(a, 0, 65536, 1024);
	sfs_stats_read(a, 0, 4096, 20000000000ull);
	sfs_stats_write(a, 0, 4096, 3000, true, false);
	sfs_stats_misaligned(a, SFS_OP_WRITE, 512, 512);
	sfs_stats_write(b, 512, 512, 700, false, true);
	cr_assert_eq(sfs_metrics_new(&m), 0);
	sfs_stats_snapshot(a, s);
	cr_assert_eq(sfs_metrics_add(m, s, &ia), 0);
	sfs_stats_snapshot(b, s);
	ib.allocated_blocks = 3;      /* the last block is partial: allocated bytes stop at the size */
	cr_assert_eq(sfs_metrics_add(m, s, &ib), 0);
	cr_assert_eq(sfs_metrics_render(m, &out, &len), 0);
	cr_assert_eq(strlen(out), len);

	value_is(out, "sectorfs_reads_total{image=\"vm1\"} ", "6");
	value_is(out, "sectorfs_read_bytes_total{image=\"vm1\"} ", "86016");
	value_is(out, "sectorfs_first_writes_total{image=\"vm1\"} ", "1");
	value_is(out, "sectorfs_misaligned_rejected_total{image=\"vm1\"} ", "1");
	value_is(out, "sectorfs_rmw_writes_total{image=\"we\\\"ird\"} ", "1");
	value_is(out, "sectorfs_requests_by_size_total{image=\"vm1\",size=\"4K\"} ", "6");
	value_is(out, "sectorfs_requests_by_size_total{image=\"vm1\",size=\"64K\"} ", "1");
	value_is(out, "sectorfs_requests_by_alignment_total{image=\"vm1\",alignment=\"512\"} ", "1");
	value_is(out, "sectorfs_size_bytes{image=\"vm1\"} ", "1073741824");
	value_is(out, "sectorfs_logical_sector_size_bytes{image=\"we\\\"ird\"} ", "512");
	value_is(out, "sectorfs_allocated_bytes{image=\"vm1\"} ", "3145728");
	value_is(out, "sectorfs_allocated_bytes{image=\"we\\\"ird\"} ", "3145216");
	value_is(out, "sectorfs_image_info{image=\"we\\\"ird\",sector=\"512e\",provisioning=\"thin\","
		 "zero_offload=\"true\",backing_io=\"direct\",zeroing=\"none\"} ", "1");
	/* le = 2^k ns counts the values below it: 511 | 512 1000 1023 | 1024 ... | 20 s */
	value_is(out, "sectorfs_read_latency_seconds_bucket{image=\"vm1\",le=\"0.000000512\"} ", "1");
	value_is(out, "sectorfs_read_latency_seconds_bucket{image=\"vm1\",le=\"0.000001024\"} ", "4");
	value_is(out, "sectorfs_read_latency_seconds_bucket{image=\"vm1\",le=\"0.000002048\"} ", "5");
	value_is(out, "sectorfs_read_latency_seconds_bucket{image=\"vm1\",le=\"17.179869184\"} ", "5");
	value_is(out, "sectorfs_read_latency_seconds_bucket{image=\"vm1\",le=\"+Inf\"} ", "6");
	value_is(out, "sectorfs_read_latency_seconds_count{image=\"vm1\"} ", "6");
	value_is(out, "sectorfs_read_latency_seconds_sum{image=\"vm1\"} ", "20.00000407");
	value_is(out, "sectorfs_write_first_latency_seconds_sum{image=\"vm1\"} ", "0.000003");
	value_is(out, "sectorfs_write_overwrite_latency_seconds_bucket{image=\"we\\\"ird\",le=\"0.000001024\"} ", "1");
	value_is(out, "sectorfs_flush_latency_seconds_count{image=\"vm1\"} ", "0");
	cr_assert_not_null(line_of(out, "sectorfs_daemon_start_time_seconds "));

	/* every family one group: HELP, TYPE, then only its own samples */
	{
		char fam[128] = "", *copy = strdup(out), *save = NULL;
		unsigned families = 0;

		cr_assert_not_null(copy);
		for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (strncmp(l, "# HELP ", 7) == 0) {
				char seen[140];
				unsigned n = 0;

				snprintf(fam, sizeof(fam), "%.*s", (int)strcspn(l + 7, " "), l + 7);
				snprintf(seen, sizeof(seen), "# HELP %s ", fam);
				for (const char *p = strstr(out, seen); p; p = strstr(p + 1, seen))
					n++;
				cr_assert_eq(n, 1, "%s: %u groups", fam, n);
				families++;
			} else if (strncmp(l, "# TYPE ", 7) == 0) {
				cr_assert(strncmp(l + 7, fam, strlen(fam)) == 0, "TYPE of another family: %s", l);
			} else {
				cr_assert(strncmp(l, fam, strlen(fam)) == 0, "a sample of another family in %s: %s", fam, l);
			}
		}
		cr_assert_eq(families, 34);
		free(copy);
	}
	free(out);
	sfs_metrics_free(m);
	sfs_stats_free(a);
	sfs_stats_free(b);
	free(s);
}

Test(metrics, empty_collection_renders_the_families)
{
	struct sfs_metrics *m = NULL;
	char *out = NULL;
	size_t len;

	cr_assert_eq(sfs_metrics_new(&m), 0);
	cr_assert_eq(sfs_metrics_render(m, &out, &len), 0);
	cr_assert_not_null(strstr(out, "# TYPE sectorfs_reads_total counter\n"));
	cr_assert_not_null(strstr(out, "# TYPE sectorfs_read_latency_seconds histogram\n"));
	cr_assert_null(strstr(out, "image="), "no image, no sample:\n%s", out);
	free(out);
	sfs_metrics_free(m);
	sfs_metrics_free(NULL);
}

Test(metrics, image_info_says_whether_zero_offload_is_in_force)
{
	static const struct {
		bool on;
		int fallback;
		const char *want;
	} cases[] = { { true, 0, "true" }, { false, 0, "false" }, { true, EOPNOTSUPP, "fallback" } };
	struct sfs_stats_snap *s = calloc(1, sizeof(*s));

	cr_assert_not_null(s);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sfs_stats_info info = info_of("d", 1 << 20, 512, 512);
		struct sfs_metrics *m = NULL;
		char *out = NULL, want[256];
		size_t len;

		info.zero_offload = cases[i].on;
		info.zero_offload_fallback = cases[i].fallback;
		cr_assert_eq(sfs_metrics_new(&m), 0);
		cr_assert_eq(sfs_metrics_add(m, s, &info), 0);
		cr_assert_eq(sfs_metrics_render(m, &out, &len), 0);
		snprintf(want, sizeof(want), "sectorfs_image_info{image=\"d\",sector=\"512n\",provisioning=\"thin\","
			 "zero_offload=\"%s\",backing_io=\"direct\",zeroing=\"none\"} ", cases[i].want);
		value_is(out, want, "1");
		free(out);
		sfs_metrics_free(m);
	}
	free(s);
}
