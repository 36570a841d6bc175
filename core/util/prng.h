/* SPDX-License-Identifier: MIT */
/*
 * prng.h - seeded draws for the failure model: the outcome of a power cut
 * and the latency spikes.
 *
 * The generator is splitmix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the seeding generator of
 * xoshiro256): a state that advances by the golden gamma
 * 0x9e3779b97f4a7c15, put through a 64-bit finaliser (sfs_mix64).  From
 * state 0 its first outputs are 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
 * 0x06c45d188009454f (test_prng.c holds it to them).
 *
 * The model does not draw from one stream in turn: the outcome of the k-th
 * atomic unit of the write numbered n would then depend on how many draws
 * every write before it took.  It draws by address instead,
 *
 *     sfs_draw(seed, n, k) = mix(mix(seed + G * (n + 1)) + G * (k + 1))
 *
 * (G the gamma, mix sfs_mix64), a counter-based draw: the same seed, write
 * number and unit give the same value whatever else was drawn, so a cut's
 * outcome depends only on the seed and the sequence of writes.
 */
#ifndef SFS_PRNG_H
#define SFS_PRNG_H

#include <stdint.h>

#define SFS_PRNG_GAMMA 0x9e3779b97f4a7c15ull

/* splitmix64's finaliser: a bijection of 64-bit values that mixes every input bit into every
 * output bit.  Never fails. */
static inline uint64_t sfs_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next output of the splitmix64 stream whose state is *state (advanced).  Never fails. */
static inline uint64_t sfs_splitmix64(uint64_t *state)
{
	*state += SFS_PRNG_GAMMA;
	return sfs_mix64(*state);
}

/* The draw at address (a, b) of seed: a pure function of its three arguments. */
static inline uint64_t sfs_draw(uint64_t seed, uint64_t a, uint64_t b)
{
	return sfs_mix64(sfs_mix64(seed + SFS_PRNG_GAMMA * (a + 1)) + SFS_PRNG_GAMMA * (b + 1));
}

/* A draw as a number in [0, 1): its top 53 bits, so every double of the form k / 2^53. */
static inline double sfs_draw_unit(uint64_t x)
{
	return (double)(x >> 11) * 0x1.0p-53;
}

#endif
