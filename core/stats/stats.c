/* SPDX-License-Identifier: MIT */
/*
 * stats.c - recording and snapshots of per-image I/O statistics.
 *
 * Layout: struct sfs_stats is NSHARD shards, each one a full set of the
 * counters of a snapshot (struct sfs_stats_snap) starting on its own cache
 * line.  A recording thread adds into the shard of the CPU it runs on
 * (sched_getcpu() % NSHARD, shard 0 when that fails) with relaxed atomic
 * adds, and raises the per-class max with a CAS loop; nothing is locked.
 * A snapshot sums the shards (and takes the max of the max fields).
 * Reset stores zero into every counter; an I/O recorded at the same time
 * may land half before and half after it (e.g. its count but not its
 * bytes), which is harmless for statistics.
 *
 * Resets and snapshots meet in a sequence lock (seq): a reset makes seq
 * odd, zeroes the counters, takes a new generation and restarts the
 * clock, then makes seq even again; a snapshot that saw seq odd, or saw
 * it change while it summed, sums again.  So a snapshot holds the
 * counters of one generation only, and within a generation every counter
 * only grows: two snapshots of the same generation subtract cleanly.
 * Recorders never touch seq.  Generations come from one counter for the
 * whole process, so a reset, or an image loaded again under the same
 * name, never shows a generation seen before.
 *
 * Latency histogram (nanoseconds, log-linear, SFS_LAT_SUB = 16 sub-buckets
 * per power of two):
 *
 *   v < 16                  bucket v                          (exact)
 *   2^k <= v < 2^(k+1)      bucket (k-3)*16 + (v >> (k-4) & 15)
 *                           width 2^(k-4), i.e. 1/16 of its lower bound
 *   bucket 639              everything >= 31 * 2^38 ns (~2.3 hours)
 *
 * A percentile is reported as the midpoint of the bucket holding the
 * requested rank, clamped to the class's exact max.  The true value of that
 * rank lies in the same bucket, so the error is at most half a bucket:
 * 1/32 (3.1%) of the value, and none below 32 ns.  The top rank (q = 1,
 * or a single sample) is the max itself.  Only the open-ended last bucket
 * is not bounded; it reports the max too.  Mean and max are exact.
 *
 * Recent I/Os: two rings (recent.c) beside the shards, one of refused
 * I/Os and one of read-modify-write writes.  A reset clears them inside
 * its odd-seq window, and sfs_stats_recent reads them under the same
 * sequence check as a snapshot, so a list never holds entries from before
 * a reset together with the generation after it.
 *
 * Size histogram: bucket 0 is len < 1 KiB, bucket i (1..10) is
 * [512 << i, 512 << (i+1)), bucket 11 is >= 1 MiB.
 *
 * Memory: a shard is one struct sfs_stats_snap (20864 bytes, 2608
 * counters, of which 2572 are latency); 8 shards, the clock, generation
 * and seq make 166976 bytes, and the two recent rings (7184 bytes each)
 * 181344 (~177 KiB) per image, in one mapping of its own: its pages are
 * the kernel's zero page until something is recorded into them, so the
 * stats cost what is in use (a shard's counters and the few histogram
 * pages its I/O reaches, for each CPU that records).  An image idle a
 * while gives even that back: cell.c packs its values into a few
 * hundred bytes (sfs_stats_start and sfs_stats_new_from are what it
 * packs from and unpacks into).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/histogram.h"
#include "stats.h"

#define NSHARD 8
#define CACHE_LINE 64
#define NSLOT (sizeof(struct sfs_stats_snap) / sizeof(uint64_t))

/* The flat walks below (reset, snapshot) rely on the snapshot being nothing but uint64_t. */
_Static_assert(sizeof(struct sfs_stats_snap) % sizeof(uint64_t) == 0,
	       "struct sfs_stats_snap must hold only uint64_t");

struct shard {
	_Alignas(CACHE_LINE) struct sfs_stats_snap c;  /* elapsed_ns unused here */
};

