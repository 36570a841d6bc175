/* SPDX-License-Identifier: MIT */
/*
 * test_geometry.c - unit tests of core/contract/geometry.c: the I/O rules of a disk.
 *
 * check_read and check_write on 512n, 512e and 4kn disks: alignment of
 * offset and length (EINVAL) is checked before range (ENOSPC), reads that
 * straddle the end are shortened and reads at or past it return nothing,
 * zero-length requests, and offsets and lengths near 2^64 that must not
 * wrap around into "in range".  is_rmw for each sector format, align_class
 * for every class, and the block arithmetic (nblocks, block_span,
 * block_range) with a partial last block and on the largest disk allowed.
 * Pure functions: no files.
 */
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "contract/geometry.h"
#include "contract/sidecar.h"

#define KiB 1024ull
#define MiB (1024 * KiB)

static const struct sfs_geom g512n = { 10 * MiB, 512, 512, MiB };
static const struct sfs_geom g512e = { 10 * MiB, 512, 4096, MiB };
static const struct sfs_geom g4kn = { 10 * MiB, 4096, 4096, MiB };

/* ---- check_read ---- */

Test(check_read, aligned_inside)
{
	size_t n = 12345;

	cr_expect_eq(sfs_geom_check_read(&g512n, 0, 512, &n), 0);
	cr_expect_eq(n, 512);
	cr_expect_eq(sfs_geom_check_read(&g512n, 512, 8192, &n), 0);
	cr_expect_eq(n, 8192);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 4096, 4 * MiB, &n), 0);
	cr_expect_eq(n, 4 * MiB);
	/* the whole disk in one read */
	cr_expect_eq(sfs_geom_check_read(&g512e, 0, 10 * MiB, &n), 0);
	cr_expect_eq(n, 10 * MiB);
}

Test(check_read, misaligned_is_einval)
{
	size_t n = 777;

	cr_expect_eq(sfs_geom_check_read(&g512n, 1, 512, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g512n, 0, 511, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g512n, 256, 256, &n), -EINVAL);
	/* 512e: the logical sector is what counts */
	cr_expect_eq(sfs_geom_check_read(&g512e, 512, 512, &n), 0);
	cr_expect_eq(sfs_geom_check_read(&g512e, 100, 512, &n), -EINVAL);
	/* 4kn: 512-aligned is not enough */
	cr_expect_eq(sfs_geom_check_read(&g4kn, 512, 4096, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 0, 512, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 4096, 6144, &n), -EINVAL);
}

Test(check_read, alignment_before_range)
{
	size_t n;

	/* misaligned and past the end: EINVAL, not a 0-byte read */
	cr_expect_eq(sfs_geom_check_read(&g512n, 10 * MiB + 1, 512, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 20 * MiB + 512, 4096, &n), -EINVAL);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 20 * MiB, 100, &n), -EINVAL);
}

Test(check_read, at_and_past_end_reads_nothing)
{
	size_t n = 999;

	cr_expect_eq(sfs_geom_check_read(&g512n, 10 * MiB, 512, &n), 0);
	cr_expect_eq(n, 0);
	n = 999;
	cr_expect_eq(sfs_geom_check_read(&g512n, 11 * MiB, 4096, &n), 0);
	cr_expect_eq(n, 0);
	n = 999;
	cr_expect_eq(sfs_geom_check_read(&g4kn, 10 * MiB, 4096, &n), 0);
	cr_expect_eq(n, 0);
}

Test(check_read, straddling_end_is_shortened)
{
	size_t n = 0;

	cr_expect_eq(sfs_geom_check_read(&g512n, 10 * MiB - 512, 4096, &n), 0);
	cr_expect_eq(n, 512);
	cr_expect_eq(sfs_geom_check_read(&g4kn, 10 * MiB - 8192, MiB, &n), 0);
	cr_expect_eq(n, 8192);
	/* ending exactly at the end is not shortened */
	cr_expect_eq(sfs_geom_check_read(&g4kn, 10 * MiB - 8192, 8192, &n), 0);
	cr_expect_eq(n, 8192);
}

