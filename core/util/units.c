/* SPDX-License-Identifier: MIT */
/*
 * units.c - parsing and printing of byte sizes (see units.h).
 *
 * Grammar accepted by sfs_parse_size, nothing else:
 *
 *     size   := digits [ mult [ "iB" | "B" ] | "B" ]
 *     mult   := "K" | "M" | "G" | "T"          (powers of 1024)
 *
 * so "512", "512B", "4K", "4KiB", "1MB" and "8G" are sizes, while "",
 * "+1", "-1", " 1", "1 K", "1.5G", "1k" (lower case), "1KB2" and "1P" are
 * not (-EINVAL).  Leading zeros are plain decimal ("010" is 10).  The
 * syntax is checked before the range, so a malformed string is -EINVAL
 * however long its digits; a well-formed one above 2^63-1 is -ERANGE.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

#define SIZE_LIMIT ((uint64_t)INT64_MAX)

static const char suffixes[] = "KMGT";
static const char *const human_units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

/* Shift of a multiplier letter (10 for K ... 40 for T), or -1. */
static int suffix_shift(char c)
{
	const char *p = c ? strchr(suffixes, c) : NULL;

	return p ? 10 * (int)(p - suffixes + 1) : -1;
}

int sfs_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int overflow = 0, shift = 0;
	const char *p = s;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (SIZE_LIMIT - d) / 10)
			overflow = 1;
		else
			v = v * 10 + d;
	}
	if (*p && *p != 'B') {
		shift = suffix_shift(*p++);
		if (shift < 0)
			return -EINVAL;
		if (*p == 'i')
			p++;
		if (*p == 'B')
			p++;
		else if (p[-1] == 'i')
			return -EINVAL;        /* "4Ki" */
	} else if (*p == 'B') {
		p++;
	}
	if (*p)
		return -EINVAL;
	if (overflow || v > (SIZE_LIMIT >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* snprintf into buf, -ENOSPC when it does not fit. */
static int fit(int n, size_t len)
{
	return (n < 0 || (size_t)n >= len) ? -ENOSPC : 0;
}

int sfs_format_size(uint64_t bytes, char *buf, size_t len)
{
	int i;

	for (i = (int)sizeof(suffixes) - 2; i >= 0; i--) {
		int shift = 10 * (i + 1);

		if (bytes && (bytes & ((UINT64_C(1) << shift) - 1)) == 0)
			return fit(snprintf(buf, len, "%" PRIu64 "%c", bytes >> shift,
					    suffixes[i]), len);
	}
	return fit(snprintf(buf, len, "%" PRIu64, bytes), len);
}

/*
 * Integer arithmetic only: whole units, then the remainder rounded to a
 * tenth.  A value that rounds up to 1024.0 of a unit is shown as 1.0 of
 * the next one ("1.0 MiB", not "1024.0 KiB").
 */
int sfs_format_human(uint64_t bytes, char *buf, size_t len)
{
	const int nunits = (int)(sizeof(human_units) / sizeof(human_units[0]));
	uint64_t div, whole, tenth;
	int u = 0;

	while (u + 1 < nunits && bytes >> (10 * (u + 1)))
		u++;
	if (u == 0)
		return fit(snprintf(buf, len, "%" PRIu64 " B", bytes), len);
	div = UINT64_C(1) << (10 * u);
	whole = bytes / div;
	tenth = ((bytes % div) * 10 + div / 2) / div;     /* < 2^60 * 10: no overflow */
	if (tenth == 10) {
		whole++;
		tenth = 0;
	}
	if (whole == 1024 && u + 1 < nunits) {
		whole = 1;
		u++;
	}
	return fit(snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", whole, tenth,
			    human_units[u]), len);
}

/* The sizes of transfers and disks in the bench's reports: a whole number of units reads as
 * such ("4 KiB", not "4.0 KiB"), the largest unit that divides them up to TiB. */
int sfs_format_iec(uint64_t bytes, char *buf, size_t len)
{
	int u = 0;

	while (u < 4 && bytes && bytes % (UINT64_C(1) << (10 * (u + 1))) == 0)
		u++;
	if (u == 0)
		return sfs_format_human(bytes, buf, len);
	return fit(snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * u), human_units[u]), len);
}
