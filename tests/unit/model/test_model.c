/* SPDX-License-Identifier: MIT */
/*
 * test_model.c - device profiles and the drive model (core/model/model.c).
 *
 * The model runs on an injected clock: now() returns a variable the test
 * sets, sleep_until() records the time and moves the clock there, so
 * every figure is exact and nothing sleeps.
 *
 * Proves: the curve is interpolated on log2 of the size, held at its
 * first point below it and extrapolated at its last point's rate above
 * it; N channels serve N requests at once and the N+1th waits for the
 * first to free; a flush costs flush_us; a write covering a physical
 * sector in part costs one physical-sector read per partial sector by
 * default and partial_write_us when given; zeroing costs the offload rate
 * with offload and the write curve without; a request that already took
 * longer than the model is not delayed; profiles refuse unknown keys,
 * unordered curves and missing curves with the file and key named; a
 * dumped profile parses back the same; loading by name uses the profile
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "model/model.h"

struct fake {
	uint64_t now;
	uint64_t slept_to;
	int sleeps;
};

static uint64_t f_now(void *arg) { return ((struct fake *)arg)->now; }

static int f_sleep(void *arg, uint64_t t)
{
	struct fake *f = arg;

	f->slept_to = t;
	f->sleeps++;
	if (t > f->now)
		f->now = t;
	return 0;
}

/* sfs_model_complete's time waited (it must succeed). */
static uint64_t complete(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0)
{
	uint64_t waited;

	cr_assert_eq(sfs_model_complete(m, rq, t0, &waited), 0);
	return waited;
}

#define US 1000ull
#define MS 1000000ull

/* 2 ms per 4 KiB write, 1 ms per 4 KiB read, flat curves with one point each below. */
static struct sfs_profile flat(unsigned channels)
{
	struct sfs_profile p = { .channels = channels, .partial_write_us = -1, .nread = 1, .nwrite = 1 };

	snprintf(p.name, sizeof p.name, "flat");
	p.read[0] = (struct sfs_profile_point){ 4096, 1000 };
	p.write[0] = (struct sfs_profile_point){ 4096, 2000 };
	p.flush_us = 500;
	p.zero_offload_mb_s = 1000;   /* 1000 bytes per us */
	p.zero_offload_us = 100;
	return p;
}

static struct sfs_model *mk(const struct sfs_profile *p, uint32_t pss, struct fake *f)
{
	struct sfs_model_clock clk = { f_now, f_sleep, f };
	struct sfs_model *m;

	cr_assert_eq(sfs_model_new(p, pss, &clk, &m), 0);
	return m;
}

/* What most tests run on: the fake clock at 0, flat(channels), and a model of it with pss-byte physical sectors. */
struct rig {
	struct fake f;
	struct sfs_profile p;
	struct sfs_model *m;
};

static void rig_up(struct rig *r, unsigned channels, uint32_t pss)
{
	r->f = (struct fake){ 0 };
	r->p = flat(channels);
	r->m = mk(&r->p, pss, &r->f);
}

Test(model, interpolates_on_log2_size)
{
	struct sfs_profile p = flat(1);

	p.nread = 3;
	p.read[0] = (struct sfs_profile_point){ 512, 10 };
	p.read[1] = (struct sfs_profile_point){ 8192, 50 };
	p.read[2] = (struct sfs_profile_point){ 1 << 20, 1000 };
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 512), 10, 1e-9);
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 256), 10, 1e-9);       /* held below */
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 2048), 30, 1e-9);      /* log2 halfway */
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 8192), 50, 1e-9);
	/* 64K is 3/7 of the way from 8K (2^13) to 1M (2^20) in log2 */
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 65536), 50 + 950.0 * 3 / 7, 1e-9);
	cr_assert_float_eq(sfs_profile_service_us(&p, false, 4 << 20), 4000, 1e-9); /* last rate */
	cr_assert_float_eq(sfs_profile_service_us(&p, true, 4096), 2000, 1e-9);
}

