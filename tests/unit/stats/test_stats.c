/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - unit tests of core/stats/stats.c, core/stats/render.c and
 * core/stats/parse.c.
 *
 * Exact counters after known I/O sequences, the size and alignment
 * histograms at their edges, the latency histogram's bucket arithmetic
 * over the whole range and its percentiles against sorted samples,
 * exact totals from concurrent recorders, reset, and both renderings
 * (JSON parsed back with jansson, text checked line by line), and the
 * JSON read back by core's parser (core/stats/parse.c): the counters and the
 * recent lists.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "util/clock.h"
#include "util/histogram.h"
#include "stats/stats.h"

#define MiB (1024ull * 1024)

static struct sfs_stats *fresh(void)
{
	struct sfs_stats *st = NULL;

	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &st), 0);
	cr_assert_not_null(st);
	return st;
}

/* Deterministic pseudo-random numbers (xorshift64). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* ---- counters ---- */

Test(stats, counts_after_known_sequence)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;

	sfs_stats_read(st, 0, 4096, 1000);
	sfs_stats_read(st, 8192, 65536, 2000);
	sfs_stats_write(st, 0, 4096, 3000, true, false);
	sfs_stats_write(st, 4096, 512, 4000, false, true);
	sfs_stats_write(st, 1 * MiB, 1 * MiB, 5000, true, false);
	sfs_stats_misaligned(st, SFS_OP_WRITE, 100, 512);
	sfs_stats_misaligned(st, SFS_OP_WRITE, 512, 100);
	sfs_stats_out_of_range(st, SFS_OP_WRITE, 0, 4096);
	sfs_stats_flush(st, 7000);
	sfs_stats_flush(st, 9000);
	sfs_stats_discard(st, 2 * MiB);
	sfs_stats_write_zeroes(st, 3 * MiB);
	sfs_stats_write_zeroes(st, 4096);
	sfs_stats_zeroed(st, 1 * MiB - 4096);
	sfs_stats_snapshot(st, &s);

	cr_assert_eq(s.reads, 2);
	cr_assert_eq(s.bytes_read, 4096 + 65536);
	cr_assert_eq(s.writes, 3);
	cr_assert_eq(s.bytes_written, 4096 + 512 + MiB);
	cr_assert_eq(s.first_writes, 2);
	cr_assert_eq(s.overwrites, 1);
	cr_assert_eq(s.rmw_writes, 1);
	cr_assert_eq(s.misaligned_rejected, 2);
	cr_assert_eq(s.out_of_range, 1);
	cr_assert_eq(s.flushes, 2);
	cr_assert_eq(s.discards, 1);
	cr_assert_eq(s.discard_bytes, 2 * MiB);
	cr_assert_eq(s.write_zeroes, 2);
	cr_assert_eq(s.write_zeroes_bytes, 3 * MiB + 4096);
	cr_assert_eq(s.zeroed_bytes, MiB - 4096);

	/* Size histogram: accepted reads and writes only, misaligned ones not. */
	uint64_t size_total = 0;

	for (unsigned i = 0; i < SFS_SIZE_NBUCKET; i++)
		size_total += s.size_hist[i];
	cr_assert_eq(size_total, 5);
	cr_assert_eq(s.size_hist[sfs_stats_size_bucket(4096)], 2);
	cr_assert_eq(s.size_hist[0], 1);
	cr_assert_eq(s.size_hist[SFS_SIZE_NBUCKET - 1], 1);

	/* Alignment histogram: every I/O, the refused ones too. */
	cr_assert_eq(s.align_hist[SFS_ALIGN_4K], 4);
	cr_assert_eq(s.align_hist[SFS_ALIGN_512], 3);

	/* Latency classes. */
	cr_assert_eq(s.lat[SFS_LAT_READ].count, 2);
	cr_assert_eq(s.lat[SFS_LAT_READ].sum_ns, 3000);
	cr_assert_eq(s.lat[SFS_LAT_READ].max_ns, 2000);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_FIRST].count, 2);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_FIRST].sum_ns, 8000);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_FIRST].max_ns, 5000);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].count, 1);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].max_ns, 4000);
	cr_assert_eq(s.lat[SFS_LAT_FLUSH].count, 2);
	cr_assert_eq(s.lat[SFS_LAT_FLUSH].sum_ns, 16000);
	cr_assert_eq(s.lat[SFS_LAT_FLUSH].max_ns, 9000);
	sfs_stats_free(st);
}

Test(stats, free_null)
{
	sfs_stats_free(NULL);
}

/* ---- size histogram ---- */

Test(stats, size_bucket_edges)
{
	cr_assert_eq(sfs_stats_size_bucket(0), 0);
	cr_assert_eq(sfs_stats_size_bucket(1), 0);
	cr_assert_eq(sfs_stats_size_bucket(511), 0);
	cr_assert_eq(sfs_stats_size_bucket(512), 0);
	cr_assert_eq(sfs_stats_size_bucket(1023), 0);
	cr_assert_eq(sfs_stats_size_bucket(1024), 1);
	cr_assert_eq(sfs_stats_size_bucket(2047), 1);
	cr_assert_eq(sfs_stats_size_bucket(2048), 2);
	cr_assert_eq(sfs_stats_size_bucket(4096), 3);
	cr_assert_eq(sfs_stats_size_bucket(8191), 3);
	cr_assert_eq(sfs_stats_size_bucket(512 * 1024), 10);
	cr_assert_eq(sfs_stats_size_bucket(MiB - 1), 10);
	cr_assert_eq(sfs_stats_size_bucket(MiB), 11);
	cr_assert_eq(sfs_stats_size_bucket(8 * MiB), 11);
	cr_assert_eq(sfs_stats_size_bucket(UINT64_MAX), SFS_SIZE_NBUCKET - 1);
	for (unsigned i = 1; i < SFS_SIZE_NBUCKET - 1; i++) {
		cr_assert_eq(sfs_stats_size_bucket(512ull << i), i);
		cr_assert_eq(sfs_stats_size_bucket((512ull << (i + 1)) - 1), i);
	}
}