struct sfs_stats {
	struct shard shard[NSHARD];
	_Alignas(CACHE_LINE) uint64_t start_ns;  /* CLOCK_MONOTONIC at creation or reset */
	uint64_t generation;                      /* taken from next_generation at creation or reset */
	uint64_t seq;                             /* odd while a reset runs */
	struct sfs_recent refused, rmw;           /* the last refused and read-modify-write I/Os */
};

/* The last generation handed out, for the whole process. */
static uint64_t last_generation;

static uint64_t next_generation(void)
{
	return __atomic_add_fetch(&last_generation, 1, __ATOMIC_RELAXED);
}

static pthread_once_t origin_once = PTHREAD_ONCE_INIT;
static uint64_t origin_start, origin_pid;

/* Counter i of a snapshot-shaped block of counters. */
static uint64_t *slot(struct sfs_stats_snap *s, size_t i)
{
	return (uint64_t *)(void *)((char *)s + i * sizeof(uint64_t));
}

static const uint64_t *cslot(const struct sfs_stats_snap *s, size_t i)
{
	return (const uint64_t *)(const void *)((const char *)s + i * sizeof(uint64_t));
}

static struct sfs_stats_snap *my_shard(struct sfs_stats *st)
{
	int cpu = sched_getcpu();

	return &st->shard[cpu < 0 ? 0 : (unsigned)cpu % NSHARD].c;
}

static inline void add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void raise_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void record_lat(struct sfs_stats_snap *c, enum sfs_lat_class cls, uint64_t ns)
{
	add(&c->lat[cls].count, 1);
	add(&c->lat[cls].sum_ns, ns);
	add(&c->lat[cls].hist[sfs_stats_lat_bucket(ns)], 1);
	raise_max(&c->lat[cls].max_ns, ns);
}

int sfs_stats_new_at(uint64_t generation, uint64_t start_ns, struct sfs_stats **out)
{
	/* zero pages until written: what no I/O reaches costs nothing */
	struct sfs_stats *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (st == MAP_FAILED)
		return -ENOMEM;
	st->start_ns = start_ns;
	st->generation = generation;
	*out = st;
	return 0;
}

/* The slots of a snapshot that are not counters (a snapshot fills them). */
static bool not_a_counter(size_t i)
{
	size_t off = i * sizeof(uint64_t);

	return off == offsetof(struct sfs_stats_snap, elapsed_ns) ||
	       off == offsetof(struct sfs_stats_snap, reset_generation) ||
	       off == offsetof(struct sfs_stats_snap, daemon_start) ||
	       off == offsetof(struct sfs_stats_snap, daemon_pid);
}

bool sfs_stats_is_counter(size_t i)
{
	return i < NSLOT && !not_a_counter(i);
}

int sfs_stats_new_from(const struct sfs_stats_snap *snap, const struct sfs_stats_recent *recent, uint64_t start_ns,
		       struct sfs_stats **out)
{
	struct sfs_stats *st;
	int rc = sfs_stats_new_at(snap->reset_generation, start_ns, &st);

	if (rc < 0)
		return rc;
	/* the sums in one shard, the max fields as they are: a snapshot gives them back */
	for (size_t i = 0; i < NSLOT; i++)
		if (!not_a_counter(i) && *cslot(snap, i))
			*slot(&st->shard[0].c, i) = *cslot(snap, i);
	if (recent) {
		sfs_recent_load(&st->refused, recent->refused, recent->nrefused);
		sfs_recent_load(&st->rmw, recent->rmw, recent->nrmw);
	}
	*out = st;
	return 0;
}

uint64_t sfs_stats_start(const struct sfs_stats *st)
{
	return __atomic_load_n(&st->start_ns, __ATOMIC_RELAXED);
}

uint64_t sfs_stats_next_generation(void)
{
	return next_generation();
}

void sfs_stats_snapshot_empty(uint64_t generation, uint64_t start_ns, struct sfs_stats_snap *snap)
{
	memset(snap, 0, sizeof(*snap));
	snap->elapsed_ns = sfs_now_ns() - start_ns;
	snap->reset_generation = generation;
	sfs_stats_origin(&snap->daemon_start, &snap->daemon_pid);
}

void sfs_stats_free(struct sfs_stats *st)
{
	if (st)
		munmap(st, sizeof(*st));
}

