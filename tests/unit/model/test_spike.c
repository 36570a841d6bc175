/* SPDX-License-Identifier: MIT */
/*
 * test_spike.c - latency spikes (core/model/spike.c) and the seeded draws under
 * them and under power cuts (core/util/prng.h).
 *
 * Proves: splitmix64 gives the published outputs from state 0; a draw is
 * a function of its seed and addresses only, and different seeds and
 * addresses give different draws; draws as numbers fall in [0, 1) and a
 * probability p keeps about p of them; "every": N spikes exactly the Nth,
 * 2Nth, ... request; "probability" spikes about that share, the same ones
 * for the same seed and others for another; the JSON object's rules are
 * enforced with the file and key named.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/prng.h"
#include "model/spike.h"

Test(prng, splitmix64_known_answers)
{
	uint64_t s = 0;

	cr_expect_eq(sfs_splitmix64(&s), 0xe220a8397b1dcdafull);
	cr_expect_eq(sfs_splitmix64(&s), 0x6e789e6aa1b965f4ull);
	cr_expect_eq(sfs_splitmix64(&s), 0x06c45d188009454full);
}

Test(prng, draws_are_addressed)
{
	unsigned below = 0;

	cr_expect_eq(sfs_draw(42, 7, 3), sfs_draw(42, 7, 3));
	cr_expect_neq(sfs_draw(42, 7, 3), sfs_draw(43, 7, 3));
	cr_expect_neq(sfs_draw(42, 7, 3), sfs_draw(42, 8, 3));
	cr_expect_neq(sfs_draw(42, 7, 3), sfs_draw(42, 3, 7), "the addresses are ordered");
	for (uint64_t i = 0; i < 100000; i++) {
		double u = sfs_draw_unit(sfs_draw(1, i, 0));

		cr_assert(u >= 0 && u < 1);
		below += u < 0.25;
	}
	cr_expect(below > 24000 && below < 26000, "%u of 100000 below 0.25", below);
	cr_expect_eq(sfs_draw_unit(UINT64_MAX), 1 - 0x1.0p-53);
}

Test(spike, every_nth)
{
	struct sfs_spike s = { .every = 4, .extra_ns = 5000 };

	cr_expect(sfs_spike_on(&s));
	for (uint64_t n = 0; n < 40; n++)
		cr_expect_eq(sfs_spike_extra_ns(&s, n), (n + 1) % 4 == 0 ? 5000u : 0u, "request %llu",
			     (unsigned long long)n);
	s.extra_ns = 0;
	cr_expect(!sfs_spike_on(&s));
	cr_expect_eq(sfs_spike_extra_ns(&s, 3), 0);
}

Test(spike, probability_by_seed)
{
	struct sfs_spike a = { .probability = 0.01, .extra_ns = 1, .seed = 5 }, b = a;
	unsigned na = 0, same = 0;

	b.seed = 6;
	for (uint64_t n = 0; n < 100000; n++) {
		uint64_t x = sfs_spike_extra_ns(&a, n), y = sfs_spike_extra_ns(&b, n);

		cr_assert_eq(x, sfs_spike_extra_ns(&a, n), "the same request, the same answer");
		na += x != 0;
		same += x && y;
	}
	cr_expect(na > 900 && na < 1100, "%u of 100000 spiked at 1%%", na);
	cr_expect_lt(same, 30, "another seed spikes other requests (%u in common)", same);
}

static int parse(const char *text, struct sfs_spike *s, char *err, size_t errlen)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);
	int rc;

	cr_assert_not_null(v, "%s", je.text);
	rc = sfs_spike_parse(v, "p.json", "latency_spike", s, err, errlen);
	json_decref(v);
	return rc;
}

Test(spike, parse)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "[1]", "p.json: key 'latency_spike': expected {\"probability\": P or \"every\": N, \"extra_us\": US}" },
		{ "{\"every\": 10}", "p.json: key 'latency_spike': extra_us is required" },
		{ "{\"extra_us\": 10}", "p.json: key 'latency_spike': probability or every is required" },
		{ "{\"every\": 0, \"extra_us\": 10}", "p.json: key 'latency_spike': every must be an integer >= 1" },
		{ "{\"every\": 1.5, \"extra_us\": 10}", "p.json: key 'latency_spike': every must be an integer >= 1" },
		{ "{\"probability\": 1.5, \"extra_us\": 10}", "p.json: key 'latency_spike': probability must be from 0 to 1" },
		{ "{\"probability\": \"high\", \"extra_us\": 10}", "p.json: key 'latency_spike': probability must be from 0 to 1" },
		{ "{\"every\": 2, \"extra_us\": 0}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 60000001}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 1e12}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 5, \"seed\": -1}", "p.json: key 'latency_spike': seed must be an integer >= 0" },
		{ "{\"every\": 2, \"extra_us\": 5, \"when\": 1}", "p.json: key 'latency_spike': unknown key 'when'" },
	};
	struct sfs_spike s;
	char err[256];

	cr_assert_eq(parse("{\"probability\": 0.001, \"extra_us\": 50000, \"seed\": 7}", &s, err, sizeof(err)), 0, "%s",
		     err);
	cr_expect(s.probability == 0.001 && s.every == 0 && s.extra_ns == 50000000 && s.seed == 7);
	cr_assert_eq(parse("{\"every\": 1000, \"extra_us\": 20000.5}", &s, err, sizeof(err)), 0, "%s", err);
	cr_expect(s.every == 1000 && s.extra_ns == 20000500 && s.probability == 0);
	cr_assert_eq(parse("{\"probability\": 0, \"extra_us\": 1}", &s, err, sizeof(err)), 0, "%s", err);
	cr_expect(!sfs_spike_on(&s), "probability 0 is allowed and never spikes");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(parse(bad[i].text, &s, err, sizeof(err)), -EINVAL, "%s", bad[i].text);
		cr_expect_str_eq(err, bad[i].msg);
	}
}