Test(stats, size_histogram_from_recorded_io)
{
	static const uint64_t lens[] = { 512, 1023, 1024, MiB - 1, MiB, 8 * MiB };
	static const unsigned want[] = { 0, 0, 1, 10, 11, 11 };
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;
	uint64_t expect[SFS_SIZE_NBUCKET] = { 0 };

	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		sfs_stats_write(st, 0, lens[i], 1, false, false);
		sfs_stats_read(st, 0, lens[i], 1);
		expect[want[i]] += 2;
	}
	sfs_stats_snapshot(st, &s);
	for (unsigned i = 0; i < SFS_SIZE_NBUCKET; i++)
		cr_assert_eq(s.size_hist[i], expect[i], "bucket %u: %lu != %lu", i,
			     (unsigned long)s.size_hist[i], (unsigned long)expect[i]);
	sfs_stats_free(st);
}

/* ---- alignment histogram ---- */

Test(stats, alignment_classes_from_recorded_io)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;

	sfs_stats_read(st, 0, 4096, 1);            /* 4K */
	sfs_stats_read(st, 1 * MiB, 64 * 1024, 1); /* >= 4K */
	sfs_stats_read(st, 512, 512, 1);           /* 512 */
	sfs_stats_write(st, 1024, 1024, 1, true, false);  /* 1K */
	sfs_stats_write(st, 3072, 1024, 1, false, false); /* 1K */
	sfs_stats_write(st, 2048, 4096, 1, false, true);  /* 2K: offset decides */
	sfs_stats_write(st, 4096, 6144, 1, false, true);  /* 2K: length decides */
	sfs_stats_misaligned(st, SFS_OP_WRITE, 100, 4096);       /* below 512 counts as 512 */
	sfs_stats_misaligned(st, SFS_OP_WRITE, 8192, 4095);
	sfs_stats_snapshot(st, &s);

	cr_assert_eq(s.align_hist[SFS_ALIGN_4K], 2);
	cr_assert_eq(s.align_hist[SFS_ALIGN_2K], 2);
	cr_assert_eq(s.align_hist[SFS_ALIGN_1K], 2);
	cr_assert_eq(s.align_hist[SFS_ALIGN_512], 3);
	cr_assert_eq(s.reads + s.writes, 7);
	sfs_stats_free(st);
}

/* ---- latency histogram ---- */

Test(stats, lat_bucket_round_trip_and_monotonic)
{
	uint64_t prev_low = 0;

	for (unsigned b = 0; b < SFS_LAT_NBUCKET; b++) {
		uint64_t low = sfs_stats_lat_bucket_low(b), next = sfs_stats_lat_bucket_low(b + 1);

		cr_assert(b == 0 || low > prev_low, "low(%u) not increasing", b);
		cr_assert_eq(sfs_stats_lat_bucket(low), b, "bucket(low(%u)) = %u", b,
			     sfs_stats_lat_bucket(low));
		if (b + 1 < SFS_LAT_NBUCKET)
			cr_assert_eq(sfs_stats_lat_bucket(next - 1), b, "last value of %u", b);
		/* Width at most 1/16 of the lower bound: the 1/32 error bound. */
		if (b >= 2 * SFS_LAT_SUB)
			cr_assert_leq((next - low) * SFS_LAT_SUB, low, "bucket %u too wide", b);
		else
			cr_assert_eq(next - low, 1, "bucket %u not exact", b);
		prev_low = low;
	}
	/* The histogram covers at least 2^40 ns; larger values go in the last bucket. */
	cr_assert_lt(sfs_stats_lat_bucket(1ull << 40), SFS_LAT_NBUCKET - 1);
	cr_assert_eq(sfs_stats_lat_bucket(sfs_stats_lat_bucket_low(SFS_LAT_NBUCKET)),
		     SFS_LAT_NBUCKET - 1);
	cr_assert_eq(sfs_stats_lat_bucket(UINT64_MAX), SFS_LAT_NBUCKET - 1);

	/* Monotonic over the whole 64-bit range: edges of every power of two
	 * and random values in between, in increasing order. */
	uint64_t seed = 42, prev_b = 0;

	for (unsigned k = 0; k < 64; k++) {
		uint64_t base = 1ull << k;
		uint64_t v[5] = { base, base + 1, base + rnd(&seed) % base, 2 * base - 2, 2 * base - 1 };

		qsort(v, 5, sizeof(v[0]), cmp_u64);
		for (unsigned i = 0; i < 5; i++) {
			unsigned b = sfs_stats_lat_bucket(v[i]);

			cr_assert_geq(b, prev_b, "bucket(%lu) = %u < %lu", (unsigned long)v[i], b,
				      (unsigned long)prev_b);
			cr_assert_leq(sfs_stats_lat_bucket_low(b), v[i]);
			if (b < SFS_LAT_NBUCKET - 1)
				cr_assert_lt(v[i], sfs_stats_lat_bucket_low(b + 1));
			prev_b = b;
		}
	}
}

Test(stats, percentile_empty_and_extremes)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;

	sfs_stats_snapshot(st, &s);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, 0.5), 0);

	sfs_stats_read(st, 0, 4096, 7);
	sfs_stats_read(st, 0, 4096, 1000003);
	sfs_stats_flush(st, 1ull << 50);  /* beyond the histogram: reported as the max */
	sfs_stats_snapshot(st, &s);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, 0), 7);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, -1), 7);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, 0.5), 7);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, 1), 1000003);  /* clamped to the max */
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_READ, 2), 1000003);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_FLUSH, 0.5), 1ull << 50);
	cr_assert_eq(sfs_stats_percentile(&s, SFS_LAT_WRITE_FIRST, 0.99), 0);
	sfs_stats_free(st);
}

