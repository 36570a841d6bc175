/* SPDX-License-Identifier: MIT */
/*
 * test_wcut.c - power cuts over the volatile write cache (core/fail/cut.c), on
 * a disk in memory (wc_fixture.h).
 *
 * Proves:
 *   - determinism: a fixed sequence of writes and flushes cut with seed
 *     42 under random gives exactly the outcome written down here (which
 *     writes are kept, lost and torn, which ranges, every sector's data),
 *     and the same again from a second cache fed the same sequence;
 *   - every sector ends as the result rule says, checked against a
 *     sector-by-sector model of the rule (wc_fixture.h's oracle) over 300
 *     random sequences of volatile, FUA and durable writes, flushes, unit
 *     sizes, boundaries and seeds;
 *   - lose-all rolls every unflushed write back and keep-all keeps all;
 *     flushed and destaged writes are never lost; a FUA write or a discard
 *     after a lost write keeps its data;
 *   - torn writes: a write is cut into atomic units at multiples of
 *     atomic_write_unit, each kept or lost whole; a write no larger than
 *     the unit is whole unless it crosses atomic_write_boundary;
 *   - read-modify-write: on 512e with rmw_power_safe false a lost write of
 *     part of a physical sector damages all of it, flushed neighbours
 *     included; with true, or on 4kn, nothing is damaged; a later kept
 *     write of the whole physical sector prevents it;
 *   - the rollback is idempotent: stopped after any number of its writes
 *     and run again, it leaves the same disk as one run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fixtures/tmpstore.h"
#include "fixtures/wc_fixture.h"
#include "fail/wcache.h"

#define LOG "d.undo"
#define DISK (256u << 10)

static uint64_t cache_size = 1 << 20;   /* the next rig's write_cache_size */

/* The two cuts without draws. */
static const struct sfs_wc_cut lose = { .policy = SFS_WC_LOSE_ALL }, keep = { .policy = SFS_WC_KEEP_ALL };

static void setup(void)
{
	wc_setup("wcut", DISK);
}

TestSuite(wcut, .init = setup, .fini = wc_teardown, .timeout = 120);

struct rig {
	struct sfs_wc_config c;
	struct sfs_wc *wc;
	struct oracle o;
	struct memdisk *d;
};

static void rig_open(struct rig *r, struct memdisk *d, uint32_t lss, uint32_t pss, uint32_t awu, uint32_t awb,
		     bool rmw_safe, const char *log)
{
	struct sfs_wc_backing b = md_backing(d);
	char err[256] = "";

	sfs_wc_config_default(&r->c, lss, pss);
	r->c.mode = SFS_WC_VOLATILE;
	r->c.size = cache_size;
	r->c.awu = awu;
	r->c.awb = awb;
	r->c.rmw_power_safe = rmw_safe;
	r->d = d;
	cr_assert_eq(sfs_wc_config_check(&r->c, "t", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sfs_wc_open(&r->c, &b, ts.statefd, log, &r->wc, err, sizeof(err)), 0, "%s", err);
	oracle_init(&r->o, sfs_wc_geom(r->wc), d->size, r->c.size);
}

static void rig_close(struct rig *r)
{
	sfs_wc_close(r->wc);
	oracle_free(&r->o);
}

static void wr(struct rig *r, uint64_t off, uint64_t len, int v, unsigned flags)
{
	cr_assert_eq(sfs_wc_write(r->wc, off, len, flags), 0);
	memset(r->d->data + off, v, len);
	oracle_write(&r->o, off, len, v, flags || len > r->c.size);
}

static void flush(struct rig *r)
{
	cr_assert_eq(sfs_wc_flushed(r->wc, sfs_wc_flush_mark(r->wc)), 0);
	oracle_flush(&r->o);
}

/* One step of a script: a write of v over off..off+len with flags, or, of
 * length 0 (FLUSH), a flush; STEPS lists them for play, which takes them in
 * order. */
struct step {
	uint64_t off, len;
	int v;
	unsigned flags;
};

#define FLUSH { 0, 0, 0, 0 }
#define STEPS(...) (const struct step[]){ __VA_ARGS__ }, \
	sizeof((const struct step[]){ __VA_ARGS__ }) / sizeof(struct step)

static void play(struct rig *r, const struct step *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].len == 0)
			flush(r);
		else
			wr(r, s[i].off, s[i].len, s[i].v, s[i].flags);
	}
}