Test(model, qd1_completes_after_service_time)
{
	struct rig r;
	struct sfs_model_req w = { .op = SFS_MODEL_WRITE, .off = 0, .len = 4096 };

	rig_up(&r, 4, 512);
	r.f.now = 10 * MS;
	/* the backing store took 300 us: the model adds the remaining 1700 */
	r.f.now += 300 * US;
	cr_assert_eq(complete(r.m, &w, 10 * MS), 1700 * US);
	cr_assert_eq(r.f.now, 12 * MS);
	/* back to back at QD1: each one 2 ms after the last */
	for (int i = 0; i < 10; i++)
		complete(r.m, &w, r.f.now);
	cr_assert_eq(r.f.now, 32 * MS);
	sfs_model_free(r.m);
}

Test(model, n_channels_then_queue)
{
	struct rig r;
	struct sfs_model_req w = { .op = SFS_MODEL_WRITE, .off = 0, .len = 4096 };
	uint64_t done[9];

	rig_up(&r, 4, 512);
	/* nine arrive at once: four finish at 2 ms, four at 4 ms, the ninth at 6 ms */
	for (int i = 0; i < 9; i++)
		done[i] = sfs_model_schedule(r.m, &w, 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(done[i], 2 * MS);
	for (int i = 4; i < 8; i++)
		cr_assert_eq(done[i], 4 * MS);
	cr_assert_eq(done[8], 6 * MS);
	/* a request arriving after the channels are idle again waits for nothing */
	cr_assert_eq(sfs_model_schedule(r.m, &w, 100 * MS), 102 * MS);
	sfs_model_free(r.m);
}

Test(model, throughput_stops_scaling_at_channels)
{
	struct rig r;
	struct sfs_model_req w = { .op = SFS_MODEL_WRITE, .len = 4096 };
	uint64_t last = 0;

	rig_up(&r, 4, 512);
	/* 8 in flight, each resubmitted at its completion, 800 requests: 2000 per second */
	uint64_t inflight[8] = { 0 };

	for (int n = 0; n < 800; n++) {
		int k = n % 8;

		inflight[k] = sfs_model_schedule(r.m, &w, inflight[k]);
		if (inflight[k] > last)
			last = inflight[k];
	}
	cr_assert_eq(last, 400 * MS);
	sfs_model_free(r.m);
}

Test(model, channels_from_best_iops)
{
	struct sfs_profile p = flat(1);

	/* 4 KiB reads take 1000 us, writes 2000 us: 4000 reads/s need 4 channels, 2000 writes/s 4 */
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 4000, 32), 4);
	cr_assert_eq(sfs_profile_channels_for(&p, true, 4096, 2000, 32), 4);
	/* a best below 4 channels' rounds to the channels that reach it */
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 3300, 32), 3);
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 4600, 32), 5);
	/* a larger size takes its own service time: 8 KiB reads at the 4 KiB rate, 2000 us */
	cr_assert_eq(sfs_profile_channels_for(&p, false, 8192, 4000, 32), 8);
	/* within [1, max_qd], and 1 for no figure */
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 1e7, 32), 32);
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 1e7, 0), 1);
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 100, 32), 1);
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, 0, 32), 1);
	cr_assert_eq(sfs_profile_channels_for(&p, false, 4096, NAN, 32), 1);
}

Test(model, flush_time)
{
	struct rig r;
	struct sfs_model_req fl = { .op = SFS_MODEL_FLUSH };

	rig_up(&r, 1, 512);
	cr_assert_eq(sfs_model_cost_ns(r.m, &fl), 500 * US);
	cr_assert_eq(complete(r.m, &fl, 0), 500 * US);
	sfs_model_free(r.m);
}

