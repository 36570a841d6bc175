/* SPDX-License-Identifier: MIT */
/*
 * test_remark.c - unit tests of core/util/remark.c: remarks joined by
 * "; ", the first one alone, and a line that is full cut at its end,
 * never past it.
 */
#include <stdarg.h>
#include <string.h>

#include <criterion/criterion.h>

#include "util/remark.h"

static void add(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sfs_remark_vadd(buf, size, fmt, ap);
	va_end(ap);
}

Test(remark, joined_by_semicolons)
{
	char buf[64] = "";

	add(buf, sizeof(buf), "first %d", 1);
	cr_expect_str_eq(buf, "first 1");
	add(buf, sizeof(buf), "second");
	add(buf, sizeof(buf), "%s", "third");
	cr_expect_str_eq(buf, "first 1; second; third");
}

Test(remark, a_full_line_is_cut_at_its_end)
{
	char buf[12] = "";

	buf[11] = 'X';      /* bytes past size-1 never written: the guard stays */
	add(buf, 11, "0123456");
	add(buf, 11, "abcdef");
	cr_expect_str_eq(buf, "0123456; a");
	cr_expect_eq(buf[11], 'X');
	add(buf, 11, "more");
	cr_expect_str_eq(buf, "0123456; a", "a full line takes nothing more");
}