static void cut(struct rig *r, const struct sfs_wc_cut *c, struct sfs_wc_report *rep)
{
	cr_assert_eq(sfs_wc_resolve(r->wc, c, rep), 0);
	cr_assert_eq(sfs_wc_rollback(r->wc, c), 0);
}

/* Every sector as the oracle says. */
static void expect_oracle(struct rig *r, const struct sfs_wc_cut *c, const char *what)
{
	for (uint64_t s = 0; s < r->o.nsect; s++) {
		int want = oracle_sector(&r->o, c, s);
		long long bad = md_differs(r->d, s * r->o.g.lss, r->o.g.lss, want);

		cr_assert_eq(bad, -1, "%s: sector %llu: byte %lld is 0x%02x, the rule says 0x%02x", what,
			     (unsigned long long)s, bad, bad >= 0 ? md_at(r->d, (uint64_t)bad) : 0, want);
	}
}

static void expect_ranges(const struct sfs_extents *e, const char *want, const char *what)
{
	char got[512] = "";
	size_t n = 0;

	for (size_t i = 0; i < e->n; i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%llu-%llu", i ? " " : "",
				      (unsigned long long)e->v[i].start, (unsigned long long)e->v[i].end - 1);
	cr_expect_str_eq(got, want, "%s", what);
}

/* A rig of that geometry and log plays the steps, is cut under c, then
 * closed; *rep is the cut's report (the caller frees it) and md what the disk
 * holds after it. */
static void cut_script(struct sfs_wc_report *rep, const struct sfs_wc_cut *c, uint32_t lss, uint32_t pss,
		       uint32_t awu, uint32_t awb, bool rmw_safe, const char *log, const struct step *s, size_t n)
{
	struct rig r;

	rig_open(&r, &md, lss, pss, awu, awb, rmw_safe, log);
	play(&r, s, n);
	cut(&r, c, rep);
	rig_close(&r);
}

/* ---- determinism ---- */

/* The fixed sequence: 4kn-sized units on a 512e disk, 16 KiB atomic unit. */
static void fixed_sequence(struct rig *r)
{
	wr(r, 0, 65536, 0x01, 0);
	flush(r);
	wr(r, 4096, 4096, 0x02, 0);
	wr(r, 16384, 32768, 0x03, 0);      /* 2 units of 16 KiB */
	wr(r, 512, 1024, 0x04, 0);         /* a part of physical sector 0 */
	wr(r, 65536, 65536, 0x05, 0);      /* 4 units */
	wr(r, 8192, 4096, 0x06, SFS_WC_FUA);
	wr(r, 12288, 20480, 0x07, 0);      /* 12K..32K: units 12-16K, 16-32K */
	wr(r, 131072, 4096, 0x08, 0);
	wr(r, 139264 + 1024, 512, 0x09, 0);  /* parts of physical sectors 34, 36 and 37 */
	wr(r, 147456, 512, 0x0a, 0);
	wr(r, 151552 + 3584, 512, 0x0b, 0);
}

Test(wcut, same_seed_same_outcome)
{
	struct sfs_wc_cut c = { .policy = SFS_WC_RANDOM, .p = 0.5, .seed = 42 };
	struct sfs_wc_report rep, rep2;
	struct memdisk md2;
	struct rig r, r2;

	rig_open(&r, &md, 512, 4096, 16384, 0, false, LOG);
	fixed_sequence(&r);
	cut(&r, &c, &rep);
	/* written down from the draws of seed 42 (worked out apart from this code): the writes are
	 * numbered 1 to 10 (5 the FUA one); kept whole: 3, 7, 8, 9; lost whole: 1, 10; torn: 2
	 * (its second 16 KiB unit lost), 4 (units 0 and 2), 6 (unit 0, 12-16K) */
	cr_expect_eq(rep.unflushed, 9);
	cr_expect_eq(rep.kept, 4);
	cr_expect_eq(rep.lost, 2);
	cr_expect_eq(rep.torn, 3);
	expect_ranges(&rep.lost_lba, "8-15 303-303", "lost");
	expect_ranges(&rep.torn_lba, "24-31 64-95 128-159 192-223", "torn");
	expect_ranges(&rep.damaged_lba, "296-303", "damaged: write 10 covered physical sector 37 in part");
	expect_oracle(&r, &c, "seed 42");
	cr_expect_eq(md_at(&md, 0), 0x01);
	cr_expect_eq(md_at(&md, 512), 0x04, "write 3 kept");
	cr_expect_eq(md_at(&md, 4096), 0x01, "write 1 lost: the flushed data");
	cr_expect_eq(md_at(&md, 8192), 0x06, "the FUA write");
	cr_expect_eq(md_at(&md, 12288), 0x01, "write 6's first unit lost");
	cr_expect_eq(md_at(&md, 16384), 0x07, "its second kept, over write 2's");
	cr_expect_eq(md_at(&md, 32768), 0x01, "write 2's second unit lost");
	cr_expect_eq(md_at(&md, 65536), 0x00);
	cr_expect_eq(md_at(&md, 81920), 0x05);
	cr_expect_eq(md_at(&md, 98304), 0x00);
	cr_expect_eq(md_at(&md, 114688), 0x05);
	cr_expect_eq(md_at(&md, 131072), 0x08);
	cr_expect_eq(md_at(&md, 139264 + 1024), 0x09);
	cr_expect_eq(md_at(&md, 155136), 0x00, "write 10 lost");
	/* a second cache fed the same writes gives the same report and disk */
	md_init(&md2, DISK);
	rig_open(&r2, &md2, 512, 4096, 16384, 0, false, "e.undo");
	fixed_sequence(&r2);
	cut(&r2, &c, &rep2);
	cr_expect(rep2.kept == rep.kept && rep2.lost == rep.lost && rep2.torn == rep.torn);
	cr_expect_eq(memcmp(md.data, md2.data, DISK), 0, "the same disk");
	sfs_wc_report_free(&rep);
	sfs_wc_report_free(&rep2);
	rig_close(&r);
	rig_close(&r2);
	md_free(&md2);
}

