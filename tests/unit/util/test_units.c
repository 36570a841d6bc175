/* SPDX-License-Identifier: MIT */
/*
 * test_units.c - unit tests of core/util/units.c: size strings in and out.
 *
 * Parsing: every accepted form, every rejected form with its errno, and
 * the edges of the 63-bit range.  Printing: the largest exact suffix, the
 * rounded human form, and -ENOSPC when the buffer is too small.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "util/units.h"

static uint64_t parse_ok(const char *s)
{
	uint64_t v = 0xdeadbeef;

	cr_assert_eq(sfs_parse_size(s, &v), 0, "'%s' should parse", s);
	return v;
}

static void parse_bad(const char *s, int rc)
{
	uint64_t v = 0xdeadbeef;

	cr_expect_eq(sfs_parse_size(s, &v), rc, "'%s' should give %d", s, rc);
	cr_expect_eq(v, 0xdeadbeef, "'%s' must leave *out alone", s);
}

Test(parse_size, plain_bytes)
{
	cr_expect_eq(parse_ok("0"), 0);
	cr_expect_eq(parse_ok("512"), 512);
	cr_expect_eq(parse_ok("512B"), 512);
	cr_expect_eq(parse_ok("010"), 10);
	cr_expect_eq(parse_ok("9223372036854775807"), INT64_MAX);
}

Test(parse_size, binary_suffixes)
{
	cr_expect_eq(parse_ok("1K"), 1024);
	cr_expect_eq(parse_ok("4K"), 4096);
	cr_expect_eq(parse_ok("1M"), 1 << 20);
	cr_expect_eq(parse_ok("8G"), 8ull << 30);
	cr_expect_eq(parse_ok("2T"), 2ull << 40);
	cr_expect_eq(parse_ok("0G"), 0);
}

Test(parse_size, b_and_ib_forms)
{
	cr_expect_eq(parse_ok("4KiB"), 4096);
	cr_expect_eq(parse_ok("4KB"), 4096);
	cr_expect_eq(parse_ok("1MB"), 1 << 20);
	cr_expect_eq(parse_ok("1MiB"), 1 << 20);
	cr_expect_eq(parse_ok("3GiB"), 3ull << 30);
	cr_expect_eq(parse_ok("1TB"), 1ull << 40);
}

Test(parse_size, malformed)
{
	static const char *const bad[] = {
		"", "+1", "-1", " 1", "1 ", "1 K", "1.5G", "1,5G", "0x10", "1e3",
		"K", "B", "iB", "1k", "1m", "1g", "1t", "1P", "1E", "1X", "1Ki",
		"1iB", "1KBB", "1KiBB", "1BB", "1KK", "1K2", "12a", "1\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], -EINVAL);
	parse_bad(NULL, -EINVAL);
}

Test(parse_size, overflow)
{
	parse_bad("9223372036854775808", -ERANGE);              /* 2^63 */
	parse_bad("18446744073709551616", -ERANGE);             /* 2^64 */
	parse_bad("99999999999999999999999999999999", -ERANGE);
	parse_bad("8388608T", -ERANGE);                         /* 2^63 */
	parse_bad("9007199254740992K", -ERANGE);                /* 2^63 */
	cr_expect_eq(parse_ok("8388607T"), 8388607ull << 40);
	cr_expect_eq(parse_ok("9007199254740991K"), 9007199254740991ull << 10);
}

Test(parse_size, syntax_checked_before_range)
{
	parse_bad("99999999999999999999999X", -EINVAL);
	parse_bad("99999999999999999999999.5", -EINVAL);
}

/*
 * One table for both formatters: the bytes, sfs_format_size's largest exact
 * suffix and sfs_format_human's rounded binary unit.
 */
struct format_row {
	uint64_t bytes;
	const char *exact, *human;
};

static const struct format_row formats[] = {
	{ 0, "0", "0 B" },
	{ 1, "1", "1 B" },
	{ 512, "512", "512 B" },
	{ 1023, "1023", "1023 B" },
	{ 1024, "1K", "1.0 KiB" },
	{ 1075, "1075", "1.0 KiB" },            /* 1.0498 */
	{ 1076, "1076", "1.1 KiB" },            /* 1.0508 */
	{ 1100, "1100", "1.1 KiB" },            /* 1.074 */
	{ 1536, "1536", "1.5 KiB" },
	{ 4096, "4K", "4.0 KiB" },
	{ 1 << 20, "1M", "1.0 MiB" },
	{ 3ull << 19, "1536K", "1.5 MiB" },
	{ 3ull << 29, "1536M", "1.5 GiB" },
	{ 8ull << 30, "8G", "8.0 GiB" },
	{ 2ull << 40, "2T", "2.0 TiB" },
	{ 1ull << 50, "1024T", "1.0 PiB" },
	{ 1ull << 62, "4194304T", "4.0 EiB" },
	{ UINT64_MAX, "18446744073709551615", "16.0 EiB" },
};

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