/* Record n latencies as reads and check p50..p99.9 against the sorted samples. */
static void check_percentiles(uint64_t *v, size_t n)
{
	static const double qs[] = { 0.01, 0.25, 0.50, 0.90, 0.99, 0.999, 1.0 };
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		sfs_stats_read(st, 0, 4096, v[i]);
		sum += v[i];
	}
	sfs_stats_snapshot(st, &s);
	qsort(v, n, sizeof(v[0]), cmp_u64);
	cr_assert_eq(s.lat[SFS_LAT_READ].count, n);
	cr_assert_eq(s.lat[SFS_LAT_READ].sum_ns, sum);
	cr_assert_eq(s.lat[SFS_LAT_READ].max_ns, v[n - 1]);
	for (unsigned i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		/* Nearest rank: the smallest sample with at least q of them at or below it. */
		uint64_t rank = (uint64_t)(qs[i] * n);

		if ((double)rank < qs[i] * n)
			rank++;
		uint64_t want = v[rank - 1];
		uint64_t got = sfs_stats_percentile(&s, SFS_LAT_READ, qs[i]);
		uint64_t diff = got > want ? got - want : want - got;

		/* Documented bound: half a bucket, 1/32 of the value (well inside 10%). */
		cr_assert_leq(diff * 32, want, "p%g: got %lu, true %lu", qs[i] * 100,
			      (unsigned long)got, (unsigned long)want);
	}
	sfs_stats_free(st);
}

Test(stats, percentiles_uniform)
{
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof(*v));

	cr_assert_not_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (i + 1) * 1000;  /* 1 .. 100000 us */
	check_percentiles(v, n);
	free(v);
}

Test(stats, percentiles_bimodal)
{
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof(*v)), seed = 7;

	cr_assert_not_null(v);
	/* 90% fast hits around 50 us, 10% slow ones around 5 ms, interleaved. */
	for (size_t i = 0; i < n; i++)
		v[i] = i % 10 == 9 ? 4000000 + rnd(&seed) % 2000000 : 40000 + rnd(&seed) % 20000;
	check_percentiles(v, n);
	free(v);
}

/* ---- concurrency ---- */

#define NTHREAD 4
#define PER_THREAD 100000

static void *recorder(void *arg)
{
	struct sfs_stats *st = arg;

	for (unsigned i = 0; i < PER_THREAD; i++) {
		sfs_stats_read(st, (uint64_t)i * 4096, 4096, i % 1000 + 1);
		sfs_stats_write(st, (uint64_t)i * 512, 512, i + 1, i % 2 == 0, i % 4 == 1);
	}
	return NULL;
}

Test(stats, concurrent_recorders_give_exact_totals)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;
	pthread_t t[NTHREAD];
	uint64_t prev = 0, reads_sum = 0, writes_sum = 0;

	for (unsigned i = 0; i < NTHREAD; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, recorder, st), 0);
	/* Snapshots taken meanwhile never go backwards. */
	for (unsigned i = 0; i < 50; i++) {
		sfs_stats_snapshot(st, &s);
		cr_assert_geq(s.reads, prev);
		prev = s.reads;
	}
	for (unsigned i = 0; i < NTHREAD; i++)
		pthread_join(t[i], NULL);
	sfs_stats_snapshot(st, &s);

	for (uint64_t i = 0; i < PER_THREAD; i++) {
		reads_sum += i % 1000 + 1;
		writes_sum += i + 1;
	}
	const uint64_t n = (uint64_t)NTHREAD * PER_THREAD;

	cr_assert_eq(s.reads, n);
	cr_assert_eq(s.writes, n);
	cr_assert_eq(s.bytes_read, n * 4096);
	cr_assert_eq(s.bytes_written, n * 512);
	cr_assert_eq(s.first_writes, n / 2);
	cr_assert_eq(s.overwrites, n / 2);
	cr_assert_eq(s.rmw_writes, n / 4);
	cr_assert_eq(s.size_hist[0], n);
	cr_assert_eq(s.size_hist[3], n);
	cr_assert_eq(s.align_hist[SFS_ALIGN_4K] + s.align_hist[SFS_ALIGN_2K] +
		     s.align_hist[SFS_ALIGN_1K] + s.align_hist[SFS_ALIGN_512], 2 * n);
	cr_assert_eq(s.lat[SFS_LAT_READ].count, n);
	cr_assert_eq(s.lat[SFS_LAT_READ].sum_ns, NTHREAD * reads_sum);
	cr_assert_eq(s.lat[SFS_LAT_READ].max_ns, 1000);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_FIRST].count + s.lat[SFS_LAT_WRITE_OVERWRITE].count, n);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_FIRST].sum_ns + s.lat[SFS_LAT_WRITE_OVERWRITE].sum_ns,
		     NTHREAD * writes_sum);
	cr_assert_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].max_ns, PER_THREAD);

	uint64_t hist_total = 0;

	for (unsigned b = 0; b < SFS_LAT_NBUCKET; b++)
		hist_total += s.lat[SFS_LAT_READ].hist[b];
	cr_assert_eq(hist_total, n);
	sfs_stats_free(st);
}

/* ---- reset ---- */