Test(wcut, the_rule_against_a_model_of_it)
{
	uint64_t st = 7;

	for (int round = 0; round < 300; round++) {
		static const uint32_t lsss[] = { 512, 512, 4096 }, awus[] = { 512, 4096, 16384, 65536 };
		uint32_t lss = lsss[round % 3], pss = round % 3 == 0 ? 512 : 4096;
		uint32_t awu = awus[sfs_splitmix64(&st) % 4], awb = sfs_splitmix64(&st) % 2 ? awu * 4 : 0;
		struct sfs_wc_cut c = { .policy = SFS_WC_RANDOM, .p = (double)(sfs_splitmix64(&st) % 5) / 4,
					.seed = sfs_splitmix64(&st) };
		struct sfs_wc_report rep;
		struct rig r;
		char what[96];
		int nw = 1 + (int)(sfs_splitmix64(&st) % 40);

		if (awu < lss)
			awu = lss;
		if (awb && awb < awu)
			awb = awu;
		memset(md.data, 0, md.size);
		rig_open(&r, &md, lss, pss, awu, awb, true, LOG);
		for (int i = 0; i < nw; i++) {
			uint64_t nsect = md.size / lss, s = sfs_splitmix64(&st) % nsect;
			uint64_t n = 1 + sfs_splitmix64(&st) % (sfs_splitmix64(&st) % 4 ? 8 : 300);
			uint64_t k = sfs_splitmix64(&st) % 20;

			if (s + n > nsect)
				n = nsect - s;
			if (k == 0)
				flush(&r);
			wr(&r, s * lss, n * lss, 1 + (int)(sfs_splitmix64(&st) % 254),
			   k == 1 ? SFS_WC_FUA : k == 2 ? SFS_WC_ZERO : 0);
		}
		snprintf(what, sizeof(what), "round %d (lss %u awu %u awb %u p %.2f)", round, lss, awu, awb, c.p);
		cut(&r, &c, &rep);
		expect_oracle(&r, &c, what);
		sfs_wc_report_free(&rep);
		cr_assert_eq(sfs_wc_drop(r.wc, false), 0);
		rig_close(&r);
	}
}

/* ---- policies ---- */

Test(wcut, lose_all_and_keep_all)
{
	struct sfs_wc_report rep;
	struct rig r;

	rig_open(&r, &md, 4096, 4096, 4096, 0, true, LOG);
	play(&r, STEPS({ 0, 8192, 1, 0 }, FLUSH, { 4096, 8192, 2, 0 }, { 16384, 4096, 3, 0 },
		       { 16384, 4096, 4, 0 }));
	cut(&r, &keep, &rep);
	cr_expect(rep.unflushed == 3 && rep.kept == 3 && rep.lost == 0 && rep.torn == 0);
	expect_oracle(&r, &keep, "keep-all");
	cr_expect_eq(md_at(&md, 16384), 4);
	sfs_wc_report_free(&rep);
	cut(&r, &lose, &rep);
	cr_expect(rep.unflushed == 3 && rep.kept == 0 && rep.lost == 3 && rep.torn == 0);
	expect_ranges(&rep.lost_lba, "1-2 4-4", "lost");
	cr_expect_eq(md_differs(&md, 0, 8192, 1), -1, "the flushed write stays");
	cr_expect_eq(md_differs(&md, 8192, 4096, 0), -1);
	cr_expect_eq(md_differs(&md, 16384, 4096, 0), -1, "both writes of 16K rolled back to before the first");
	cr_expect_eq(rep.damaged_lba.n, 0);
	sfs_wc_report_free(&rep);
	rig_close(&r);
}

