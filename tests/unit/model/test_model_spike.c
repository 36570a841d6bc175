/* SPDX-License-Identifier: MIT */
/*
 * test_model_spike.c - latency spikes in the drive model
 * (core/model/model.c, spike.h): the profile key latency_spike, and what
 * it adds to requests.
 *
 * Proves:
 *   - a profile's latency_spike {"every": 3, "extra_us": 500} adds 500 us
 *     to the 3rd, 6th, ... request queued, holding its channel: on one
 *     channel every request behind it completes 500 us later too;
 *   - with a probability the spiked requests are a function of the seed
 *     (the same seed, the same requests; another seed, others), about
 *     the given share of them;
 *   - a profile without the key is priced as before; a bad spike is
 *     refused naming the file and the key; the dump writes it back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "model/model.h"

#define US 1000ull

static struct sfs_profile parse(const char *extra)
{
	char json[512], err[512] = "";
	struct sfs_profile p;

	snprintf(json, sizeof(json), "{\"name\": \"t\", \"channels\": 1, \"read\": [{\"size\": 4096, \"us\": 100}], "
		 "\"write\": [{\"size\": 4096, \"us\": 100}]%s}", extra);
	cr_assert_eq(sfs_profile_parse(json, strlen(json), "t.json", NULL, &p, err, sizeof(err)), 0, "%s", err);
	return p;
}

/* Completion times of n 4 KiB reads all queued at time 0 on profile p. */
static void run(const struct sfs_profile *p, uint64_t *done, unsigned n)
{
	struct sfs_model *m;
	struct sfs_model_req rq = { .op = SFS_MODEL_READ, .off = 0, .len = 4096 };

	cr_assert_eq(sfs_model_new(p, 4096, NULL, &m), 0);
	for (unsigned i = 0; i < n; i++)
		done[i] = sfs_model_schedule(m, &rq, 0);
	sfs_model_free(m);
}

Test(model_spike, every_nth_holds_its_channel)
{
	struct sfs_profile p = parse(", \"latency_spike\": {\"every\": 3, \"extra_us\": 500}");
	uint64_t done[6];

	run(&p, done, 6);
	cr_expect_eq(done[0], 100 * US);
	cr_expect_eq(done[1], 200 * US);
	cr_expect_eq(done[2], 800 * US, "the 3rd request spikes");
	cr_expect_eq(done[3], 900 * US, "the one behind it waits");
	cr_expect_eq(done[4], 1000 * US);
	cr_expect_eq(done[5], 1600 * US, "the 6th spikes");
}

Test(model_spike, none_without_the_key)
{
	struct sfs_profile p = parse("");
	uint64_t done[4];

	cr_expect(!sfs_spike_on(&p.spike));
	run(&p, done, 4);
	for (unsigned i = 0; i < 4; i++)
		cr_expect_eq(done[i], (i + 1) * 100 * US);
}

/* How many of 1000 requests spike under probability 0.1 and seed, and a fingerprint of which. */
static unsigned spiked(uint64_t seed, uint64_t *print)
{
	char extra[160];
	struct sfs_profile p;
	uint64_t done[1000], prev = 0;
	unsigned k = 0;

	snprintf(extra, sizeof(extra), ", \"latency_spike\": {\"probability\": 0.1, \"extra_us\": 1000, \"seed\": %llu}",
		 (unsigned long long)seed);
	p = parse(extra);
	run(&p, done, 1000);
	*print = 0;
	for (unsigned i = 0; i < 1000; i++) {
		if (done[i] - prev > 100 * US) {
			k++;
			*print = *print * 31 + i;
		}
		prev = done[i];
	}
	return k;
}

Test(model_spike, probability_from_the_seed)
{
	uint64_t a, b, c;
	unsigned ka = spiked(7, &a), kb = spiked(7, &b);

	spiked(8, &c);

	cr_expect_eq(ka, kb);
	cr_expect_eq(a, b, "the same seed spikes the same requests");
	cr_expect_neq(a, c, "another seed others");
	cr_expect(ka > 60 && ka < 140, "%u of 1000 spiked at p 0.1", ka);
}

Test(model_spike, bad_spike_named_and_dump_keeps_it)
{
	const char *json = "{\"name\": \"t\", \"read\": [{\"size\": 4096, \"us\": 1}], \"write\": [{\"size\": 4096, \"us\": 1}], "
			   "\"latency_spike\": {\"every\": 0, \"extra_us\": 5}}";
	struct sfs_profile p, back;
	char err[512] = "", *text;

	cr_expect_eq(sfs_profile_parse(json, strlen(json), "t.json", NULL, &p, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "t.json: key 'latency_spike': every must be an integer >= 1"), "%s", err);
	p = parse(", \"latency_spike\": {\"every\": 10, \"extra_us\": 250, \"seed\": 3}");
	text = sfs_profile_dump(&p, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(sfs_profile_parse(text, strlen(text), "dump", NULL, &back, err, sizeof(err)), 0, "%s\n%s", err, text);
	cr_expect_eq(back.spike.every, 10);
	cr_expect_eq(back.spike.extra_ns, 250 * US);
	cr_expect_eq(back.spike.seed, 3);
	free(text);
}
