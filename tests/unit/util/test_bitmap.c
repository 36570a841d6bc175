/* SPDX-License-Identifier: MIT */
/*
 * test_bitmap.c - the in-memory bitmap of core/util/bitmap.c, on its own (no
 * map file; test_allocmap.c tests it as the allocation map uses it).
 *
 * Proves: bit i is bit i % 64 of word i / 64; set and clear say whether
 * they changed the bit; a range set counts only the bits that were clear,
 * whole words and partial ones at either end, and touches nothing outside
 * it; the count stops at nbits; keep clears everything from nbits on, in
 * the last partial word too, and nothing before; the search for the next
 * set or clear bit crosses words, starts inside one, and answers nbits
 * past the last bit even when the last word holds more; any sees a single
 * bit anywhere; threads setting and clearing distinct bits of the same
 * words at once lose none of them.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/bitmap.h"

#define NW 8u
#define NBITS (NW * 64u)

static uint64_t w[NW];

static void setup(void)
{
	memset(w, 0, sizeof(w));
}

TestSuite(bitmap, .init = setup, .timeout = 30);

Test(bitmap, set_test_clear_one_bit)
{
	cr_expect(sfs_bitmap_set(w, 70), "clear before");
	cr_expect_eq(w[1], 1ull << 6, "bit 70 is bit 6 of word 1");
	cr_expect(sfs_bitmap_test(w, 70));
	cr_expect_not(sfs_bitmap_test(w, 69));
	cr_expect_not(sfs_bitmap_test(w, 71));
	cr_expect_not(sfs_bitmap_set(w, 70), "already set");
	cr_expect(sfs_bitmap_clear(w, 70), "set before");
	cr_expect_not(sfs_bitmap_clear(w, 70), "already clear");
	cr_expect_not(sfs_bitmap_test(w, 70));
	cr_expect(sfs_bitmap_set(w, 63));
	cr_expect(sfs_bitmap_set(w, 64));
	cr_expect_eq(w[0], 1ull << 63);
	cr_expect_eq(w[1], 1ull);
}

Test(bitmap, set_range_counts_what_was_clear)
{
	sfs_bitmap_set(w, 10);
	sfs_bitmap_set(w, 100);
	sfs_bitmap_set(w, 200);
	/* [5, 300): a partial word, whole words 1-3 (one of them exchanged with a bit set), a
	 * partial word at the end */
	cr_expect_eq(sfs_bitmap_set_range(w, 5, 300), 295 - 3);
	cr_expect_not(sfs_bitmap_test(w, 4));
	cr_expect(sfs_bitmap_test(w, 5));
	cr_expect(sfs_bitmap_test(w, 299));
	cr_expect_not(sfs_bitmap_test(w, 300));
	cr_expect_eq(w[1], ~0ull);
	cr_expect_eq(sfs_bitmap_count(w, NBITS), 295);
	cr_expect_eq(sfs_bitmap_set_range(w, 0, 320), 25, "0-4 and 300-319");
	cr_expect_eq(sfs_bitmap_set_range(w, 0, 320), 0, "all set already");
	cr_expect_eq(sfs_bitmap_set_range(w, 400, 400), 0, "empty range");
	cr_expect_eq(sfs_bitmap_set_range(w, 448, 512), 64, "the last word whole");
	cr_expect_eq(w[7], ~0ull);
}

Test(bitmap, count_stops_at_nbits_and_keep_clears_past_it)
{
	for (unsigned i = 0; i < NW; i++)
		w[i] = ~0ull;
	cr_expect_eq(sfs_bitmap_count(w, NBITS), NBITS);
	cr_expect_eq(sfs_bitmap_count(w, 130), 130);
	cr_expect_eq(sfs_bitmap_count(w, 0), 0);
	sfs_bitmap_keep(w, 130, NW);
	cr_expect_eq(w[2], 3ull, "bits 128 and 129 kept in the partial word");
	for (unsigned i = 3; i < NW; i++)
		cr_expect_eq(w[i], 0, "word %u cleared", i);
	cr_expect_eq(w[0], ~0ull);
	cr_expect_eq(sfs_bitmap_count(w, NBITS), 130);
	sfs_bitmap_keep(w, 128, NW);
	cr_expect_eq(w[2], 0, "a whole-word boundary");
	cr_expect_eq(sfs_bitmap_count(w, NBITS), 128);
	sfs_bitmap_keep(w, NBITS, NW);
	cr_expect_eq(sfs_bitmap_count(w, NBITS), 128, "nothing past the words");
}

Test(bitmap, next_set_and_clear)
{
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 0, true), NBITS, "none set");
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 0, false), 0);
	sfs_bitmap_set(w, 3);
	sfs_bitmap_set(w, 200);
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 0, true), 3);
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 3, true), 3, "from is included");
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 4, true), 200, "across words");
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 201, true), NBITS);
	cr_expect_eq(sfs_bitmap_next(w, 150, 4, true), 150, "past nbits is none");
	sfs_bitmap_set_range(w, 0, 130);
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 0, false), 130);
	cr_expect_eq(sfs_bitmap_next(w, NBITS, 131, false), 131);
	cr_expect_eq(sfs_bitmap_next(w, 100, 0, false), 100, "clear bits past nbits are not found");
	cr_expect_eq(sfs_bitmap_next(w, NBITS, NBITS, false), NBITS);
}

Test(bitmap, any)
{
	cr_expect_not(sfs_bitmap_any(w, NW));
	sfs_bitmap_set(w, NBITS - 1);
	cr_expect(sfs_bitmap_any(w, NW));
	cr_expect_not(sfs_bitmap_any(w, NW - 1), "only the words it is given");
}

#define NTHREAD 4
#define ROUNDS 2000

static void *flip(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	/* thread t owns the bits i with i % NTHREAD == t: every word is shared */
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = t; i < NBITS; i += NTHREAD)
			cr_assert(sfs_bitmap_set(w, i));
		for (unsigned i = t; i < NBITS; i += NTHREAD)
			if (i % (2 * NTHREAD) != t || r + 1 < ROUNDS)
				cr_assert(sfs_bitmap_clear(w, i));
	}
	return NULL;
}

Test(bitmap, concurrent_bits_of_the_same_words)
{
	pthread_t th[NTHREAD];

	for (uintptr_t t = 0; t < NTHREAD; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, flip, (void *)t), 0);
	for (unsigned t = 0; t < NTHREAD; t++)
		pthread_join(th[t], NULL);
	/* each thread left set the bits i with i % (2 * NTHREAD) == t */
	cr_expect_eq(sfs_bitmap_count(w, NBITS), NBITS / 2);
	for (unsigned i = 0; i < NBITS; i++)
		cr_expect_eq(sfs_bitmap_test(w, i), i % (2 * NTHREAD) < NTHREAD, "bit %u", i);
}