Test(stats, reset_zeroes_everything_and_restarts_clock)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s, zero;
	struct timespec nap = { 0, 50 * 1000 * 1000 };

	sfs_stats_read(st, 0, 4096, 100);
	sfs_stats_write(st, 512, 512, 200, true, true);
	sfs_stats_misaligned(st, SFS_OP_WRITE, 1, 1);
	sfs_stats_out_of_range(st, SFS_OP_WRITE, 0, 4096);
	sfs_stats_flush(st, 300);
	sfs_stats_discard(st, 4096);
	sfs_stats_write_zeroes(st, 4096);
	sfs_stats_zeroed(st, 4096);
	nanosleep(&nap, NULL);
	sfs_stats_snapshot(st, &s);
	cr_assert_geq(s.elapsed_ns, 50 * 1000 * 1000);

	sfs_stats_reset(st);
	sfs_stats_snapshot(st, &s);
	cr_assert_lt(s.elapsed_ns, 50 * 1000 * 1000);
	memset(&zero, 0, sizeof(zero));
	zero.elapsed_ns = s.elapsed_ns;
	zero.reset_generation = s.reset_generation;
	zero.daemon_start = s.daemon_start;
	zero.daemon_pid = s.daemon_pid;
	cr_assert(memcmp(&s, &zero, sizeof(s)) == 0, "a counter survived the reset");

	sfs_stats_read(st, 0, 4096, 100);
	sfs_stats_snapshot(st, &s);
	cr_assert_eq(s.reads, 1);
	cr_assert_eq(s.lat[SFS_LAT_READ].max_ns, 100);
	sfs_stats_free(st);
}

Test(stats, reset_generation_is_new_at_every_creation_and_reset)
{
	struct sfs_stats *a = fresh(), *b = fresh();
	struct sfs_stats_snap sa, sb, again;

	sfs_stats_snapshot(a, &sa);
	sfs_stats_snapshot(b, &sb);
	cr_assert_neq(sa.reset_generation, 0);
	cr_assert_neq(sa.reset_generation, sb.reset_generation, "two stats share a generation");
	sfs_stats_write(a, 0, 4096, 10, true, false);
	sfs_stats_snapshot(a, &again);
	cr_assert_eq(again.reset_generation, sa.reset_generation, "I/O changed the generation");

	sfs_stats_reset(a);
	sfs_stats_snapshot(a, &again);
	cr_assert_gt(again.reset_generation, sa.reset_generation);
	cr_assert_gt(again.reset_generation, sb.reset_generation, "a reset reused a generation");
	sfs_stats_free(a);

	/* Stats made again (an image loaded again under its name) start a new generation too. */
	a = fresh();
	sfs_stats_snapshot(a, &sa);
	cr_assert_gt(sa.reset_generation, again.reset_generation);
	sfs_stats_free(a);
	sfs_stats_free(b);
}

Test(stats, origin_is_this_process_and_fixed)
{
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s1, s2;
	uint64_t start, pid;
	time_t now = time(NULL);

	sfs_stats_origin(&start, &pid);
	cr_assert_eq(pid, (uint64_t)getpid());
	cr_assert_leq(start, (uint64_t)now);
	cr_assert_gt(start, (uint64_t)now - 3600, "start %lu, now %ld", (unsigned long)start, (long)now);
	sfs_stats_snapshot(st, &s1);
	sfs_stats_reset(st);
	sfs_stats_snapshot(st, &s2);
	cr_assert_eq(s1.daemon_start, start);
	cr_assert_eq(s1.daemon_pid, pid);
	cr_assert_eq(s2.daemon_start, start, "a reset changed the process identity");
	cr_assert_eq(s2.daemon_pid, pid);
	sfs_stats_free(st);
}

Test(stats, command_reset_and_refusals)
{
	static const char *const good[] = { "reset", "reset\n", "reset \n", "reset\n\n", "reset  " };
	static const char *const bad[] = { "", "\n", "foo", "resetx", "RESET", "reset reset", " reset",
					   "rese", "0" };
	struct sfs_stats *st = fresh();
	struct sfs_stats_snap s;
	uint64_t gen;

	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		sfs_stats_write(st, 0, 4096, 10, true, false);
		sfs_stats_snapshot(st, &s);
		gen = s.reset_generation;
		cr_assert_eq(sfs_stats_command(st, good[i], strlen(good[i])), 0, "'%s' refused", good[i]);
		sfs_stats_snapshot(st, &s);
		cr_assert_eq(s.writes, 0, "'%s' did not reset", good[i]);
		cr_assert_gt(s.reset_generation, gen);
	}
	sfs_stats_write(st, 0, 4096, 10, true, false);
	sfs_stats_snapshot(st, &s);
	gen = s.reset_generation;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(sfs_stats_command(st, bad[i], strlen(bad[i])), -EINVAL, "'%s' accepted", bad[i]);
		sfs_stats_snapshot(st, &s);
		cr_assert_eq(s.writes, 1, "'%s' changed the counters", bad[i]);
		cr_assert_eq(s.reset_generation, gen, "'%s' changed the generation", bad[i]);
	}
	/* The length counts, not a NUL: "reset" followed by more bytes is refused. */
	cr_assert_eq(sfs_stats_command(st, "reset\0x", 7), -EINVAL);
	sfs_stats_free(st);
}

/* Recording and resetting while another thread snapshots: two snapshots of
 * one generation must subtract without a counter going down. */
struct race {
	struct sfs_stats *st;
	volatile int stop;
};

static void *race_recorder(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		sfs_stats_write(r->st, 0, 4096, 1000, false, false);
		sfs_stats_read(r->st, 0, 512, 500);
	}
	return NULL;
}

