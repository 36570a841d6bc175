/* SPDX-License-Identifier: MIT */
/*
 * check.h - the parts of sectorfs-img check: what is wrong with an image
 * (diagnose.c), what --repair does about it (repair.c), one image and its
 * report (check.c) and a whole store (checkstore.c).
 */
#ifndef SFS_IMG_CHECK_H
#define SFS_IMG_CHECK_H

#include <stdbool.h>

#include "common.h"

/* The exit codes, fsck's; a store's is the OR of its parts'. */
enum { FSCK_CLEAN = 0, FSCK_REPAIRED = 1, FSCK_LEFT = 4, FSCK_OPER = 8, FSCK_USAGE = 16 };

/* The problems, in the order they are reported. */
enum img_prob {
	P_UNDECLARED, P_SIDECAR, P_BACKING, P_MAP_MISSING, P_MAP_BAD, P_MAP_TIE, P_MAP_DAMAGED,
	P_SECTOR, P_BLOCK, P_PROV, P_SIZE, P_SHORT, P_UNZEROED, P_PENDING, P_FAILSTATE, P_N
};

struct img_diag {
	bool has[P_N];
	char text[P_N][1024];
	unsigned n;
	bool declared_only;       /* not created yet, which is fine: the sidecar alone, or with a
				   * map that records no data (a create interrupted before its
				   * backing file) */
	char note[1024];          /* remarks that are not problems, "; " between them */
};

/* Look at everything the view shows: 0 with d filled, -1 when there is no such image at
 * all (no sidecar, backing file, map, or half-done change). */
int img_check_diagnose(const struct img_view *v, struct img_diag *d);

/* Add a remark to d->note, after "; " when it has one already.  No errors. */
void img_diag_note(struct img_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Why --repair leaves problem p alone, or NULL when it repairs it. */
const char *img_check_why_not(const struct img_view *v, enum img_prob p);

/* "4kn (4096/4096)", "custom (4096/8192)" */
const char *img_check_sector_text(uint32_t lss, uint32_t pss, char *buf, size_t len);

/* Repair what d found, with the store locked; each action done is printed.  0, or -1 when
 * the store could not be opened or flushed (printed). */
int img_check_repair(const struct img_view *v, const struct img_diag *d);

/* 'check [--repair] STORE/NAME': the fsck exit code.  pend: what the next start's recovery
 * does to the image (recover.h; NULL: nothing), which check shows as pending and looks past:
 * the image is judged as the start will leave it. */
int img_check_image(const struct img_ref *ref, bool repair, const struct sfs_recover_item *pend);

/* The item of the next start's recovery of store that concerns image name, into *p: true when
 * there is one (and no daemon serves the store). */
bool img_check_pending(const char *store, const char *name, struct sfs_recover_item *p);

/* img_check_image for 'check STORE', which says once that the store is served: no note of it
 * per image. */
int img_check_store_image(const struct img_ref *ref, bool repair,
			  const struct sfs_recover_item *pend);

/* 'check [--repair] STORE': every image of store and what a crash left in it; the OR of the
 * fsck exit codes. */
int img_check_store(const char *store, bool repair);

#endif
