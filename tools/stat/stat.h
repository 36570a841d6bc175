/* SPDX-License-Identifier: MIT */
/*
 * stat.h - what main.c (the iostat-like view) shares with
 * refused.c (--refused, the recent lists) and read.c (reading
 * the stats files).  Errors end the run through toolutil's tool_die.
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

#include "toolutil.h"

#define PROG "sectorfs-stat"

extern const char *stat_mnt;     /* MNT */
extern bool stat_json;           /* --json */
extern bool stat_utf8;           /* names keep UTF-8 (a UTF-8 locale) */

/* The image names that have a NAME.json in MNT/.stats (only those of names, when nnames is
 * not 0), sorted, each malloc'd, in a malloc'd array of *n; errors exit 1. */
char **stat_names(char **names, int nnames, size_t *n);

/* Exit 1 saying that MNT has no image called name (no MNT/.stats/NAME.json). */
void stat_no_image(const char *name) __attribute__((noreturn));

/* What of MNT/.stats/NAME.json stat_load reads, by core's parser (stats.h). */
enum stat_part {
	STAT_COUNTERS,    /* sfs_stats_parse_json into a struct sfs_stats_parsed */
	STAT_RECENT,      /* sfs_stats_parse_recent_json into a struct sfs_stats_parsed_recent */
};

/* Read MNT/.stats/NAME.json and parse part of it into out, the struct part names: true, or
 * false when the image has vanished.  Errors exit 1; a file that lacks what part needs is
 * said to come from a daemon older than this tool. */
bool stat_load(const char *name, enum stat_part part, void *out);

/* sectorfs-stat --refused MNT [NAME...]: each image's recent lists, or one JSON object of them
 * all.  0; errors exit 1. */
int stat_refused(char **names, int nnames);

#endif
