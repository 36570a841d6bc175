/* SPDX-License-Identifier: MIT */
/*
 * grow.c - growing an image all or nothing (see grow.h).
 *
 * The order, with the state a crash after each step leaves and what the
 * next open of the store (recgrow.c) makes of it:
 *
 *   step                                  on disk after it        recovery
 *   1 journal NAME.grow: OLD NEW LEN SC   nothing else changed    undo: nothing to do
 *     (and the image's identity:
 *     intent.h)
 *   2 prepare: backing file extended to   backing longer, map     undo: backing cut to LEN
 *     NEW (reserved if thick), map file   file longer, both       (the reservation goes
 *     extended; both durable              headers still OLD       with it), map pages dropped
 *   3 sidecar NAME.json says NEW (SC=1)   sidecar NEW, map OLD    undo: and the sidecar
 *                                                                 rewritten with OLD
 *   4 commit: map header says NEW         map NEW                 finish: sidecar made to
 *                                                                 say NEW if it says less
 *   5 journal removed                     done
 *
 * The map header is the commit point: recovery reads it and finishes the
 * grow when it says NEW, undoes it when it says OLD.  A failure (not a
 * crash) before the commit undoes the same steps at once.  SC=0 is the
 * grow of an image whose sidecar already says NEW (the user edited it):
 * undoing it leaves the sidecar alone, and the next open tries again.
 * An eagerzeroedthick image's header loses its "zeroed" flag at the
 * commit; the new blocks are zeroed after step 5 (sfs_image_zero_start:
 * in the background, outside the store's lock, for an image opened
 * SFS_IMAGE_ZERO_BG), and an interrupted zeroing resumes when the image
 * is next opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "intent.h"
#include "contract/names.h"
#include "contract/sidecar.h"
#include "util/step.h"
#include "store.h"
#include "util/tmpfile.h"

#define NAMEBUF 300

static int journal_name(const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s" SFS_GROW_SUFFIX, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int rewrite_sidecar_size(int store_fd, int state_fd, const char *name, uint64_t from,
				uint64_t to, bool only_if_smaller, const struct sfs_log *log)
{
	char scname[NAMEBUF], err[512];
	struct sfs_sidecar sc;
	int rc;

	sfs_sidecar_name(scname, sizeof(scname), name);
	rc = sfs_sidecar_load(store_fd, scname, &sc, err, sizeof(err));
	if (rc < 0) {
		sfs_logf(log, SFS_LOG_WARN, "%s", err);
		return rc;
	}
	if (only_if_smaller ? sc.size >= to : sc.size != from)
		return 0;
	sc.size = to;
	return sfs_sidecar_save(store_fd, scname, state_fd, &sc);
}

/* rc; when it is 0, what crash point n of a grow says (step.h). */
static int grow_step(int rc, int n)
{
	return rc == 0 ? sfs_step("grow", n) : rc;
}

int sfs_grow(int store_fd, int state_fd, struct sfs_image *im, uint64_t new_size, bool save_sidecar,
	     const struct sfs_log *log)
{
	struct sfs_geom g = sfs_image_geom(im);
	const char *name = sfs_image_name(im);
	struct sfs_intent rec = { .kind = SFS_INTENT_GROW, .new_size = new_size, .sidecar = save_sidecar };
	char jname[NAMEBUF];
	struct sfs_sidecar sc;
	bool saved = false;
	struct stat st;
	int rc, urc = 0;

	g.size = sfs_image_capacity(im);       /* what backing file, map and sidecar have */
	rc = sfs_geom_grow_check(&g, new_size, NULL, 0);
	if (rc)
		return rc < 0 ? rc : 0;
	if ((rc = journal_name(name, jname, sizeof(jname))) < 0)
		return rc;
	if (fstat(sfs_image_fd(im), &st) < 0)
		return -errno;
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	rec.old_size = g.size;
	rec.old_len = (uint64_t)st.st_size;
	rec.img = sfs_image_intent_who(im);
	rc = grow_step(sfs_intent_write(state_fd, &rec), 1);
	if (rc == 0)
		rc = grow_step(sfs_image_grow_prepare(im, new_size), 2);
	if (rc == 0 && save_sidecar) {
		char scname[NAMEBUF];

		sc = sfs_image_sidecar(im);
		sc.size = new_size;
		sfs_sidecar_name(scname, sizeof(scname), name);
		rc = sfs_sidecar_save(store_fd, scname, state_fd, &sc);
		saved = rc == 0;
		rc = grow_step(rc, 3);
	}
	if (rc == 0)
		rc = grow_step(sfs_image_grow_commit(im, new_size), 4);
	if (rc < 0 && sfs_image_capacity(im) == new_size) {
		/* failed after the commit (only a test can make it): the grow stands */
		sfs_remove_durably(state_fd, jname);
		return rc;
	}
	if (rc < 0) {
		urc = sfs_image_grow_abort(im, (uint64_t)st.st_size);
		if (saved && urc == 0)
			urc = rewrite_sidecar_size(store_fd, state_fd, name, new_size, g.size, false, log);
		if (urc == 0)
			urc = sfs_remove_durably(state_fd, jname);
		else
			sfs_logf(log, SFS_LOG_ERR, "%s: cannot undo the failed grow to %" PRIu64 " bytes: %s; "
				 "the next start of the store undoes it", name, new_size, strerror(-urc));
		return rc;
	}
	urc = sfs_remove_durably(state_fd, jname);
	if (urc < 0)
		sfs_logf(log, SFS_LOG_WARN, "%s: cannot remove %s: %s (the grow is done)", name, jname,
			 strerror(-urc));
	rc = sfs_image_zero_start(im);
	if (rc == 0)
		rc = sfs_image_flush(im);
	return rc;
}

int sfs_trim(int store_fd, int state_fd, struct sfs_image *im, uint64_t size, const struct sfs_log *log)
{
	uint64_t cap = sfs_image_capacity(im);
	const char *name = sfs_image_name(im);
	struct sfs_intent rec = { .kind = SFS_INTENT_TRIM, .old_size = cap, .new_size = size };
	char jname[NAMEBUF];
	int rc;

	if (size >= cap)
		return 0;
	if ((rc = journal_name(name, jname, sizeof(jname))) < 0)
		return rc;
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	rec.img = sfs_image_intent_who(im);
	rc = sfs_intent_write(state_fd, &rec);
	if (rc == 0)
		rc = sfs_step("trim", 1);
	if (rc == 0)
		rc = sfs_image_trim_commit(im, size);
	if (rc < 0) {
		sfs_remove_durably(state_fd, jname);
		return rc;
	}
	/* committed: what follows is finished at the next start if it fails here */
	rc = sfs_step("trim", 2);
	if (rc == 0)
		rc = rewrite_sidecar_size(store_fd, state_fd, name, cap, size, false, log);
	if (rc == 0)
		rc = sfs_step("trim", 3);
	if (rc == 0)
		rc = sfs_image_trim_backing(im);
	if (rc == 0)
		rc = sfs_remove_durably(state_fd, jname);
	if (rc < 0)
		sfs_logf(log, SFS_LOG_ERR, "%s: cannot finish shrinking from %" PRIu64 " to %" PRIu64 " bytes: %s; "
			 "the next start of the store finishes it", name, cap, size, strerror(-rc));
	return rc;
}
