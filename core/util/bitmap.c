/* SPDX-License-Identifier: MIT */
/*
 * bitmap.c - a bitmap of 64-bit words in memory (bitmap.h): the bit
 * operations, counting and searching, without any file.  The allocation
 * map (map/map.c) keeps its bits and its dirty pages in these and adds
 * the file, the count and the page bookkeeping around them.
 *
 * Memory order: a set or clear is a release read-modify-write of its
 * word and a test an acquire load, so a reader that sees a bit set sees
 * what was written before it was set (the map's data before its bit);
 * counts and searches read words with the same acquire loads, sfs_bitmap_any
 * with relaxed ones (a hint, as the dirty check it serves).
 */
#include "bitmap.h"

static inline uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

bool sfs_bitmap_test(const uint64_t *w, uint64_t i)
{
	return (load(&w[i / 64]) >> (i % 64)) & 1;
}

bool sfs_bitmap_set(uint64_t *w, uint64_t i)
{
	uint64_t bit = 1ull << (i % 64);

	return !(__atomic_fetch_or(&w[i / 64], bit, __ATOMIC_RELEASE) & bit);
}

bool sfs_bitmap_clear(uint64_t *w, uint64_t i)
{
	uint64_t bit = 1ull << (i % 64);

	return (__atomic_fetch_and(&w[i / 64], ~bit, __ATOMIC_RELEASE) & bit) != 0;
}

uint64_t sfs_bitmap_set_range(uint64_t *w, uint64_t first, uint64_t end)
{
	uint64_t n = 0;

	for (uint64_t b = first; b < end; b++) {
		if (b % 64 == 0 && b + 64 <= end) {
			uint64_t old = __atomic_exchange_n(&w[b / 64], ~0ull, __ATOMIC_RELEASE);

			n += 64 - (uint64_t)__builtin_popcountll(old);
			b += 63;
			continue;
		}
		n += sfs_bitmap_set(w, b);
	}
	return n;
}

uint64_t sfs_bitmap_count(const uint64_t *w, uint64_t nbits)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < nbits / 64; i++)
		n += (uint64_t)__builtin_popcountll(load(&w[i]));
	if (nbits % 64)
		n += (uint64_t)__builtin_popcountll(load(&w[nbits / 64]) & ((1ull << (nbits % 64)) - 1));
	return n;
}

void sfs_bitmap_keep(uint64_t *w, uint64_t nbits, uint64_t nwords)
{
	uint64_t i = nbits / 64;

	if (i >= nwords)
		return;
	if (nbits % 64)
		w[i++] &= (1ull << (nbits % 64)) - 1;
	for (; i < nwords; i++)
		w[i] = 0;
}

uint64_t sfs_bitmap_next(const uint64_t *w, uint64_t nbits, uint64_t from, bool set)
{
	while (from < nbits) {
		uint64_t word = load(&w[from / 64]);

		if (!set)
			word = ~word;
		word &= ~0ull << (from % 64);
		if (word) {
			uint64_t b = (from & ~63ull) + (uint64_t)__builtin_ctzll(word);

			return b < nbits ? b : nbits;
		}
		from = (from & ~63ull) + 64;
	}
	return nbits;
}

bool sfs_bitmap_any(const uint64_t *w, uint64_t nwords)
{
	for (uint64_t i = 0; i < nwords; i++)
		if (__atomic_load_n(&w[i], __ATOMIC_RELAXED))
			return true;
	return false;
}