Test(check_read, zero_length)
{
	size_t n = 5;

	cr_expect_eq(sfs_geom_check_read(&g512n, 4096, 0, &n), 0);
	cr_expect_eq(n, 0);
	n = 5;
	cr_expect_eq(sfs_geom_check_read(&g512n, 10 * MiB, 0, &n), 0);
	cr_expect_eq(n, 0);
	/* still subject to the alignment of the offset */
	cr_expect_eq(sfs_geom_check_read(&g4kn, 512, 0, &n), -EINVAL);
}

Test(check_read, empty_disk)
{
	const struct sfs_geom g = { 0, 512, 512, MiB };
	size_t n = 5;

	cr_expect_eq(sfs_geom_check_read(&g, 0, 512, &n), 0);
	cr_expect_eq(n, 0);
}

Test(check_read, huge_offsets_do_not_wrap)
{
	const struct sfs_geom big = { SFS_SIZE_MAX, 512, 4096, MiB };
	size_t n = 5;

	/* off + len wraps past 2^64: must read nothing, not "in range" */
	cr_expect_eq(sfs_geom_check_read(&g512n, UINT64_MAX - 511, 1024, &n), 0);
	cr_expect_eq(n, 0);
	n = 5;
	cr_expect_eq(sfs_geom_check_read(&g512n, 512, SIZE_MAX - 511, &n), 0);
	cr_expect_eq(n, 10 * MiB - 512);
	/* the largest disk: the last sector and a read across its end */
	cr_expect_eq(sfs_geom_check_read(&big, SFS_SIZE_MAX - 512, 512, &n), 0);
	cr_expect_eq(n, 512);
	cr_expect_eq(sfs_geom_check_read(&big, SFS_SIZE_MAX - 512, 1 * MiB, &n), 0);
	cr_expect_eq(n, 512);
	cr_expect_eq(sfs_geom_check_read(&big, SFS_SIZE_MAX, 512, &n), 0);
	cr_expect_eq(n, 0);
	cr_expect_eq(sfs_geom_check_read(&big, UINT64_MAX - 4095, 4096, &n), 0);
	cr_expect_eq(n, 0);
}

/* ---- check_write ---- */

Test(check_write, aligned_inside_and_up_to_the_end)
{
	cr_expect_eq(sfs_geom_check_write(&g512n, 0, 512), 0);
	cr_expect_eq(sfs_geom_check_write(&g512e, 512, 512), 0);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 4096, 8192), 0);
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB - 512, 512), 0);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 0, 10 * MiB), 0);
}

Test(check_write, misaligned_is_einval)
{
	cr_expect_eq(sfs_geom_check_write(&g512n, 3, 512), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g512n, 0, 1000), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g512e, 4096, 4095), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 512, 4096), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 4096, 512), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 0, 4096 + 2048), -EINVAL);
}

Test(check_write, past_end_is_enospc)
{
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB - 512, 1024), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB, 512), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 20 * MiB, 4096), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 0, 10 * MiB + 4096), -ENOSPC);
}

Test(check_write, alignment_before_range)
{
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB + 1, 512), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB - 512, 1025), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 40 * MiB + 512, 4096), -EINVAL);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 10 * MiB, 100), -EINVAL);
}

Test(check_write, zero_length)
{
	cr_expect_eq(sfs_geom_check_write(&g512n, 4096, 0), 0);
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB, 0), 0);
	cr_expect_eq(sfs_geom_check_write(&g512n, 10 * MiB + 512, 0), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g4kn, 512, 0), -EINVAL);
}

Test(check_write, huge_values_do_not_wrap)
{
	const struct sfs_geom big = { SFS_SIZE_MAX, 4096, 4096, 64 * MiB };

	/* off + len would wrap to a small number */
	cr_expect_eq(sfs_geom_check_write(&g512n, 512, UINT64_MAX - 511), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g512n, UINT64_MAX - 511, 1024), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&g512n, UINT64_MAX - 511, 512), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&big, SFS_SIZE_MAX - 4096, 4096), 0);
	cr_expect_eq(sfs_geom_check_write(&big, SFS_SIZE_MAX - 4096, 8192), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&big, 4096, UINT64_MAX - 4095), -ENOSPC);
	cr_expect_eq(sfs_geom_check_write(&big, 0, SFS_SIZE_MAX), 0);
}

