/* SPDX-License-Identifier: MIT */
/*
 * test_stats_cell.c - an image's stats packed while idle and unpacked at
 * the next I/O (core/stats/cell.c).
 *
 * Proves: stats with every kind of value (counters, both histograms, four
 * latency classes with their max, the time a model added, both recent
 * lists with their requesters, a reset generation past a reset) render
 * the same JSON live, packed and unpacked again (the elapsed time aside,
 * which runs from the same start), and the packed form of an image read
 * once takes under 256 bytes; the cell packs only after an idle look saw
 * no request since the one before, never while a request is in, and the
 * next request finds its values and goes on counting; a reset of a
 * packed or never-made cell gives zeros of a new generation and makes
 * nothing; a cell without stats records nothing; requests recording from
 * four threads while another packs the cell as often as it can lose no
 * count (under ASan: touch no freed stats).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/clock.h"
#include "stats/cell.h"

static struct sfs_stats_info info(const struct sfs_stats_recent *recent)
{
	struct sfs_stats_info i = { .name = "d0", .prov = SFS_PROV_THIN, .zero_offload = true };

	i.geom.lss = 512;
	i.geom.pss = 4096;
	i.geom.block_size = 1 << 20;
	i.geom.size = 64 << 20;
	i.recent = recent;
	return i;
}

/* The JSON file of the stats of st or, when st is NULL, of the packed pk,
 * the elapsed time set to 0. */
static char *render(const struct sfs_stats *st, const struct sfs_stats_packed *pk)
{
	static struct sfs_stats_snap snap;
	static struct sfs_stats_recent rec;
	struct sfs_stats_info i = info(&rec);
	char *out = NULL;
	size_t len;

	if (st) {
		sfs_stats_snapshot(st, &snap);
		sfs_stats_recent(st, &rec);
	} else {
		sfs_stats_packed_snapshot(pk, &snap);
		sfs_stats_packed_recent(pk, &rec);
	}
	snap.elapsed_ns = 0;
	cr_assert_eq(sfs_stats_render_json(&snap, &i, &out, &len), 0);
	return out;
}

/* Some of every kind of value. */
static void record_all(struct sfs_stats *st, unsigned n)
{
	sfs_requester_set(getpid());
	for (unsigned i = 0; i < n; i++) {
		sfs_stats_read(st, (uint64_t)i * 4096, 4096u << (i % 9), 1000 + 37ull * i * i);
		sfs_stats_write(st, (uint64_t)i * 512, 512u << (i % 12), 900 + 101ull * i, i % 3 == 0, i % 5 == 0);
		if (i % 7 == 0)
			sfs_stats_flush(st, 500000 + 1000ull * i);
		if (i % 11 == 0)
			sfs_stats_misaligned(st, SFS_OP_WRITE, 100 + i, 512);
	}
	sfs_stats_out_of_range(st, SFS_OP_READ, 1ull << 40, 4096);
	sfs_stats_discard(st, 1 << 20);
	sfs_stats_write_zeroes(st, 3 << 20);
	sfs_stats_zeroed(st, 12345);
	sfs_stats_bounced(st, 4096);
	sfs_stats_model_delay(st, SFS_LAT_WRITE_FIRST, 777);
}