static void *race_resetter(void *arg)
{
	struct race *r = arg;
	struct timespec nap = { 0, 20 * 1000 };

	while (!r->stop) {
		sfs_stats_reset(r->st);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* What went wrong between two snapshots of one generation, or NULL. */
static const char *went_down(const struct sfs_stats_snap *p, const struct sfs_stats_snap *c)
{
	unsigned b = sfs_stats_lat_bucket(500);

	if (c->writes < p->writes || c->bytes_written < p->bytes_written)
		return "writes went down";
	if (c->reads < p->reads || c->lat[SFS_LAT_READ].hist[b] < p->lat[SFS_LAT_READ].hist[b])
		return "reads went down";
	if (c->size_hist[3] < p->size_hist[3] ||
	    c->lat[SFS_LAT_WRITE_OVERWRITE].count < p->lat[SFS_LAT_WRITE_OVERWRITE].count)
		return "a histogram went down";
	if (c->elapsed_ns < p->elapsed_ns)
		return "the elapsed time went down";
	return NULL;
}

Test(stats, snapshots_never_mix_generations)
{
	struct race r = { .st = fresh() };
	static struct sfs_stats_snap prev, cur;
	const char *wrong = NULL;
	pthread_t t[3];
	unsigned same = 0, changed = 0;

	cr_assert_eq(pthread_create(&t[0], NULL, race_recorder, &r), 0);
	cr_assert_eq(pthread_create(&t[1], NULL, race_recorder, &r), 0);
	cr_assert_eq(pthread_create(&t[2], NULL, race_resetter, &r), 0);
	sfs_stats_snapshot(r.st, &prev);
	for (unsigned i = 0; i < 20000 && !wrong; i++) {
		sfs_stats_snapshot(r.st, &cur);
		if (cur.reset_generation == prev.reset_generation) {
			same++;
			wrong = went_down(&prev, &cur);
		} else {
			changed++;
			if (cur.reset_generation < prev.reset_generation)
				wrong = "the generation went down";
		}
		prev = cur;
	}
	r.stop = 1;
	for (unsigned i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	sfs_stats_free(r.st);
	cr_assert_null(wrong, "%s (generation %lu, after %u snapshots of one generation)", wrong,
		       (unsigned long)cur.reset_generation, same);
	cr_assert_gt(same, 0);
	cr_assert_gt(changed, 0, "no reset happened during the test");
}

/* ---- rendering ---- */

static struct sfs_stats_info test_info(void)
{
	struct sfs_stats_info info = {
		.name = "disk0",
		.geom = { .size = 8 * MiB, .lss = 4096, .pss = 4096, .block_size = MiB },
		.prov = SFS_PROV_THIN,
		.zero_offload = true,
		.allocated_blocks = 3,
		.total_blocks = 8,
	};

	return info;
}

/* A snapshot with some of everything, 2 seconds long. */
static void sample_snap(struct sfs_stats_snap *s, bool misaligned)
{
	struct sfs_stats *st = fresh();

	for (unsigned i = 0; i < 100; i++) {
		sfs_stats_read(st, i * 4096ull, 4096, 20000 + i * 100);
		sfs_stats_write(st, i * 65536ull, 65536, 50000 + i * 1000, i < 10, false);
	}
	sfs_stats_flush(st, 2000000);
	sfs_stats_discard(st, MiB);
	sfs_stats_zeroed(st, 4 * MiB);
	if (misaligned) {
		sfs_stats_misaligned(st, SFS_OP_WRITE, 512, 4096);
		sfs_stats_write(st, 1024, 1024, 50000, false, true);
	}
	sfs_stats_snapshot(st, s);
	s->elapsed_ns = 2000000000ull;
	s->reset_generation = 42;
	s->daemon_start = 1700000000;   /* 2023-11-14 22:13:20 UTC */
	s->daemon_pid = 4242;
	sfs_stats_free(st);
}

/*
 * The stats_render suite's fixture: test_info(), an empty snapshot, and the
 * output of the last render (freed by render and at the end).
 */
static struct {
	struct sfs_stats_info info;
	struct sfs_stats_snap s;
	char *out;
	size_t len;
} rd;

static void render_init(void)
{
	rd.info = test_info();
	memset(&rd.s, 0, sizeof(rd.s));
	rd.out = NULL;
	rd.len = 0;
}

static void render_fini(void)
{
	free(rd.out);
	rd.out = NULL;
}

TestSuite(stats_render, .init = render_init, .fini = render_fini);

/* Render rd.s and rd.info as JSON (or text) into rd.out and rd.len; it must succeed. */
static void render(bool json)
{
	free(rd.out);
	rd.out = NULL;
	cr_assert_eq((json ? sfs_stats_render_json : sfs_stats_render_text)(&rd.s, &rd.info, &rd.out, &rd.len),
		     0, "render %s", json ? "json" : "text");
}

/* The histogram NAME of root: exactly n keys, keys[0..n-1], each an integer. */
static json_t *histogram_keys(json_t *root, const char *name, const char *const *keys, size_t n)
{
	json_t *v = json_object_get(root, name);

	cr_assert_eq(json_object_size(v), n, "%s has %zu keys", name, json_object_size(v));
	for (size_t i = 0; i < n; i++)
		cr_assert(json_is_integer(json_object_get(v, keys[i])), "%s key %s", name, keys[i]);
	return v;
}

Test(stats_render, json_parses_with_every_key)
{
	static const char *const keys[] = {
		"name", "logical_sector_size", "physical_sector_size", "provisioning",
		"block_size", "size", "zero_offload", "elapsed_seconds", "reads", "writes",
		"bytes_read", "bytes_written", "flushes", "discards", "write_zeroes",
		"first_writes", "overwrites", "zeroed_bytes", "misaligned_rejected",
		"rmw_writes", "allocated_blocks", "total_blocks", "size_histogram",
		"alignment_histogram", "not_4k_aligned", "latency_us", "reset_generation",
		"daemon_start", "daemon_pid",
	};
	static const char *const size_keys[] = {
		"512", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", ">=1M",
	};
	static const char *const align_keys[] = { "512", "1K", "2K", ">=4K" };
	static const char *const classes[] = { "read", "write_overwrite", "write_first", "flush" };
	static const char *const lat_keys[] = {
		"count", "mean", "p50", "p90", "p99", "p999", "max", "histogram",
	};
	json_error_t jerr;
	json_t *root, *v;

	sample_snap(&rd.s, true);
	render(true);
	cr_assert_eq(rd.len, strlen(rd.out));
	cr_assert(rd.len > 0 && rd.out[rd.len - 1] == '\n', "JSON must end with a newline");
	root = json_loads(rd.out, 0, &jerr);
	cr_assert_not_null(root, "JSON does not parse: %s", jerr.text);

	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_not_null(json_object_get(root, keys[i]), "missing key %s", keys[i]);
	cr_assert_str_eq(json_string_value(json_object_get(root, "name")), "disk0");
	cr_assert_str_eq(json_string_value(json_object_get(root, "provisioning")), "thin");
	cr_assert(json_is_true(json_object_get(root, "zero_offload")));
	cr_assert_eq(json_integer_value(json_object_get(root, "logical_sector_size")), 4096);
	cr_assert_eq(json_integer_value(json_object_get(root, "size")), 8 * MiB);
	cr_assert_eq(json_integer_value(json_object_get(root, "reads")), 100);
	cr_assert_eq(json_integer_value(json_object_get(root, "writes")), 101);
	cr_assert_eq(json_integer_value(json_object_get(root, "first_writes")), 10);
	cr_assert_eq(json_integer_value(json_object_get(root, "overwrites")), 91);
	cr_assert_eq(json_integer_value(json_object_get(root, "misaligned_rejected")), 1);
	cr_assert_eq(json_integer_value(json_object_get(root, "rmw_writes")), 1);
	cr_assert_eq(json_integer_value(json_object_get(root, "allocated_blocks")), 3);
	cr_assert_eq(json_integer_value(json_object_get(root, "not_4k_aligned")), 2);
	cr_assert_float_eq(json_real_value(json_object_get(root, "elapsed_seconds")), 2.0, 1e-9);
	cr_assert_eq(json_integer_value(json_object_get(root, "reset_generation")), 42);
	cr_assert_eq(json_integer_value(json_object_get(root, "daemon_start")), 1700000000);
	cr_assert_eq(json_integer_value(json_object_get(root, "daemon_pid")), 4242);

	v = histogram_keys(root, "size_histogram", size_keys, SFS_SIZE_NBUCKET);
	cr_assert_eq(json_integer_value(json_object_get(v, "4K")), 100);
	cr_assert_eq(json_integer_value(json_object_get(v, "64K")), 100);
	v = histogram_keys(root, "alignment_histogram", align_keys, SFS_ALIGN_NCLASS);
	cr_assert_eq(json_integer_value(json_object_get(v, ">=4K")), 200);

	v = json_object_get(root, "latency_us");
	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		json_t *l = json_object_get(v, classes[c]), *h, *e;
		uint64_t hist_total = 0;
		size_t i;

		cr_assert_not_null(l, "missing latency class %s", classes[c]);
		for (unsigned k = 0; k < sizeof(lat_keys) / sizeof(lat_keys[0]); k++)
			cr_assert_not_null(json_object_get(l, lat_keys[k]), "%s lacks %s", classes[c],
					   lat_keys[k]);
		h = json_object_get(l, "histogram");
		cr_assert(json_is_array(h));
		json_array_foreach(h, i, e) {
			cr_assert(json_is_real(json_array_get(e, 0)) &&
				  json_is_integer(json_array_get(e, 1)), "bad histogram entry");
			cr_assert_gt(json_integer_value(json_array_get(e, 1)), 0);
			hist_total += json_integer_value(json_array_get(e, 1));
		}
		cr_assert_eq(hist_total, rd.s.lat[c].count);
	}
	/* Reads took 20.0 .. 29.9 us: values in microseconds with decimals. */
	v = json_object_get(json_object_get(root, "latency_us"), "read");
	cr_assert_float_eq(json_real_value(json_object_get(v, "max")), 29.9, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(v, "mean")), 24.95, 1e-9);
	cr_assert(json_real_value(json_object_get(v, "p50")) > 24 &&
		  json_real_value(json_object_get(v, "p50")) < 26);
	cr_assert(strstr(rd.out, "\"max\":29.9,") != NULL, "3-decimal microseconds: %s", rd.out);
	v = json_object_get(json_object_get(root, "latency_us"), "write_first");
	cr_assert_eq(json_integer_value(json_object_get(v, "count")), 10);

	json_decref(root);
}

Test(stats_render, json_survives_a_name_that_is_not_utf8)
{
	json_t *root;

	rd.info.name = "caf\xe9.img";
	render(true);
	root = json_loads(rd.out, 0, NULL);
	cr_assert_not_null(root);
	cr_assert_str_eq(json_string_value(json_object_get(root, "name")), "caf?.img");
	json_decref(root);
}

/* Count the lines of text that contain needle. */
static unsigned lines_with(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

Test(stats_render, text_has_the_key_lines)
{
	sample_snap(&rd.s, false);
	render(false);
	cr_assert_eq(rd.len, strlen(rd.out));
	cr_assert_lt(lines_with(rd.out, "\n"), 60, "too long:\n%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "disk0"));
	cr_assert_not_null(strstr(rd.out, "4kn: logical 4096 / physical 4096"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "thin"));
	cr_assert_not_null(strstr(rd.out, "block size 1M"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "8.0 MiB"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "3/8 blocks (37.5%)"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "elapsed       2.0 s since load or reset (reset_generation 42)\n"),
			   "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "daemon        pid 4242, started 2023-11-14 22:13:20 UTC "
				       "(daemon_start 1700000000)\n"), "%s", rd.out);
	/* Every counter with its rate over the 2 seconds. */
	cr_assert_not_null(strstr(rd.out, "reads                         100         50.0/s"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "first_writes                   10          5.0/s"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "flushes                         1          0.5/s"), "%s", rd.out);
	for (const char *k = "bytes_written\0zeroed_bytes\0misaligned_rejected\0rmw_writes\0"
			     "overwrites\0discards\0write_zeroes\0"; *k; k += strlen(k) + 1)
		cr_assert_not_null(strstr(rd.out, k), "no %s", k);
	/* Latency table in microseconds. */
	cr_assert_not_null(strstr(rd.out, "latency (us)"));
	cr_assert_not_null(strstr(rd.out, "p99.9"));
	cr_assert_not_null(strstr(rd.out, "read                  100"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "flush                   1    2000.0"), "%s", rd.out);
	/* Histograms: the largest bucket is a 40-character bar. */
	cr_assert_not_null(strstr(rd.out, "     4K  ######################################## 100"), "%s",
			   rd.out);
	cr_assert_not_null(strstr(rd.out, "   >=4K  ######################################## 200"), "%s",
			   rd.out);
	cr_assert_null(strstr(rd.out, "#########################################"));
	cr_assert_not_null(strstr(rd.out, "4Kn ready: yes (all 200 I/Os 4 KiB aligned)\n"), "%s", rd.out);
}

Test(stats_render, zero_offload_on_off_and_fallen_back)
{
	static const struct {
		bool on;
		int fallback;
		const char *text, *json_fallback;
		bool json_on;
	} cases[] = {
		{ true, 0, "zero offload on\n", NULL, true },
		{ false, 0, "zero offload off\n", NULL, false },
		{ true, EOPNOTSUPP, "zero offload fell back to writing zeros (the backing filesystem has no "
		  "FALLOC_FL_ZERO_RANGE: Operation not supported)\n",
		  "the backing filesystem has no FALLOC_FL_ZERO_RANGE: Operation not supported", false },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root, *fb;

		rd.info.zero_offload = cases[i].on;
		rd.info.zero_offload_fallback = cases[i].fallback;
		render(false);
		cr_expect(strstr(rd.out, cases[i].text), "case %u: %s", i, rd.out);
		render(true);
		root = json_loads(rd.out, 0, NULL);
		cr_assert_not_null(root);
		cr_expect_eq(json_is_true(json_object_get(root, "zero_offload")), cases[i].json_on, "case %u", i);
		fb = json_object_get(root, "zero_offload_fallback");
		cr_assert_not_null(fb, "case %u: no zero_offload_fallback key", i);
		if (cases[i].json_fallback)
			cr_expect_str_eq(json_string_value(fb), cases[i].json_fallback, "case %u", i);
		else
			cr_expect(json_is_null(fb), "case %u", i);
		json_decref(root);
	}
}

Test(stats_render, text_names_the_image_as_ls_b_does)
{
	const char *want = "sectorfs stats: vm\\n1\\ \\033[2J\\351\n";

	rd.info.name = "vm\n1 \033[2J\xe9";
	render(false);
	cr_assert(strncmp(rd.out, want, strlen(want)) == 0, "%s", rd.out);
	for (const char *p = rd.out; *p; p++)
		cr_assert((unsigned char)*p >= 0x20 || *p == '\n', "control byte 0x%02x", (unsigned char)*p);
}

Test(stats_render, text_verdict_not_4kn_and_empty)
{
	sample_snap(&rd.s, true);
	render(false);
	cr_assert_not_null(strstr(rd.out, "4Kn ready: no (2 of 202 I/Os not 4 KiB aligned)\n"), "%s",
			   rd.out);

	memset(&rd.s, 0, sizeof(rd.s));
	rd.info.total_blocks = 0;
	rd.info.allocated_blocks = 0;
	render(false);
	cr_assert_not_null(strstr(rd.out, "4Kn ready: unknown (no I/O yet)\n"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "0/0 blocks (0.0%)"), "%s", rd.out);
	cr_assert_not_null(strstr(rd.out, "write_first             0         -"), "%s", rd.out);
}

/* Rendered, then parsed back: every counter and histogram as it was, each latency sum to the
 * ns its mean keeps (count/2 at most); a file of an older daemon and a mangled one refused. */
Test(stats_render, json_round_trip)
{
	static struct sfs_stats_parsed p;
	char err[256];

	sample_snap(&rd.s, true);
	render(true);
	cr_assert_eq(sfs_stats_parse_json(rd.out, rd.len, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(p.name, rd.info.name);
	cr_expect_eq(p.allocated_blocks, rd.info.allocated_blocks);
	cr_expect_eq(p.total_blocks, rd.info.total_blocks);
	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		uint64_t a = p.snap.lat[c].sum_ns, b = rd.s.lat[c].sum_ns;

		cr_expect(a - b <= rd.s.lat[c].count / 2 + 1 || b - a <= rd.s.lat[c].count / 2 + 1,
			  "class %u: sum %llu back as %llu", c, (unsigned long long)b, (unsigned long long)a);
		p.snap.lat[c].sum_ns = rd.s.lat[c].sum_ns;
	}
	cr_expect(memcmp(&p.snap, &rd.s, sizeof(rd.s)) == 0, "the snapshot comes back whole");
	cr_expect_eq(sfs_stats_parse_json("{\"reads\": 1}", 12, &p, err, sizeof(err)), -EPROTO);
	cr_expect_eq(sfs_stats_parse_json("{\"reset_generation\": 1}", 23, &p, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "reads"), "names the key: %s", err);
	cr_expect_eq(sfs_stats_parse_json("nope", 4, &p, err, sizeof(err)), -EINVAL);
}

/* Recent lists with one of each kind of entry: every op, both refusals, no requester and no
 * command name, 64 refusals (a full ring) and 3 read-modify-write writes. */
static void sample_recent(struct sfs_stats_recent *r)
{
	memset(r, 0, sizeof(*r));
	r->nrefused = SFS_RECENT_MAX;
	for (size_t i = 0; i < r->nrefused; i++)
		r->refused[i] = (struct sfs_recent_io){
			.time_ns = 1700000000123456789ull - i * 1000003, .off = 512 * i + 1, .len = 4096 - i,
			.pid = (int32_t)(i % 5 ? 1000 + i : 0), .err = i % 3 ? EINVAL : ENOSPC,
			.op = (uint32_t)(i % SFS_OP_NCLASS),
		};
	for (size_t i = 0; i < r->nrefused; i++)
		if (i % 7)
			snprintf(r->refused[i].comm, SFS_COMM_LEN, "fio-%zu \"q\"", i);
	r->nrmw = 3;
	for (size_t i = 0; i < r->nrmw; i++)
		r->rmw[i] = (struct sfs_recent_io){ .time_ns = 1700000001000000000ull + i, .off = 1024 * i,
						    .len = 512, .pid = 77, .op = SFS_OP_WRITE,
						    .comm = "kworker/u8:1+loop0" };
}

/* sfs_stats_parse_recent_json of the string text, err of 256 bytes. */
static int parse_recent(const char *text, struct sfs_stats_parsed_recent *p, char *err)
{
	return sfs_stats_parse_recent_json(text, strlen(text), p, err, 256);
}

/* The recent lists rendered into NAME.json, then parsed back: every entry as it was, and
 * rendered again on their own they are the file's lists; a file of an older daemon, without
 * the lists, and a mangled entry refused. */
Test(stats_render, recent_round_trip)
{
	static struct sfs_stats_parsed_recent p;
	static struct sfs_stats_recent r;
	json_t *file, *alone;
	char err[256], *again = NULL;
	size_t len;

	sample_recent(&r);
	rd.info.recent = &r;
	render(true);
	cr_assert_eq(sfs_stats_parse_recent_json(rd.out, rd.len, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(p.name, rd.info.name);
	cr_assert_eq(p.recent.nrefused, r.nrefused);
	cr_assert_eq(p.recent.nrmw, r.nrmw);
	for (size_t i = 0; i < r.nrefused + r.nrmw; i++) {
		const struct sfs_recent_io *a = i < r.nrefused ? &r.refused[i] : &r.rmw[i - r.nrefused],
			*b = i < r.nrefused ? &p.recent.refused[i] : &p.recent.rmw[i - r.nrefused];

		cr_expect(a->time_ns == b->time_ns && a->off == b->off && a->len == b->len &&
			  a->pid == b->pid && a->err == b->err && a->op == b->op &&
			  strcmp(a->comm, b->comm) == 0, "entry %zu does not come back whole", i);
	}

	cr_assert_eq(sfs_stats_render_recent_json(p.name, &p.recent, &again, &len), 0);
	cr_assert_eq(strlen(again), len);
	file = json_loads(rd.out, 0, NULL);
	alone = json_loads(again, 0, NULL);
	cr_assert_not_null(alone, "not JSON: %s", again);
	cr_expect_str_eq(json_string_value(json_object_get(alone, "image")), rd.info.name);
	cr_expect(json_equal(json_object_get(alone, "refused_recent"), json_object_get(file, "refused_recent")));
	cr_expect(json_equal(json_object_get(alone, "rmw_recent"), json_object_get(file, "rmw_recent")));
	cr_expect_eq(json_object_size(alone), 3);
	json_decref(file);
	json_decref(alone);
	free(again);

	cr_expect_eq(parse_recent("{\"name\": \"a\", \"refused_recent\": []}", &p, err), -EPROTO);
	cr_expect_eq(parse_recent("{\"refused_recent\": [], \"rmw_recent\": [{\"op\": \"write\"}]}", &p, err),
		     -EINVAL);
	cr_expect(strstr(err, "rmw_recent"), "names the list: %s", err);
	cr_expect_eq(parse_recent("[]", &p, err), -EINVAL);
}

/* The histogram core shares with sectorfs-bench: every value lies in its bucket, for the
 * stats' 16 and the benchmark's 32 sub-buckets, and the midpoint is within 1/2^(s+1). */
Test(histogram, value_in_its_bucket_for_both_resolutions)
{
	for (unsigned s = 4; s <= 5; s++) {
		for (uint64_t v = 0; v < (1ull << 40); v = v < 200 ? v + 1 : v + v / 7 + 3) {
			unsigned b = sfs_hist_bucket(v, s, 100000);
			uint64_t lo = sfs_hist_bucket_low(b, s), hi = sfs_hist_bucket_low(b + 1, s);
			uint64_t mid = sfs_hist_bucket_mid(b, s);

			cr_assert(lo <= v && v < hi, "s=%u v=%llu in [%llu, %llu)", s, (unsigned long long)v,
				  (unsigned long long)lo, (unsigned long long)hi);
			cr_assert((mid > v ? mid - v : v - mid) <= (v >> (s + 1)) + 1, "s=%u v=%llu mid %llu", s,
				  (unsigned long long)v, (unsigned long long)mid);
		}
		cr_expect_eq(sfs_hist_bucket(UINT64_MAX, s, 7), 6u, "the last bucket holds the rest");
	}
	cr_expect_eq(sfs_hist_bucket(UINT64_MAX, 5, 1920), 1919u, "1920 buckets cover uint64_t at s=5");
}