/* ---- is_rmw ---- */

Test(is_rmw, on_512e)
{
	cr_expect(sfs_geom_is_rmw(&g512e, 0, 512));
	cr_expect(sfs_geom_is_rmw(&g512e, 512, 4096));
	cr_expect(sfs_geom_is_rmw(&g512e, 4096, 4608));
	cr_expect(sfs_geom_is_rmw(&g512e, 3584, 1024));     /* touches two physical sectors, each in part */
	cr_expect(!sfs_geom_is_rmw(&g512e, 0, 4096));
	cr_expect(!sfs_geom_is_rmw(&g512e, 8192, 65536));
	cr_expect(!sfs_geom_is_rmw(&g512e, 4096, 0));
}

Test(is_rmw, never_on_native_formats)
{
	cr_expect(!sfs_geom_is_rmw(&g512n, 0, 512));
	cr_expect(!sfs_geom_is_rmw(&g512n, 512, 1536));
	cr_expect(!sfs_geom_is_rmw(&g4kn, 0, 4096));
	cr_expect(!sfs_geom_is_rmw(&g4kn, 4096, 12288));
}

Test(is_rmw, explicit_pair)
{
	const struct sfs_geom g = { 10 * MiB, 4096, 16384, MiB };

	cr_expect(sfs_geom_is_rmw(&g, 4096, 4096));
	cr_expect(sfs_geom_is_rmw(&g, 0, 20480));
	cr_expect(!sfs_geom_is_rmw(&g, 16384, 32768));
}

/* ---- align_class ---- */

Test(align_class, every_class)
{
	cr_expect_eq(sfs_geom_align_class(512, 512), SFS_ALIGN_512);
	cr_expect_eq(sfs_geom_align_class(0, 512), SFS_ALIGN_512);
	cr_expect_eq(sfs_geom_align_class(4096, 1536), SFS_ALIGN_512);
	cr_expect_eq(sfs_geom_align_class(100, 4096), SFS_ALIGN_512);   /* "or less" */
	cr_expect_eq(sfs_geom_align_class(1024, 1024), SFS_ALIGN_1K);
	cr_expect_eq(sfs_geom_align_class(8192, 3072), SFS_ALIGN_1K);
	cr_expect_eq(sfs_geom_align_class(2048, 2048), SFS_ALIGN_2K);
	cr_expect_eq(sfs_geom_align_class(6144, 4096), SFS_ALIGN_2K);
	cr_expect_eq(sfs_geom_align_class(4096, 4096), SFS_ALIGN_4K);
	cr_expect_eq(sfs_geom_align_class(0, 4096), SFS_ALIGN_4K);
	cr_expect_eq(sfs_geom_align_class(MiB, 65536), SFS_ALIGN_4K);
	cr_expect_eq(sfs_geom_align_class(0, 0), SFS_ALIGN_4K);
	cr_expect_eq(sfs_geom_align_class(1ull << 62, 1ull << 40), SFS_ALIGN_4K);
	/* the class is set by the worse of offset and length */
	cr_expect_eq(sfs_geom_align_class(4096, 512), SFS_ALIGN_512);
	cr_expect_eq(sfs_geom_align_class(1024, 8192), SFS_ALIGN_1K);
}

/* ---- block arithmetic ---- */