Test(stats_cell, values_survive_pack_and_unpack_exactly)
{
	struct sfs_stats *st, *back;
	struct sfs_stats_packed *pk;
	struct sfs_stats_snap a, b;
	char *live, *packed, *again;

	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns() - 5000000000ull, &st), 0);
	record_all(st, 40);
	sfs_stats_reset(st);                       /* a generation past a reset */
	record_all(st, 150);                       /* the recent lists overflow their 64 */
	live = render(st, NULL);
	cr_assert_eq(sfs_stats_pack(st, &pk), 0);
	packed = render(NULL, pk);
	cr_assert_str_eq(packed, live);
	cr_assert_eq(sfs_stats_unpack(pk, &back), 0);
	again = render(back, NULL);
	cr_assert_str_eq(again, live);
	/* and the elapsed time runs from the same start */
	cr_assert_eq(sfs_stats_start(back), sfs_stats_start(st));
	sfs_stats_snapshot(st, &a);
	sfs_stats_snapshot(back, &b);
	cr_assert_eq(a.reset_generation, b.reset_generation);
	cr_assert(b.elapsed_ns >= a.elapsed_ns && b.elapsed_ns - a.elapsed_ns < 1000000000ull);
	/* the unpacked stats go on counting */
	sfs_stats_read(back, 0, 4096, 10);
	sfs_stats_snapshot(back, &b);
	cr_assert_eq(b.reads, a.reads + 1);
	free(live);
	free(packed);
	free(again);
	sfs_stats_packed_free(pk);
	sfs_stats_free(back);
	sfs_stats_free(st);
}

Test(stats_cell, an_image_read_once_packs_small)
{
	struct sfs_stats_packed *pk;
	struct sfs_stats *st;

	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &st), 0);
	sfs_stats_read(st, 0, 4096, 30000);
	cr_assert_eq(sfs_stats_pack(st, &pk), 0);
	cr_assert_lt(sfs_stats_packed_size(pk), 256);
	sfs_stats_packed_free(pk);
	sfs_stats_free(st);
}

/* One request on the cell: a read recorded. */
static void one_read(struct sfs_stats_cell *c)
{
	struct sfs_stats *st;

	sfs_stats_cell_enter(c);
	st = sfs_stats_cell_get(c);
	cr_assert_not_null(st);
	sfs_stats_read(st, 0, 4096, 1000);
	sfs_stats_cell_leave(c);
}

/* The cell's snapshot, which must count reads reads. */
static struct sfs_stats_snap snap_reads(struct sfs_stats_cell *c, uint64_t reads)
{
	struct sfs_stats_snap s;

	sfs_stats_cell_snapshot(c, &s);
	cr_assert_eq(s.reads, reads, "%llu reads counted, want %llu", (unsigned long long)s.reads,
		     (unsigned long long)reads);
	return s;
}

Test(stats_cell, packs_only_after_a_quiet_look)
{
	static struct sfs_stats_cell c;
	struct sfs_stats_snap s, before;
	struct sfs_stats *st;

	sfs_stats_cell_init(&c, true);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_NONE);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);   /* nothing to pack */
	one_read(&c);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_LIVE);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);   /* I/O since the last look: the quiet starts */
	one_read(&c);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);   /* again */
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_LIVE);
	/* a request in: never packed under it */
	sfs_stats_cell_idle(&c);
	sfs_stats_cell_enter(&c);
	st = sfs_stats_cell_get(&c);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_LIVE);
	sfs_stats_read(st, 0, 4096, 1000);
	sfs_stats_cell_leave(&c);
	sfs_stats_cell_snapshot(&c, &before);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);   /* the request came since the last look */
	cr_assert_eq(sfs_stats_cell_idle(&c), 1);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_PACKED);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);   /* packed already */
	s = snap_reads(&c, 3);
	cr_assert_eq(s.reset_generation, before.reset_generation);
	cr_assert_eq(s.lat[SFS_LAT_READ].count, 3);
	/* the next request unpacks and goes on */
	one_read(&c);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_LIVE);
	s = snap_reads(&c, 4);
	cr_assert_eq(s.reset_generation, before.reset_generation);
	sfs_stats_cell_destroy(&c);
}