Test(wcut, destaged_and_durable_writes_stay)
{
	struct sfs_wc_report rep;
	struct rig r;

	cache_size = 8192;
	rig_open(&r, &md, 512, 512, 512, 0, true, LOG);
	cache_size = 1 << 20;
	play(&r, STEPS({ 0, 4096, 1, 0 },
		       { 4096, 4096, 2, 0 },
		       { 8192, 4096, 3, 0 },            /* destages write 1 */
		       { 0, 512, 4, 0 },                /* destages write 2 */
		       { 0, 512, 5, SFS_WC_FUA },       /* over write 4 */
		       { 4096, 512, 6, 0 },
		       { 4096, 1024, 0, SFS_WC_ZERO })); /* a discard over write 6 */
	cut(&r, &lose, &rep);
	cr_expect_eq(rep.unflushed, 3, "writes 3, 4 and 6");
	cr_expect_eq(rep.lost, 3);
	cr_expect_eq(md_at(&md, 0), 5, "the FUA write");
	cr_expect_eq(md_differs(&md, 512, 3584, 1), -1, "destaged write 1");
	cr_expect_eq(md_differs(&md, 4096, 1024, 0), -1, "the discard");
	cr_expect_eq(md_differs(&md, 5120, 3072, 2), -1, "destaged write 2");
	cr_expect_eq(md_differs(&md, 8192, 4096, 0), -1, "write 3 lost");
	sfs_wc_report_free(&rep);
	rig_close(&r);
}

/* ---- atomic units ---- */

/* The first seed under which write seq keeps unit 0 and loses unit 1 at p 0.5. */
static uint64_t seed_tearing(uint64_t seq)
{
	for (uint64_t s = 0;; s++)
		if (sfs_draw_unit(sfs_draw(s, seq, 0)) < 0.5 && sfs_draw_unit(sfs_draw(s, seq, 1)) >= 0.5)
			return s;
}

Test(wcut, torn_by_unit)
{
	struct sfs_wc_cut c = { .policy = SFS_WC_RANDOM, .p = 0.5, .seed = seed_tearing(0) };
	struct sfs_wc_report rep;

	/* 8K..32K: units 8-16K and 16-32K */
	cut_script(&rep, &c, 512, 4096, 16384, 0, true, LOG, STEPS({ 8192, 24576, 9, 0 }));
	cr_expect_eq(rep.torn, 1);
	expect_ranges(&rep.torn_lba, "32-63", "the second unit lost");
	cr_expect_eq(md_differs(&md, 8192, 8192, 9), -1, "unit 0 kept whole");
	cr_expect_eq(md_differs(&md, 16384, 16384, 0), -1, "unit 1 lost whole");
	sfs_wc_report_free(&rep);
}

Test(wcut, whole_unless_it_crosses_the_boundary)
{
	struct sfs_wc_cut c = { .policy = SFS_WC_RANDOM, .p = 0.5, .seed = seed_tearing(0) };
	struct sfs_wc_report rep;

	/* no boundary: 16 KiB at 8K is one unit, kept (unit 0 of the draws) */
	cut_script(&rep, &c, 512, 4096, 16384, 0, true, LOG, STEPS({ 8192, 16384, 9, 0 }, { 0, 4096, 9, 0 }));
	cr_expect(rep.torn == 0 && rep.kept >= 1);
	cr_expect_eq(md_differs(&md, 8192, 16384, 9), -1, "one atomic unit: kept whole");
	sfs_wc_report_free(&rep);
	/* boundary 16K: the same write crosses it, cut there */
	memset(md.data, 0, md.size);
	cut_script(&rep, &c, 512, 4096, 16384, 16384, true, "e.undo", STEPS({ 8192, 16384, 9, 0 }));
	cr_expect_eq(rep.torn, 1);
	expect_ranges(&rep.torn_lba, "32-47", "cut at the boundary");
	sfs_wc_report_free(&rep);
	/* a write of the unit that does not cross the boundary stays whole */
	memset(md.data, 0, md.size);
	cut_script(&rep, &c, 512, 4096, 16384, 65536, true, "f.undo", STEPS({ 8192, 16384, 9, 0 }));
	cr_expect_eq(rep.torn, 0);
	cr_expect_eq(md_differs(&md, 8192, 16384, 9), -1);
	sfs_wc_report_free(&rep);
}