Test(blocks, nblocks)
{
	const struct sfs_geom empty = { 0, 512, 512, MiB };
	const struct sfs_geom one = { MiB, 512, 512, MiB };
	const struct sfs_geom partial = { MiB + 512, 512, 512, MiB };
	const struct sfs_geom big = { 512ull << 30, 512, 512, 512 };
	const struct sfs_geom big_partial = { SFS_SIZE_MAX - 512, 512, 512, 64 * MiB };

	cr_expect_eq(sfs_geom_nblocks(&empty), 0);
	cr_expect_eq(sfs_geom_nblocks(&one), 1);
	cr_expect_eq(sfs_geom_nblocks(&partial), 2);
	cr_expect_eq(sfs_geom_nblocks(&g512n), 10);
	cr_expect_eq(sfs_geom_nblocks(&big), SFS_BLOCKS_MAX);
	cr_expect_eq(sfs_geom_nblocks(&big_partial), SFS_SIZE_MAX / (64 * MiB));
}

Test(blocks, span)
{
	const struct sfs_geom g = { 3 * MiB + 4096, 512, 4096, MiB };
	uint64_t first = 99, last = 99;

	sfs_geom_block_span(&g, 0, 512, &first, &last);
	cr_expect_eq(first, 0);
	cr_expect_eq(last, 0);
	sfs_geom_block_span(&g, 0, MiB, &first, &last);
	cr_expect_eq(first, 0);
	cr_expect_eq(last, 0);
	sfs_geom_block_span(&g, MiB - 512, 1024, &first, &last);
	cr_expect_eq(first, 0);
	cr_expect_eq(last, 1);
	sfs_geom_block_span(&g, MiB, 2 * MiB, &first, &last);
	cr_expect_eq(first, 1);
	cr_expect_eq(last, 2);
	/* into the partial last block */
	sfs_geom_block_span(&g, 3 * MiB - 512, 4096 + 512, &first, &last);
	cr_expect_eq(first, 2);
	cr_expect_eq(last, 3);
}

Test(blocks, span_on_largest_disk)
{
	const struct sfs_geom g = { SFS_SIZE_MAX, 512, 512, 64 * MiB };
	uint64_t first, last, nb = SFS_SIZE_MAX / (64 * MiB);

	sfs_geom_block_span(&g, SFS_SIZE_MAX - 512, 512, &first, &last);
	cr_expect_eq(first, nb - 1);
	cr_expect_eq(last, nb - 1);
	sfs_geom_block_span(&g, SFS_SIZE_MAX - 64 * MiB - 512, 1024, &first, &last);
	cr_expect_eq(first, nb - 2);
	cr_expect_eq(last, nb - 1);
}

Test(blocks, range_with_partial_last_block)
{
	const struct sfs_geom g = { 3 * MiB + 4096, 512, 4096, MiB };
	uint64_t s = 1, e = 1;

	sfs_geom_block_range(&g, 0, &s, &e);
	cr_expect_eq(s, 0);
	cr_expect_eq(e, MiB);
	sfs_geom_block_range(&g, 2, &s, &e);
	cr_expect_eq(s, 2 * MiB);
	cr_expect_eq(e, 3 * MiB);
	sfs_geom_block_range(&g, 3, &s, &e);
	cr_expect_eq(s, 3 * MiB);
	cr_expect_eq(e, 3 * MiB + 4096, "last block must be clipped to the disk size");
}

Test(blocks, range_on_largest_disk)
{
	const struct sfs_geom g = { SFS_SIZE_MAX - 4096, 4096, 4096, 64 * MiB };
	uint64_t nb = sfs_geom_nblocks(&g), s, e;

	cr_assert_eq(nb, SFS_SIZE_MAX / (64 * MiB));
	sfs_geom_block_range(&g, nb - 1, &s, &e);
	cr_expect_eq(s, SFS_SIZE_MAX - 64 * MiB);
	cr_expect_eq(e, SFS_SIZE_MAX - 4096);
	sfs_geom_block_range(&g, nb - 2, &s, &e);
	cr_expect_eq(e - s, 64 * MiB);
}

