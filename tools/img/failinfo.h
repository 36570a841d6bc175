/* SPDX-License-Identifier: MIT */
/*
 * failinfo.h - an image's failures (power, bad sectors, a crash's
 * unflushed writes) for sectorfs-img info and check (failinfo.c).
 */
#ifndef SFS_IMG_FAILINFO_H
#define SFS_IMG_FAILINFO_H

#include <jansson.h>

#include "check.h"
#include "common.h"
#include "fail/fail.h"

struct img_fail {
	int rc;                      /* sfs_fail_peek's: -errno when NAME.disk or NAME.undo is damaged */
	char err[512];
	bool loaded;                 /* ds holds the state (rc 0) */
	struct sfs_diskstate ds;
	uint64_t writes;             /* unflushed writes in NAME.undo */
	char *list;                  /* the bad sectors, a range a line */
	size_t listlen;
};

/* Read the failures of v's image (geometry mi) into f (free with img_fail_free). */
void img_fail_read(const struct img_view *v, const struct sfs_map_info *mi, struct img_fail *f);
void img_fail_free(struct img_fail *f);

/* info's lines, and its JSON keys (power, power_cut_pending, bad_sectors, unflushed_writes). */
void img_fail_print_text(const struct img_fail *f, const char *name);
void img_fail_json(json_t *o, const struct img_fail *f);

/* check: a damaged NAME.disk or NAME.undo is problem P_FAILSTATE; the power off, bad sectors and
 * a crash's unflushed writes are notes (d->note), as the next start deals with them. */
void img_fail_check(const struct img_view *v, struct img_diag *d);

#endif