Test(model, partial_physical_sector_costs_a_read)
{
	struct rig r;
	struct sfs_model_req w = { .op = SFS_MODEL_WRITE, .off = 0, .len = 4096 };

	rig_up(&r, 1, 4096);
	cr_assert_eq(sfs_model_cost_ns(r.m, &w), 2000 * US);           /* whole: no RMW */
	w.len = 512;
	cr_assert_eq(sfs_model_cost_ns(r.m, &w), 3000 * US);           /* + one 4K read */
	w.off = 3584;
	w.len = 1024;                                                /* straddles two */
	cr_assert_eq(sfs_model_cost_ns(r.m, &w), 4000 * US);
	sfs_model_free(r.m);

	r.p.partial_write_us = 250;
	r.m = mk(&r.p, 4096, &r.f);
	cr_assert_eq(sfs_model_cost_ns(r.m, &w), 2500 * US);
	sfs_model_free(r.m);

	/* a 512n drive has no partial sectors */
	r.m = mk(&r.p, 512, &r.f);
	cr_assert_eq(sfs_model_cost_ns(r.m, &w), 2000 * US);
	sfs_model_free(r.m);

	cr_assert_eq(sfs_model_partial_sectors(4096, 0, 8192), 0);
	cr_assert_eq(sfs_model_partial_sectors(4096, 512, 512), 1);
	cr_assert_eq(sfs_model_partial_sectors(4096, 0, 4608), 1);
	cr_assert_eq(sfs_model_partial_sectors(4096, 512, 8192), 2);
}

Test(model, zeroing_with_and_without_offload)
{
	struct fake f = { 0 };
	struct sfs_profile p = flat(1);
	struct sfs_model *m;
	struct sfs_model_req w = { .op = SFS_MODEL_WRITE, .len = 4096, .zeroed = 1044480 };

	p.nwrite = 2;
	p.write[1] = (struct sfs_profile_point){ 1 << 20, 4000 };
	m = mk(&p, 512, &f);
	/* offload: 100 us + 1044480 bytes at 1000 bytes/us */
	w.offload = true;
	cr_assert_eq(sfs_model_cost_ns(m, &w), 2000 * US + 100 * US + 1044480 * 1 /* ns */);
	/* no offload: the zeros are a write of 1044480 bytes on the curve */
	w.offload = false;
	cr_assert_eq(sfs_model_cost_ns(m, &w),
		     2000 * US + (uint64_t)llround(sfs_profile_service_us(&p, true, 1044480) * 1000));
	cr_assert_gt(sfs_model_cost_ns(m, &w), 5990 * US);
	w.zeroed = 0;
	cr_assert_eq(sfs_model_cost_ns(m, &w), 2000 * US);
	sfs_model_free(m);
}

Test(model, floor_not_slower)
{
	struct rig r;
	struct sfs_model_req rd = { .op = SFS_MODEL_READ, .len = 4096 };

	rig_up(&r, 1, 512);
	r.f.now = 5 * MS;     /* the store took 5 ms; the model says 1 */
	cr_assert_eq(complete(r.m, &rd, 0), 0);
	cr_assert_eq(r.f.sleeps, 0);
	cr_assert_eq(r.f.now, 5 * MS);
	sfs_model_free(r.m);
}

static int parse(const char *json, struct sfs_profile *p, char *err)
{
	return sfs_profile_parse(json, strlen(json), "t.json", "t", p, err, 256);
}

