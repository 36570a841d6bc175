/* SPDX-License-Identifier: MIT */
/*
 * remark.h - remarks gathered into one bounded line of text, "; " between
 * them, as the checks of sectorfs-img and the recovery at a start report
 * what is not a problem but worth saying.
 */
#ifndef SFS_REMARK_H
#define SFS_REMARK_H

#include <stdarg.h>
#include <stddef.h>

/* Add the remark fmt/ap to the NUL-terminated text buf (size bytes), after "; " when it holds
 * one already; a remark that does not fit is cut at the end of buf.  No errors. */
void sfs_remark_vadd(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
