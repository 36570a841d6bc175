/* SPDX-License-Identifier: MIT */
/*
 * remark.c - remarks gathered into one bounded line of text (remark.h).
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "remark.h"

void sfs_remark_vadd(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t used;

	assert(buf && size > 0);
	used = strnlen(buf, size - 1);
	if (used > 0 && used + 2 < size) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	vsnprintf(buf + used, size - used, fmt, ap);
}
