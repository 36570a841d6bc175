/* SPDX-License-Identifier: MIT */
/*
 * test_bufpool.c - page-aligned I/O buffers reused (core/util/bufpool.c).
 *
 * Proves: buffers are 4096-aligned, writable over their whole size and
 * distinct while in use; a buffer put back is handed out again; at most
 * keep free buffers are kept (the rest unmapped at once, and the usage
 * counts say so); trim gives back every free buffer; the shared pool has
 * room for a 1 MiB request and 64 KiB sectors at both ends.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/bufpool_test.h"

Test(bufpool, aligned_distinct_and_reused)
{
	struct sfs_bufpool *p;
	void *b[4];

	cr_assert_eq(sfs_bufpool_new(100000, 2, &p), 0);
	cr_expect_eq(sfs_bufpool_size(p), 102400, "rounded up to whole pages");
	for (int i = 0; i < 4; i++) {
		b[i] = sfs_bufpool_get(p);
		cr_assert_not_null(b[i]);
		cr_expect_eq((uintptr_t)b[i] % 4096, 0);
		memset(b[i], i + 1, sfs_bufpool_size(p));
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < i; j++)
			cr_expect_neq(b[i], b[j]);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(((unsigned char *)b[i])[sfs_bufpool_size(p) - 1], i + 1, "buffer %d overwritten", i);
	sfs_bufpool_put(p, b[0]);
	cr_expect_eq(sfs_bufpool_get(p), b[0], "a buffer put back is used again");
	for (int i = 0; i < 4; i++)
		sfs_bufpool_put(p, b[i]);
	sfs_bufpool_put(p, NULL);
	sfs_bufpool_free(p);
}

Test(bufpool, keeps_at_most_keep_and_trims)
{
	struct sfs_bufpool_usage u;
	struct sfs_bufpool *p;
	void *b[6];

	cr_assert_eq(sfs_bufpool_new(1 << 20, 3, &p), 0);
	for (int i = 0; i < 6; i++)
		b[i] = sfs_bufpool_get(p);
	sfs_bufpool_usage(p, &u);
	cr_expect_eq(u.in_use, 6);
	cr_expect_eq(u.peak, 6);
	cr_expect_eq(u.free, 0);
	for (int i = 0; i < 6; i++)
		sfs_bufpool_put(p, b[i]);
	sfs_bufpool_usage(p, &u);
	cr_expect_eq(u.in_use, 0);
	cr_expect_eq(u.free, 3, "keeps 3 of the 6 put back, got %u", u.free);
	sfs_bufpool_set_keep(p, 1);
	sfs_bufpool_usage(p, &u);
	cr_expect_eq(u.free, 1);
	cr_expect_eq(sfs_bufpool_trim(p), 1 << 20);
	sfs_bufpool_usage(p, &u);
	cr_expect_eq(u.free, 0);
	cr_expect_eq(sfs_bufpool_trim(p), 0);
	sfs_bufpool_free(p);
}

Test(bufpool, shared_pool_fits_a_request_and_its_sectors)
{
	struct sfs_bufpool *p = sfs_bufpool_shared();

	cr_assert_not_null(p);
	cr_expect_eq(p, sfs_bufpool_shared());
	cr_expect_geq(sfs_bufpool_size(p), (1u << 20) + 2 * 65536);
}