/* Each of the n rows through fmt: the want column (exact or human) is what it writes. */
static void formats_as(int (*fmt)(uint64_t, char *, size_t), bool human,
		       const struct format_row *rows, size_t n)
{
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		const char *want = human ? rows[i].human : rows[i].exact;

		cr_assert_eq(fmt(rows[i].bytes, buf, sizeof(buf)), 0);
		cr_expect_str_eq(buf, want, "%llu", (unsigned long long)rows[i].bytes);
	}
}

Test(format_size, largest_exact_suffix)
{
	formats_as(sfs_format_size, false, formats, NROWS(formats));
}

Test(format_size, round_trips_through_parse)
{
	static const uint64_t v[] = { 0, 512, 1536, 4096, 65536, 1 << 20, 3ull << 29, 1ull << 62 };
	char buf[32];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		cr_assert_eq(sfs_format_size(v[i], buf, sizeof(buf)), 0);
		cr_expect_eq(parse_ok(buf), v[i], "%s", buf);
	}
}

Test(format_size, buffer_too_small)
{
	char buf[3] = "xx";

	cr_expect_eq(sfs_format_size(1 << 20, buf, 3), 0);
	cr_expect_str_eq(buf, "1M");
	cr_expect_eq(sfs_format_size(1536, buf, 3), -ENOSPC);
	cr_expect_eq(sfs_format_size(1024, buf, 2), -ENOSPC);
	cr_expect_eq(sfs_format_size(0, NULL, 0), -ENOSPC);
}

Test(format_human, units_and_rounding)
{
	formats_as(sfs_format_human, true, formats, NROWS(formats));
}

Test(format_human, carry_to_next_unit)
{
	static const struct format_row carry[] = {
		{ 2047, "2047", "2.0 KiB" },
		{ (1 << 20) - 1, "1048575", "1.0 MiB" },
		{ (1ull << 30) - 1, "1073741823", "1.0 GiB" },
		{ UINT64_MAX, "18446744073709551615", "16.0 EiB" },
	};

	formats_as(sfs_format_human, true, carry, NROWS(carry));
}

Test(format_human, buffer_too_small)
{
	char buf[8];

	cr_expect_eq(sfs_format_human(1536, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "1.5 KiB");
	cr_expect_eq(sfs_format_human(3ull << 29, buf, 7), -ENOSPC);
	cr_expect_eq(sfs_format_human(0, NULL, 0), -ENOSPC);
}

/* The bench's sizes: the largest unit up to TiB that holds them whole, else rounded as
 * sfs_format_human rounds them. */
Test(format_iec, whole_units_when_exact)
{
	static const struct { uint64_t bytes; const char *want; } rows[] = {
		{ 0, "0 B" }, { 1, "1 B" }, { 512, "512 B" }, { 1023, "1023 B" }, { 1024, "1 KiB" },
		{ 1100, "1.1 KiB" }, { 1536, "1.5 KiB" }, { 4096, "4 KiB" }, { 1 << 20, "1 MiB" },
		{ 3ull << 19, "1536 KiB" }, { 3ull << 29, "1536 MiB" }, { 8ull << 30, "8 GiB" },
		{ 2ull << 40, "2 TiB" }, { 1ull << 50, "1024 TiB" }, { 1ull << 62, "4194304 TiB" },
		{ (1ull << 20) + 512, "1.0 MiB" }, { UINT64_MAX, "16.0 EiB" },
	};
	char buf[32];

	for (size_t i = 0; i < NROWS(rows); i++) {
		cr_assert_eq(sfs_format_iec(rows[i].bytes, buf, sizeof(buf)), 0);
		cr_expect_str_eq(buf, rows[i].want, "%llu", (unsigned long long)rows[i].bytes);
	}
	cr_expect_eq(sfs_format_iec(4096, buf, 5), -ENOSPC);
}

Test(is_pow2, values)
{
	cr_expect(!sfs_is_pow2(0));
	cr_expect(sfs_is_pow2(1));
	cr_expect(sfs_is_pow2(512));
	cr_expect(!sfs_is_pow2(1536));
	cr_expect(sfs_is_pow2(1ull << 63));
	cr_expect(!sfs_is_pow2(UINT64_MAX));
}
