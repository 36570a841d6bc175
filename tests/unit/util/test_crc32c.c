/* SPDX-License-Identifier: MIT */
/*
 * test_crc32c.c - unit tests of core/util/crc32c.c.
 *
 * Both paths, the slice-by-8 tables and the SSE4.2 instruction (where the
 * CPU has it), give the standard check values, the same results as a
 * bit-at-a-time reference written here on random buffers of every length
 * and alignment up to a few pages, and compose: the CRC of a then b,
 * continued from the CRC of a, is the CRC of the two.  Started from 0,
 * as the map's codec calls it for the header and the chunks (existing
 * maps must still verify; test_allocmap checks a map's CRCs against a
 * reference of its own), it gives the standard check values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/crc32c.h"

/* CRC-32C one bit at a time (what core/map/map.c computed before): the oracle. */
static uint32_t crc_ref(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static const struct {
	const char *in;
	size_t len;
	uint32_t want;
} vectors[] = {
	{ "", 0, 0x00000000u },
	{ "a", 1, 0xc1d04330u },
	{ "123456789", 9, 0xe3069283u },
	{ "The quick brown fox jumps over the lazy dog", 43, 0x22620404u },
};

static void check_vectors(crc_fn f, const char *name)
{
	unsigned char zeros[32] = { 0 }, ones[32], inc[32];

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
		cr_expect_eq(f(0, vectors[i].in, vectors[i].len), vectors[i].want, "%s(\"%s\") = %08x", name,
			     vectors[i].in, f(0, vectors[i].in, vectors[i].len));
	/* RFC 3720 (iSCSI) B.4 */
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	cr_expect_eq(f(0, zeros, 32), 0x8a9136aau, "%s: 32 zero bytes", name);
	cr_expect_eq(f(0, ones, 32), 0x62a8ab43u, "%s: 32 bytes of 0xff", name);
	cr_expect_eq(f(0, inc, 32), 0x46dd794eu, "%s: 0..31", name);
	cr_expect_eq(f(0, NULL, 0), 0u, "%s: nothing", name);
}

Test(crc32c, reference_is_right)
{
	cr_assert_eq(crc_ref(0, (const unsigned char *)"123456789", 9), 0xe3069283u);
}

Test(crc32c, table_path_known_vectors)
{
	check_vectors(sfs_crc32c_sw, "sw");
}

Test(crc32c, hardware_path_known_vectors)
{
	if (!sfs_crc32c_hw_available())
		cr_skip_test("no SSE4.2 crc32 instruction on this CPU");
	check_vectors(sfs_crc32c_hw, "hw");
}

Test(crc32c, dispatched_and_map_crc_known_vectors)
{
	check_vectors(sfs_crc32c, "sfs_crc32c");
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
		cr_expect_eq(sfs_crc32c(0, vectors[i].in, vectors[i].len), vectors[i].want);
}

/* Every length 0..300 at every alignment 0..15, then random lengths up to 3 pages, random
 * starting CRCs: each path equals the reference. */
static void check_random(crc_fn f, const char *name)
{
	size_t cap = 3 * 4096 + 64;
	unsigned char *buf = malloc(cap);
	unsigned seed = 20261203;

	cr_assert_not_null(buf);
	for (size_t i = 0; i < cap; i++)
		buf[i] = (unsigned char)rand_r(&seed);
	for (size_t len = 0; len <= 300; len++)
		for (size_t al = 0; al < 16; al++) {
			uint32_t start = (uint32_t)rand_r(&seed) * 2654435761u;
			uint32_t got = f(start, buf + al, len), want = crc_ref(start, buf + al, len);

			if (got != want) {
				cr_expect_fail("%s: length %zu at offset %zu from %08x: %08x, want %08x", name, len,
					       al, start, got, want);
				goto out;
			}
		}
	for (int k = 0; k < 500; k++) {
		size_t al = (size_t)rand_r(&seed) % 64, len = (size_t)rand_r(&seed) % (cap - al);
		uint32_t start = (uint32_t)rand_r(&seed);

		if (f(start, buf + al, len) != crc_ref(start, buf + al, len)) {
			cr_expect_fail("%s: length %zu at offset %zu differs", name, len, al);
			break;
		}
	}
out:
	free(buf);
}

Test(crc32c, table_path_equals_the_reference)
{
	check_random(sfs_crc32c_sw, "sw");
}

Test(crc32c, hardware_path_equals_the_reference_and_the_tables)
{
	unsigned char page[4096];
	unsigned seed = 7;

	if (!sfs_crc32c_hw_available())
		cr_skip_test("no SSE4.2 crc32 instruction on this CPU");
	check_random(sfs_crc32c_hw, "hw");
	for (int k = 0; k < 200; k++) {
		for (size_t i = 0; i < sizeof(page); i++)
			page[i] = (unsigned char)rand_r(&seed);
		cr_expect_eq(sfs_crc32c_hw(0, page, sizeof(page)), sfs_crc32c_sw(0, page, sizeof(page)));
	}
}

Test(crc32c, continuing_is_the_crc_of_both)
{
	const char *s = "123456789";

	for (size_t cut = 0; cut <= 9; cut++) {
		cr_expect_eq(sfs_crc32c(sfs_crc32c(0, s, cut), s + cut, 9 - cut), 0xe3069283u, "cut at %zu", cut);
		cr_expect_eq(sfs_crc32c_sw(sfs_crc32c_sw(0, s, cut), s + cut, 9 - cut), 0xe3069283u);
	}
}