void sfs_stats_reset(struct sfs_stats *st)
{
	uint64_t seq = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);

	/* Take the write side: seq from even to odd (another reset holds it while odd). */
	for (;;) {
		if (seq & 1) {
			sched_yield();
			seq = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);
		} else if (__atomic_compare_exchange_n(&st->seq, &seq, seq + 1, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			break;
		}
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);   /* seq odd before any counter is zeroed */
	for (unsigned s = 0; s < NSHARD; s++)
		for (size_t i = 0; i < NSLOT; i++)
			__atomic_store_n(slot(&st->shard[s].c, i), 0, __ATOMIC_RELAXED);
	sfs_recent_clear(&st->refused);
	sfs_recent_clear(&st->rmw);
	__atomic_store_n(&st->generation, next_generation(), __ATOMIC_RELAXED);
	__atomic_store_n(&st->start_ns, sfs_now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&st->seq, seq + 2, __ATOMIC_RELEASE);
}

int sfs_stats_command_check(const char *buf, size_t len)
{
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	return len == 5 && memcmp(buf, "reset", 5) == 0 ? 0 : -EINVAL;
}

int sfs_stats_command(struct sfs_stats *st, const char *buf, size_t len)
{
	int rc = sfs_stats_command_check(buf, len);

	if (rc == 0)
		sfs_stats_reset(st);
	return rc;
}

static void origin_init(void)
{
	origin_start = (uint64_t)time(NULL);
	origin_pid = (uint64_t)getpid();
}

void sfs_stats_origin(uint64_t *start, uint64_t *pid)
{
	pthread_once(&origin_once, origin_init);
	*start = origin_start;
	*pid = origin_pid;
}

void sfs_stats_read(struct sfs_stats *st, uint64_t off, uint64_t len, uint64_t lat_ns)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->reads, 1);
	add(&c->bytes_read, len);
	add(&c->size_hist[sfs_stats_size_bucket(len)], 1);
	add(&c->align_hist[sfs_geom_align_class(off, len)], 1);
	record_lat(c, SFS_LAT_READ, lat_ns);
}

void sfs_stats_write(struct sfs_stats *st, uint64_t off, uint64_t len, uint64_t lat_ns,
		     bool first, bool rmw)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->writes, 1);
	add(&c->bytes_written, len);
	add(first ? &c->first_writes : &c->overwrites, 1);
	if (rmw) {
		add(&c->rmw_writes, 1);
		sfs_recent_add(&st->rmw, SFS_OP_WRITE, off, len, 0);
	}
	add(&c->size_hist[sfs_stats_size_bucket(len)], 1);
	add(&c->align_hist[sfs_geom_align_class(off, len)], 1);
	record_lat(c, first ? SFS_LAT_WRITE_FIRST : SFS_LAT_WRITE_OVERWRITE, lat_ns);
}

void sfs_stats_misaligned(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->misaligned_rejected, 1);
	add(&c->align_hist[sfs_geom_align_class(off, len)], 1);
	sfs_recent_add(&st->refused, op, off, len, EINVAL);
}

void sfs_stats_out_of_range(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len)
{
	add(&my_shard(st)->out_of_range, 1);
	sfs_recent_add(&st->refused, op, off, len, ENOSPC);
}

void sfs_stats_media_error(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len)
{
	sfs_recent_add(&st->refused, op, off, len, EIO);
}

void sfs_stats_flush(struct sfs_stats *st, uint64_t lat_ns)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->flushes, 1);
	record_lat(c, SFS_LAT_FLUSH, lat_ns);
}

void sfs_stats_model_delay(struct sfs_stats *st, enum sfs_lat_class c, uint64_t ns)
{
	add(&my_shard(st)->model_delay_ns[c], ns);
}

void sfs_stats_discard(struct sfs_stats *st, uint64_t len)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->discards, 1);
	add(&c->discard_bytes, len);
}

void sfs_stats_write_zeroes(struct sfs_stats *st, uint64_t len)
{
	struct sfs_stats_snap *c = my_shard(st);

	add(&c->write_zeroes, 1);
	add(&c->write_zeroes_bytes, len);
}

