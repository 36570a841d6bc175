/* SPDX-License-Identifier: MIT */
/*
 * stat.h - what sectorfs-stat.c (the iostat-like view) shares with
 * stat_refused.c (--refused, the recent lists) and stat_read.c (reading
 * the stats files).
 */
#ifndef SFS_TOOL_STAT_H
#define SFS_TOOL_STAT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define PROG "sectorfs-stat"

extern const char *stat_mnt;     /* MNT */
extern bool stat_json;           /* --json */
extern bool stat_utf8;           /* names keep UTF-8 (a UTF-8 locale) */

/* "sectorfs-stat: MESSAGE" on stderr, then exit rc. */
void stat_die(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The image name (into name, NAME_MAX + 1 bytes) of a "NAME.json" entry of .stats, if it is one
 * of names (any when nnames is 0). */
bool stat_wanted(const char *entry, char *name, char **names, int nnames);

/* Read the whole of MNT/.stats/NAME.json (its path into path, len bytes, for messages; its
 * length in *lenp) into a buffer reused by the next call: NULL when the image has vanished;
 * other errors exit 1. */
const char *stat_read_image(const char *name, char *path, size_t len, size_t *lenp);

/* sectorfs-stat --refused MNT [NAME...]: each image's recent lists, or one JSON object of them
 * all.  0; errors exit 1. */
int stat_refused(char **names, int nnames);

#endif
