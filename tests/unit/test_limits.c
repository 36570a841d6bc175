/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c - what an allocation map can hold, and what happens when
 * memory for it runs out.
 *
 * Through the tests' hook of allocmap_impl.h (sfs_mapi_calloc_hook),
 * every allocation the map makes in a life of create, bits, flush, a grow
 * that needs a new bitmap page, another flush and close is made to fail
 * in turn (the 1st, the 2nd, ...): each failing call returns -ENOMEM and
 * leaves the map as it was (a grow refused keeps the old size, in memory
 * and in the file), nothing is freed twice (glibc aborts on the double
 * free of a grow whose second array failed, which took the daemon down on
 * a truncate to 2^62) and nothing leaks (LeakSanitizer, in an ASan build);
 * the map then grows and flushes once memory is back, and opens again
 * with every bit that was flushed.
 */
#include "map_fixture.h"

#include "allocmap_impl.h"

/* ---- the hook: fail allocation number fail_at (counted from 1) ---- */

static unsigned alloc_calls, fail_at;

static void *failing_calloc(size_t n, size_t size)
{
	if (++alloc_calls == fail_at) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(n, size);
}

static void hook_on(unsigned at)
{
	alloc_calls = 0;
	fail_at = at;
	sfs_mapi_calloc_hook = failing_calloc;
}

static void hook_off(void)
{
	sfs_mapi_calloc_hook = NULL;
}

/* 4 KiB blocks: one bitmap page covers 32256 of them, so growing from 1000 to 40000 blocks
 * needs a second page, and new arrays. */
#define SMALL 1000u
#define LARGE 40000u

/* One life of a map with allocation number at failing: each call returns 0 or -ENOMEM and a
 * refused one changes nothing.  True when the failure was hit. */
static bool life_failing_at(unsigned at)
{
	struct sfs_map_info mi = info_of(SMALL, 4096, false);
	struct sfs_map *m = NULL;
	uint64_t want = (uint64_t)LARGE * 4096;
	bool grown = false;
	int rc;

	hook_on(at);
	rc = sfs_map_create(ts.fd, MAPNAME, &mi, &m);
	if (rc < 0) {
		hook_off();
		cr_assert_eq(rc, -ENOMEM, "allocation %u: create gave %d", at, rc);
		cr_expect_null(m);
		cr_expect_eq(faccessat(ts.fd, MAPNAME, F_OK, 0), -1, "allocation %u: a map file left", at);
		return true;
	}
	sfs_map_set(m, 7);
	rc = sfs_map_flush(m, -1);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: flush gave %d", at, rc);
	rc = sfs_map_grow_prepare(m, want);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: grow_prepare gave %d", at, rc);
	if (rc == 0) {
		rc = sfs_map_grow_commit(m, want, 0);
		cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: grow_commit gave %d", at, rc);
		if (rc < 0)
			cr_assert_eq(sfs_map_grow_abort(m), 0);
		grown = rc == 0;
	}
	cr_expect_eq(sfs_map_nblocks(m), grown ? LARGE : SMALL, "allocation %u", at);
	cr_expect_eq(file_size(), (off_t)(HDR + (grown ? 2 : 1) * PAGE), "allocation %u: map file", at);
	cr_expect(sfs_map_test(m, 7), "allocation %u: bit 7 lost", at);
	if (grown)
		sfs_map_set(m, LARGE - 1);
	rc = sfs_map_flush(m, -1);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: second flush gave %d", at, rc);
	hook_off();

	/* memory is back: what failed works now */
	if (!grown) {
		cr_assert_eq(sfs_map_grow_prepare(m, want), 0, "allocation %u", at);
		cr_assert_eq(sfs_map_grow_commit(m, want, 0), 0, "allocation %u", at);
		sfs_map_set(m, LARGE - 1);
	}
	cr_assert_eq(sfs_map_flush(m, -1), 0, "allocation %u", at);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), LARGE, "allocation %u", at);
	cr_expect(sfs_map_test(m, 7) && sfs_map_test(m, LARGE - 1), "allocation %u: bits lost", at);
	cr_expect_eq(sfs_map_count(m), 2, "allocation %u", at);
	sfs_map_close(m);
	unlinkat(ts.fd, MAPNAME, 0);
	return at <= alloc_calls;
}

Test(map, every_allocation_of_a_life_fails_cleanly)
{
	unsigned at = 1;

	while (life_failing_at(at))
		at++;
	cr_expect_gt(at, 8, "only %u allocations in a map's life: is the hook reached?", at - 1);
}
