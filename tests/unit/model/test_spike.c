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
 * for the same seed and others for another (the JSON object's rules are
 * contract/test_failkeys.c's).
 */
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