Test(blocks, span_and_range_agree)
{
	/* every sector of a small disk lies in the block span says, inside that block's range */
	const struct sfs_geom g = { 5 * 4096 + 1024, 512, 4096, 4096 };

	for (uint64_t off = 0; off < g.size; off += 512) {
		uint64_t first, last, s, e;

		sfs_geom_block_span(&g, off, 512, &first, &last);
		cr_assert_eq(first, last);
		sfs_geom_block_range(&g, first, &s, &e);
		cr_assert(s <= off && off + 512 <= e, "off %llu block %llu [%llu, %llu)",
			  (unsigned long long)off, (unsigned long long)first,
			  (unsigned long long)s, (unsigned long long)e);
	}
}

/* ---- the grow rule: one function, and the reason it gives ---- */

Test(grow_rule, verdicts_and_reasons)
{
	struct sfs_geom g = { 16 * 4096, 4096, 4096, 65536 };
	char why[256];

	cr_expect_eq(sfs_geom_grow_verdict(&g, 32 * 4096), SFS_GROW_YES);
	cr_expect_eq(sfs_geom_grow_check(&g, 32 * 4096, why, sizeof(why)), 0);
	cr_expect_str_empty(why);
	cr_expect_eq(sfs_geom_grow_check(&g, 16 * 4096, why, sizeof(why)), 1, "the same size");
	cr_expect_eq(sfs_geom_grow_verdict(&g, 8 * 4096), SFS_GROW_SHRINKS);
	cr_expect_eq(sfs_geom_grow_check(&g, 8 * 4096, why, sizeof(why)), -EINVAL);
	cr_expect_str_eq(why, "cannot shrink from 65536 to 32768 bytes: a disk only grows");
	cr_expect_eq(sfs_geom_grow_verdict(&g, 32 * 4096 + 512), SFS_GROW_UNALIGNED);
	cr_expect_eq(sfs_geom_grow_check(&g, 32 * 4096 + 512, why, sizeof(why)), -EINVAL);
	cr_expect_str_eq(why, "size 131584 is not a multiple of the logical sector size 4096");
	/* 2^30 blocks of 64 KiB: 64 TiB */
	cr_expect_eq(sfs_geom_grow_verdict(&g, (64ull << 40) + 4096), SFS_GROW_TOO_LARGE);
	cr_expect_eq(sfs_geom_grow_check(&g, (64ull << 40) + 4096, why, sizeof(why)), -EFBIG);
	cr_expect_str_eq(why, "size 70368744181760 is larger than the maximum 64 TiB for a block size of "
			 "64 KiB (2^30 blocks: an open image's allocation map is held in memory)");
	cr_expect_eq(sfs_geom_grow_check(&g, 64ull << 40, NULL, 0), 0, "the largest size grows");
	/* too large comes first, before the sector: 2^63 - 1 is both */
	cr_expect_eq(sfs_geom_grow_check(&g, 1ull << 62, NULL, 0), -EFBIG);
	cr_expect_eq(sfs_geom_grow_check(&g, INT64_MAX, NULL, 0), -EFBIG);
	cr_expect_eq(sfs_geom_grow_check(&g, UINT64_MAX, NULL, 0), -EFBIG);
}

Test(grow_rule, largest_disk_is_2_to_the_30_blocks)
{
	cr_expect_eq(sfs_geom_size_max(512), 512ull << 30);
	cr_expect_eq(sfs_geom_size_max(4096), 4ull << 40);
	cr_expect_eq(sfs_geom_size_max(MiB), 1ull << 50);
	cr_expect_eq(sfs_geom_size_max(SFS_BLOCK_MAX), SFS_SIZE_MAX);
	cr_expect_eq(SFS_SIZE_MAX, 1ull << 56);
	for (uint64_t bs = 512; bs <= SFS_BLOCK_MAX; bs *= 2) {
		struct sfs_geom g = { sfs_geom_size_max(bs), 512, 512, bs };

		cr_expect_eq(sfs_geom_nblocks(&g), SFS_BLOCKS_MAX, "block size %llu", (unsigned long long)bs);
		cr_expect_eq(sfs_geom_validate(g.size, 512, 512, bs, "d.json", NULL, 0), 0);
		cr_expect_eq(sfs_geom_validate(g.size + 512, 512, 512, bs, "d.json", NULL, 0), -EFBIG);
	}
}