Test(stats_cell, reset_of_packed_or_none_makes_nothing)
{
	static struct sfs_stats_cell c;
	struct sfs_stats_snap s, before;

	sfs_stats_cell_init(&c, true);
	sfs_stats_cell_snapshot(&c, &before);
	cr_assert_eq(sfs_stats_cell_command(&c, "reset\n", 6), 0);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_NONE);
	sfs_stats_cell_snapshot(&c, &s);
	cr_assert_gt(s.reset_generation, before.reset_generation);
	cr_assert_eq(sfs_stats_cell_command(&c, "zap", 3), -EINVAL);

	one_read(&c);
	sfs_stats_cell_idle(&c);
	cr_assert_eq(sfs_stats_cell_idle(&c), 1);
	before = snap_reads(&c, 1);
	cr_assert_eq(sfs_stats_cell_command(&c, "zap", 3), -EINVAL);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_PACKED);
	cr_assert_eq(sfs_stats_cell_command(&c, "reset", 5), 0);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_NONE);
	s = snap_reads(&c, 0);
	cr_assert_gt(s.reset_generation, before.reset_generation);
	/* a request after it counts from zero in that generation */
	one_read(&c);
	before = snap_reads(&c, 1);
	cr_assert_eq(before.reset_generation, s.reset_generation);
	sfs_stats_cell_destroy(&c);
}

Test(stats_cell, off_records_nothing)
{
	static struct sfs_stats_cell c;

	sfs_stats_cell_init(&c, false);
	sfs_stats_cell_enter(&c);
	cr_assert_null(sfs_stats_cell_get(&c));
	sfs_stats_cell_leave(&c);
	cr_assert_eq(sfs_stats_cell_idle(&c), 0);
	cr_assert_eq(sfs_stats_cell_state(&c), SFS_STATS_NONE);
	snap_reads(&c, 0);
	sfs_stats_cell_destroy(&c);
}

#define NTHREAD 4
#define ROUNDS 100
#define PER_ROUND 2000

static struct sfs_stats_cell race_cell;
static pthread_barrier_t round_end, round_start;
static int race_done;

/* Rounds of requests; between two, all wait while the packer has the quiet cell, then all come
 * back at once, racing its looks. */
static void *recorder(void *arg)
{
	long me = (long)arg;

	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < PER_ROUND; i++) {
			struct sfs_stats *st;

			sfs_stats_cell_enter(&race_cell);
			st = sfs_stats_cell_get(&race_cell);
			if (st) {
				sfs_stats_read(st, 0, 4096, 1000);
				sfs_stats_write(st, 0, 4096, 1000, false, false);
			}
			sfs_stats_cell_leave(&race_cell);
		}
		pthread_barrier_wait(&round_end);
		if (me == 0)
			usleep(1000 + (r % 7) * 100);
		pthread_barrier_wait(&round_start);
	}
	return NULL;
}

static void *packer(void *arg)
{
	unsigned long *packs = arg;

	while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE))
		if (sfs_stats_cell_idle(&race_cell) == 1)
			++*packs;
	return NULL;
}

Test(stats_cell, no_count_lost_while_packing_races, .timeout = 120)
{
	pthread_t rec[NTHREAD], pk;
	unsigned long packs = 0;
	struct sfs_stats_snap s;
	uint64_t want = (uint64_t)NTHREAD * ROUNDS * PER_ROUND;

	sfs_stats_cell_init(&race_cell, true);
	pthread_barrier_init(&round_end, NULL, NTHREAD);
	pthread_barrier_init(&round_start, NULL, NTHREAD);
	cr_assert_eq(pthread_create(&pk, NULL, packer, &packs), 0);
	for (long i = 0; i < NTHREAD; i++)
		cr_assert_eq(pthread_create(&rec[i], NULL, recorder, (void *)i), 0);
	for (int i = 0; i < NTHREAD; i++)
		pthread_join(rec[i], NULL);
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	pthread_join(pk, NULL);
	sfs_stats_cell_snapshot(&race_cell, &s);
	cr_assert_eq(s.reads, want);
	cr_assert_eq(s.writes, want);
	cr_assert_eq(s.lat[SFS_LAT_READ].count, want);
	cr_assert_gt(packs, ROUNDS / 4, "packed only %lu times in %d quiet pauses", packs, ROUNDS);
	cr_log_info("packed %lu times while %d threads recorded", packs, NTHREAD);
	sfs_stats_cell_destroy(&race_cell);
}