void sfs_stats_zeroed(struct sfs_stats *st, uint64_t bytes)
{
	add(&my_shard(st)->zeroed_bytes, bytes);
}

void sfs_stats_bounced(struct sfs_stats *st, uint64_t bytes)
{
	add(&my_shard(st)->bounced_bytes, bytes);
}

/* One pass over the shards: the sums, and the max of the max fields. */
static void sum_shards(const struct sfs_stats *st, struct sfs_stats_snap *snap)
{
	memset(snap, 0, sizeof(*snap));
	for (unsigned i = 0; i < NSHARD; i++)
		for (size_t j = 0; j < NSLOT; j++)
			*slot(snap, j) += __atomic_load_n(cslot(&st->shard[i].c, j), __ATOMIC_RELAXED);
	/* The walk above summed the max fields too; take their max instead. */
	for (unsigned c = 0; c < SFS_LAT_NCLASS; c++) {
		snap->lat[c].max_ns = 0;
		for (unsigned i = 0; i < NSHARD; i++) {
			uint64_t m = __atomic_load_n(&st->shard[i].c.lat[c].max_ns, __ATOMIC_RELAXED);

			if (m > snap->lat[c].max_ns)
				snap->lat[c].max_ns = m;
		}
	}
}

void sfs_stats_snapshot(const struct sfs_stats *st, struct sfs_stats_snap *snap)
{
	uint64_t seq, start, gen;

	for (;;) {
		seq = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {                  /* a reset is running */
			sched_yield();
			continue;
		}
		sum_shards(st, snap);
		gen = __atomic_load_n(&st->generation, __ATOMIC_RELAXED);
		start = __atomic_load_n(&st->start_ns, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);   /* the loads above before seq again */
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == seq)
			break;
	}
	snap->elapsed_ns = sfs_now_ns() - start;
	snap->reset_generation = gen;
	sfs_stats_origin(&snap->daemon_start, &snap->daemon_pid);
}

void sfs_stats_recent(const struct sfs_stats *st, struct sfs_stats_recent *out)
{
	uint64_t seq;

	for (;;) {
		seq = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {                  /* a reset is running */
			sched_yield();
			continue;
		}
		out->nrefused = sfs_recent_list(&st->refused, out->refused);
		out->nrmw = sfs_recent_list(&st->rmw, out->rmw);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == seq)
			break;
	}
}

uint64_t sfs_stats_percentile(const struct sfs_stats_snap *snap, enum sfs_lat_class c, double q)
{
	const uint64_t *hist = snap->lat[c].hist;
	uint64_t total = 0, rank;
	unsigned b;

	/* Count from the histogram itself: a snapshot taken during I/O may
	 * have a count one I/O ahead of it. */
	for (b = 0; b < SFS_LAT_NBUCKET; b++)
		total += hist[b];
	if (total == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* Nearest rank: the smallest value with at least q of the I/Os at or below it. */
	rank = (uint64_t)(q * (double)total);
	if ((double)rank < q * (double)total)
		rank++;
	if (rank == 0)
		rank = 1;
	if (rank == total)  /* the top rank is the max, known exactly */
		return snap->lat[c].max_ns;
	return sfs_hist_at_rank(hist, SFS_LAT_NBUCKET, SFS_LAT_SUB_BITS, rank, 0, snap->lat[c].max_ns);
}

unsigned sfs_stats_size_bucket(uint64_t len)
{
	unsigned k;

	if (len < 1024)
		return 0;
	k = 63 - (unsigned)__builtin_clzll(len);  /* floor(log2(len)) >= 10 */
	return k - 9 < SFS_SIZE_NBUCKET ? k - 9 : SFS_SIZE_NBUCKET - 1;
}

unsigned sfs_stats_lat_bucket(uint64_t ns)
{
	return sfs_hist_bucket(ns, SFS_LAT_SUB_BITS, SFS_LAT_NBUCKET);
}

/* b may be SFS_LAT_NBUCKET: the end of the last bucket's regular range. */
uint64_t sfs_stats_lat_bucket_low(unsigned b)
{
	return sfs_hist_bucket_low(b, SFS_LAT_SUB_BITS);
}
