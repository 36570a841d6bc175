/* SPDX-License-Identifier: MIT */
/*
 * test_extents.c - tagged range sets (core/util/extents.c).
 *
 * Proves: setting splits, replaces and merges as drawn in extents.c (the
 * array is always sorted, disjoint and merged); clearing by tag leaves
 * other tags; lookups find the first meeting extent; and, against a
 * position-by-position array, 20000 random sets and clears over 256
 * positions leave exactly the same tags; equality looks at the fields,
 * not at the padding between them.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/extents.h"
#include "util/prng.h"

/* sorted, disjoint, non-empty, tagged, merged */
static void expect_canonical(const struct sfs_extents *e)
{
	for (size_t i = 0; i < e->n; i++) {
		cr_assert_lt(e->v[i].start, e->v[i].end, "extent %zu is empty", i);
		cr_assert_neq(e->v[i].tag, 0u, "extent %zu has tag 0", i);
		if (i)
			cr_assert(e->v[i - 1].end < e->v[i].start ||
				  (e->v[i - 1].end == e->v[i].start && e->v[i - 1].tag != e->v[i].tag),
				  "extents %zu and %zu overlap or should be merged", i - 1, i);
	}
}

Test(extents, split_replace_merge)
{
	struct sfs_extents e;

	sfs_ext_init(&e);
	cr_assert_eq(sfs_ext_set(&e, 10, 20, 1), 0);
	cr_assert_eq(sfs_ext_set(&e, 30, 40, 1), 0);
	cr_assert_eq(sfs_ext_set(&e, 20, 30, 1), 0);     /* fills the gap: one extent */
	cr_assert_eq(e.n, 1);
	cr_expect(e.v[0].start == 10 && e.v[0].end == 40);
	cr_assert_eq(sfs_ext_set(&e, 15, 25, 2), 0);     /* splits it */
	cr_assert_eq(e.n, 3);
	cr_expect(e.v[0].end == 15 && e.v[1].start == 15 && e.v[1].end == 25 && e.v[1].tag == 2 &&
		  e.v[2].start == 25 && e.v[2].end == 40);
	cr_assert_eq(sfs_ext_set(&e, 12, 38, 0), 0);     /* clears across all three */
	cr_assert_eq(e.n, 2);
	cr_expect(e.v[0].start == 10 && e.v[0].end == 12 && e.v[1].start == 38 && e.v[1].end == 40);
	cr_assert_eq(sfs_ext_set(&e, 5, 50, 4), 0);      /* covers everything */
	cr_assert_eq(e.n, 1);
	cr_expect_eq(sfs_ext_count(&e, 4), 45);
	cr_assert_eq(sfs_ext_set(&e, 7, 7, 1), 0);       /* empty: nothing */
	cr_assert_eq(e.n, 1);
	cr_assert_eq(sfs_ext_set(&e, UINT64_MAX - 2, UINT64_MAX, 1), 0);
	cr_expect_eq(sfs_ext_count(&e, 1), 2);
	sfs_ext_free(&e);
	cr_expect_eq(e.n, 0);
}

Test(extents, lookups_and_clear_by_tag)
{
	struct sfs_extents e, c;
	uint64_t first = 0;

	sfs_ext_init(&e);
	sfs_ext_init(&c);
	cr_assert_eq(sfs_ext_set(&e, 10, 20, 1), 0);
	cr_assert_eq(sfs_ext_set(&e, 20, 30, 2), 0);
	cr_assert_eq(sfs_ext_set(&e, 40, 50, 1), 0);
	cr_expect_eq(sfs_ext_find(&e, 0), 0);
	cr_expect_eq(sfs_ext_find(&e, 20), 1);
	cr_expect_eq(sfs_ext_find(&e, 35), 2);
	cr_expect_eq(sfs_ext_find(&e, 50), 3);
	cr_expect(!sfs_ext_any(&e, 30, 40, 3, NULL));
	cr_expect(sfs_ext_any(&e, 25, 45, 1, &first));
	cr_expect_eq(first, 40, "tag 1 first met at 40, not in [20, 30) which is tag 2");
	cr_expect(sfs_ext_any(&e, 15, 16, 1, &first));
	cr_expect_eq(first, 15);
	cr_assert_eq(sfs_ext_copy(&c, &e), 0);
	cr_assert_eq(sfs_ext_clear_tag(&e, 0, 100, 1), 0);
	cr_assert_eq(e.n, 1);
	cr_expect(e.v[0].start == 20 && e.v[0].end == 30 && e.v[0].tag == 2);
	cr_expect_eq(c.n, 3, "the copy is its own");
	sfs_ext_free(&e);
	sfs_ext_free(&c);
}

Test(extents, random_against_an_array)
{
	enum { N = 256 };
	unsigned char ref[N];
	struct sfs_extents e;
	uint64_t st = 12345;

	memset(ref, 0, sizeof(ref));
	sfs_ext_init(&e);
	for (int round = 0; round < 20000; round++) {
		uint64_t a = sfs_splitmix64(&st) % N, b = sfs_splitmix64(&st) % (N + 1), r = sfs_splitmix64(&st);
		unsigned tag = (unsigned)(r % 4);   /* 0 clears */

		if (a > b) {
			uint64_t t = a;

			a = b;
			b = t;
		}
		if (r >> 60 == 0) {                 /* now and then: clear one tag's bits */
			unsigned mask = 1u << (r % 3);

			cr_assert_eq(sfs_ext_clear_tag(&e, a, b, mask), 0);
			for (uint64_t i = a; i < b; i++)
				if (ref[i] & mask)
					ref[i] = 0;
		} else {
			cr_assert_eq(sfs_ext_set(&e, a, b, tag == 3 ? 4 : tag), 0);
			memset(ref + a, tag == 3 ? 4 : (int)tag, b - a);
		}
		expect_canonical(&e);
		for (uint64_t i = 0, k = 0; i < N; i++) {
			unsigned t = 0;

			while (k < e.n && e.v[k].end <= i)
				k++;
			if (k < e.n && e.v[k].start <= i)
				t = e.v[k].tag;
			cr_assert_eq(t, ref[i], "round %d: position %llu has tag %u, expected %u", round,
				     (unsigned long long)i, t, ref[i]);
		}
	}
	sfs_ext_free(&e);
}

/* Equal sets are equal whatever the bytes between a tag and the next extent hold. */
Test(extents, equal_ignores_padding)
{
	struct sfs_ext x[2], y[2];
	struct sfs_extents a = { x, 2, 2 }, b = { y, 2, 2 };

	memset(x, 0, sizeof(x));
	memset(y, 0xa5, sizeof(y));
	for (int i = 0; i < 2; i++) {
		x[i].start = y[i].start = 10u * (unsigned)i;
		x[i].end = y[i].end = 10u * (unsigned)i + 5;
		x[i].tag = y[i].tag = 1;
	}
	cr_expect(sfs_ext_equal(&a, &b));
	y[1].tag = 2;
	cr_expect(!sfs_ext_equal(&a, &b));
	b.n = 1;
	cr_expect(!sfs_ext_equal(&a, &b));
}
