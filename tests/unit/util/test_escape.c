/* SPDX-License-Identifier: MIT */
/*
 * test_escape.c - unit tests of core/util/escape.c: names as GNU ls -b prints
 * them (the expected strings are ls -b's output in a UTF-8 locale and in
 * the C locale), a round trip over random bytes, and the -ENOSPC contract.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/escape.h"

static const char *esc(const char *name)
{
	static char buf[4096];

	cr_assert_eq(sfs_escape_name(name, false, buf, sizeof(buf)), 0, "escaping '%s' failed", name);
	return buf;
}

Test(escape, as_ls_b_prints_them)
{
	static const char *const cases[][2] = {
		{ "plain-name_1.img", "plain-name_1.img" },
		{ "a b", "a\\ b" },
		{ "nl\nx", "nl\\nx" },
		{ "tab\tx", "tab\\tx" },
		{ "cr\rx\vy\fz", "cr\\rx\\vy\\fz" },
		{ "bel\a", "bel\\a" },
		{ "bs\bx", "bs\\bx" },
		{ "esc\033[31mred", "esc\\033[31mred" },
		{ "del\177x", "del\\177x" },
		{ "\001\037", "\\001\\037" },
		{ "back\\slash", "back\\\\slash" },
		{ "q\"x'y", "q\"x'y" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },                   /* UTF-8 é: kept */
		{ "\xe2\x82\xac\xf0\x9f\x92\xbe", "\xe2\x82\xac\xf0\x9f\x92\xbe" },  /* € and a 4-byte one */
		{ "bad\xe9x", "bad\\351x" },                        /* Latin-1 é: not UTF-8 */
		{ "c1\xc2\x9bx", "c1\\302\\233x" },                 /* U+009B, a C1 control */
		{ "over\xc0\xaf", "over\\300\\257" },               /* overlong '/' */
		{ "sur\xed\xa0\x80", "sur\\355\\240\\200" },        /* a surrogate */
		{ "big\xf4\x90\x80\x80", "big\\364\\220\\200\\200" },  /* past U+10FFFF */
		{ "cut\xe2\x82", "cut\\342\\202" },                 /* a sequence cut short */
		{ "\xff\xfe", "\\377\\376" },
		{ "", "" },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_str_eq(esc(cases[i][0]), cases[i][1], "case %u", i);
}

/* Undo the escapes (the test's own reading of the format). */
static size_t unescape(const char *s, unsigned char *out)
{
	static const char from[] = "abtnvfr\\ ", to[] = "\a\b\t\n\v\f\r\\ ";
	size_t n = 0;

	while (*s) {
		if (*s != '\\') {
			out[n++] = (unsigned char)*s++;
			continue;
		}
		s++;
		if (*s >= '0' && *s <= '3') {
			out[n++] = (unsigned char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		} else {
			const char *p = strchr(from, *s);

			cr_assert(p && *s, "unknown escape \\%c", *s);
			out[n++] = (unsigned char)to[p - from];
			s++;
		}
	}
	return n;
}

Test(escape, random_bytes_round_trip_and_stay_on_one_line)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned char name[64], back[64];
	char buf[SFS_ESCAPED_SIZE(sizeof(name))];

	for (unsigned round = 0; round < 20000; round++) {
		size_t n = round % 60 + 1;

		for (size_t i = 0; i < n; i++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			name[i] = (unsigned char)(seed % 255 + 1);        /* no NUL */
			if (round % 3 == 0 && name[i] >= 0x80)
				name[i] = (unsigned char)(0x80 | (name[i] & 0x3f));
		}
		name[n] = '\0';
		for (int ascii = 0; ascii < 2; ascii++) {
			cr_assert_eq(sfs_escape_name((char *)name, ascii, buf, sizeof(buf)), 0);
			for (const unsigned char *p = (unsigned char *)buf; *p; p++) {
				cr_assert(*p >= 0x20 && *p != 0x7f, "round %u: byte 0x%02x in the output", round, *p);
				cr_assert(!ascii || *p < 0x80, "round %u: byte 0x%02x in ASCII output", round, *p);
			}
			cr_assert_eq(unescape(buf, back), n, "round %u: length", round);
			cr_assert(memcmp(back, name, n) == 0, "round %u: round trip differs", round);
		}
	}
}

Test(escape, ascii_escapes_every_byte_above_0x7f)
{
	char buf[64];

	/* ls -b in the C locale */
	cr_assert_eq(sfs_escape_name("caf\xc3\xa9 x\n", true, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "caf\\303\\251\\ x\\n");
	cr_assert_eq(sfs_escape_name("bad\xe9x", true, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "bad\\351x");
}

Test(escape, enospc_keeps_whole_escapes)
{
	char buf[8];

	cr_assert_eq(sfs_escape_name("abc", false, buf, 4), 0);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(sfs_escape_name("abcd", false, buf, 4), -ENOSPC);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(sfs_escape_name("ab\033", false, buf, 6), -ENOSPC);  /* \033 needs 4 more bytes */
	cr_assert_str_eq(buf, "ab");
	cr_assert_eq(sfs_escape_name("x", false, buf, 0), -ENOSPC);
}