Test(profile, parse_and_errors)
{
	struct sfs_profile p;
	char err[256];

	cr_assert_eq(parse("{\"name\": \"x\", \"channels\": 4, \"source\": \"test\","
			   "\"read\": [{\"size\": 512, \"us\": 10}, {\"size\": \"8M\", \"us\": 2400}],"
			   "\"write\": [{\"size\": \"4K\", \"us\": 2000}], \"flush_us\": 30,"
			   "\"partial_write_us\": null, \"zero_offload_mb_s\": 2000, \"zero_offload_us\": 5,"
			   "\"rotational\": false}", &p, err), 0, "%s", err);
	cr_assert_str_eq(p.name, "x");
	cr_assert_eq(p.channels, 4);
	cr_assert_eq(p.nread, 2);
	cr_assert_eq(p.read[1].size, 8u << 20);
	cr_assert_float_eq(p.flush_us, 30, 1e-9);
	cr_assert(p.partial_write_us < 0);

	cr_assert_eq(parse("{\"read\": [{\"size\": 512, \"us\": 1}], \"write\": [{\"size\": 512, \"us\": 1}]}",
			   &p, err), 0);
	cr_assert_str_eq(p.name, "t");
	cr_assert_eq(p.channels, 1);

	cr_assert_eq(parse("{\"read\": [{\"size\": 512, \"us\": 1}], \"write\": [{\"size\": 512, \"us\": 1}],"
			   "\"speed\": 1}", &p, err), -EINVAL);
	cr_assert(strstr(err, "t.json") && strstr(err, "'speed'") && strstr(err, "unknown key"), "%s", err);
	cr_assert_eq(parse("{\"read\": [{\"size\": 4096, \"us\": 1}, {\"size\": 512, \"us\": 1}],"
			   "\"write\": [{\"size\": 512, \"us\": 1}]}", &p, err), -EINVAL);
	cr_assert(strstr(err, "'read'") && strstr(err, "increase"), "%s", err);
	cr_assert_eq(parse("{\"read\": [{\"size\": 512, \"us\": 1}]}", &p, err), -EINVAL);
	cr_assert(strstr(err, "'write'") && strstr(err, "required"), "%s", err);
	cr_assert_eq(parse("{\"read\": [{\"size\": 512, \"us\": -1}], \"write\": [{\"size\": 512, \"us\": 1}]}",
			   &p, err), -EINVAL);
	cr_assert_eq(parse("{\"channels\": 0, \"read\": [{\"size\": 512, \"us\": 1}],"
			   "\"write\": [{\"size\": 512, \"us\": 1}]}", &p, err), -EINVAL);
	cr_assert(strstr(err, "'channels'"), "%s", err);
	cr_assert_eq(parse("[1]", &p, err), -EINVAL);
}

Test(profile, dump_parses_back)
{
	struct sfs_profile p = flat(8), q;
	char err[256], *s;

	p.nwrite = 2;
	p.write[1] = (struct sfs_profile_point){ 8 << 20, 9000.5 };
	p.rotational = true;
	s = sfs_profile_dump(&p, "measured");
	cr_assert_not_null(s);
	cr_assert_eq(sfs_profile_parse(s, strlen(s), "d", NULL, &q, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(q.name, "flat");
	cr_assert_eq(q.channels, 8);
	cr_assert_eq(q.nwrite, 2);
	cr_assert_eq(q.write[1].size, 8u << 20);
	cr_assert_float_eq(q.write[1].us, 9000.5, 1e-6);
	cr_assert_float_eq(q.zero_offload_mb_s, 1000, 1e-6);
	cr_assert(q.rotational);
	cr_assert(q.partial_write_us < 0);
	free(s);
}

Test(profile, load_by_name_and_path)
{
	char dir[] = "/tmp/sfs-prof-XXXXXX", path[256], err[256];
	const char *body = "{\"read\": [{\"size\": 512, \"us\": 1}], \"write\": [{\"size\": 512, \"us\": 2}]}";
	struct sfs_profile p;
	FILE *fp;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/fast.json", dir);
	fp = fopen(path, "w");
	cr_assert_not_null(fp);
	fputs(body, fp);
	fclose(fp);
	setenv("SECTORFS_PROFILE_DIR", dir, 1);
	cr_assert_eq(sfs_profile_load(AT_FDCWD, "fast", &p, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(p.name, "fast");
	cr_assert_eq(sfs_profile_load(AT_FDCWD, path, &p, err, sizeof err), 0, "%s", err);
	cr_assert_eq(sfs_profile_load(AT_FDCWD, "nosuch", &p, err, sizeof err), -ENOENT);
	cr_assert(strstr(err, "nosuch"), "%s", err);
	unlink(path);
	rmdir(dir);
}