/* ---- read-modify-write ---- */

Test(wcut, a_lost_partial_write_damages_its_physical_sector)
{
	struct sfs_wc_report rep;

	cut_script(&rep, &lose, 512, 4096, 4096, 0, false, LOG,
		   STEPS({ 0, 16384, 1, 0 },
			 FLUSH,                          /* the redo log's earlier blocks, flushed */
			 { 4096 + 1024, 512, 2, 0 },     /* one 512-byte block of physical sector 1 */
			 { 8192, 8192 + 512, 3, 0 }));   /* sectors 2, 3 whole and a part of 4 */
	expect_ranges(&rep.damaged_lba, "8-15 32-39", "physical sectors 1 and 4");
	expect_ranges(&rep.lost_lba, "10-10 16-32", "lost");
	sfs_wc_report_free(&rep);
	/* rmw_power_safe: old or new, never damaged */
	cut_script(&rep, &lose, 512, 4096, 4096, 0, true, "e.undo", STEPS({ 4096 + 1024, 512, 2, 0 }));
	cr_expect_eq(rep.damaged_lba.n, 0, "rmw_power_safe");
	sfs_wc_report_free(&rep);
	/* 4kn: every write covers its physical sectors whole */
	cut_script(&rep, &lose, 4096, 4096, 4096, 0, false, "f.undo", STEPS({ 4096, 4096, 2, 0 }));
	cr_expect_eq(rep.damaged_lba.n, 0, "4kn");
	sfs_wc_report_free(&rep);
}

Test(wcut, a_later_whole_write_prevents_the_damage)
{
	struct sfs_wc_report rep;
	struct rig r;

	rig_open(&r, &md, 512, 4096, 4096, 0, false, LOG);
	play(&r, STEPS({ 512, 512, 2, 0 },
		       { 0, 4096, 3, SFS_WC_FUA },      /* the whole physical sector, durable */
		       { 8192 + 512, 512, 4, 0 },
		       { 8192, 4096, 5, 0 }));          /* whole, but lost too under lose-all */
	cut(&r, &lose, &rep);
	expect_ranges(&rep.damaged_lba, "16-23", "only the one no kept write rewrote");
	sfs_wc_report_free(&rep);
	cr_assert_eq(sfs_wc_drop(r.wc, false), 0);
	wr(&r, 512, 512, 2, 0);
	cut(&r, &keep, &rep);
	cr_expect_eq(rep.damaged_lba.n, 0, "a kept partial write damages nothing");
	sfs_wc_report_free(&rep);
	rig_close(&r);
}

/* ---- the rollback ---- */

Test(wcut, rollback_is_idempotent)
{
	struct sfs_wc_cut c = { .policy = SFS_WC_RANDOM, .p = 0.3, .seed = 99 };
	struct sfs_wc_report rep;
	unsigned char *want = malloc(DISK), *before = malloc(DISK);
	unsigned total;
	struct rig r;

	rig_open(&r, &md, 512, 4096, 4096, 0, true, LOG);
	for (int i = 0; i < 30; i++)
		wr(&r, (uint64_t)(i * 7 % 40) * 2048, 2048 * (1 + i % 5), 1 + i, 0);
	memcpy(before, md.data, DISK);
	md.writes = 0;
	cut(&r, &c, &rep);
	sfs_wc_report_free(&rep);
	memcpy(want, md.data, DISK);
	total = md.writes;
	cr_assert_gt(total, 3);
	for (unsigned k = 1; k < total; k++) {   /* stop after k writes, then run it again */
		memcpy(md.data, before, DISK);
		md.writes_left = k;
		cr_assert_eq(sfs_wc_rollback(r.wc, &c), -EIO);
		md.writes_left = 0;
		cr_assert_eq(sfs_wc_rollback(r.wc, &c), 0);
		cr_assert_eq(memcmp(md.data, want, DISK), 0, "stopped after %u of %u writes", k, total);
		cr_assert_eq(sfs_wc_rollback(r.wc, &c), 0);
		cr_assert_eq(memcmp(md.data, want, DISK), 0, "run a third time");
	}
	free(want);
	free(before);
	rig_close(&r);
}
