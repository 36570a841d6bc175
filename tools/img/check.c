/* SPDX-License-Identifier: MIT */
/*
 * check.c - sectorfs-img check: do sidecar, map and backing file agree?
 *
 * The image is looked at on disk (view.c) and every problem found is one
 * line on stdout.  What is checked, and what --repair does about it:
 *
 *   problem                               --repair
 *   no sidecar (leftover files)           nothing: it may be a deleted image
 *   sidecar does not parse                nothing: the user's file, fix by hand
 *   backing file missing / not regular    nothing: the data is not there
 *   map missing                           import: rebuilt from SEEK_DATA
 *   map corrupt (header, CRC, length)     moved to NAME.map.corrupt, rebuilt
 *   bitmap chunks fail their checksum     salvaged: their blocks marked
 *     (the header is good)                  allocated, the chunks rewritten
 *   map unreadable (EACCES, EIO...)       nothing
 *   sidecar sector, block size or mode    sidecar rewritten with the recorded
 *     differ from the recorded geometry     values (the recorded ones win)
 *   sidecar size < recorded size          sidecar rewritten
 *   backing shorter than the disk         extended (space reserved if thick)
 *   eager zeroing never finished          finished
 *   NAME.disk or NAME.undo damaged        nothing: it holds no data (remove it
 *                                         to forget power and bad sectors)
 *
 * An image's failures (failinfo.c) are accepted: the power off, bad
 * sectors, a cut under way and a crash's unflushed writes are notes, as
 * the next start deals with them.
 *
 * A rebuilt map marks every block that holds data in the backing file
 * (SEEK_DATA), as an import does: nothing written is lost, but blocks
 * written and never flushed, or bytes put into the backing file behind the
 * daemon's back, then read as the file holds them.  A salvaged map keeps
 * every chunk that checks and marks each block of a damaged chunk
 * allocated (SFS_MAP_SALVAGE), so those blocks too read what the backing
 * file holds (zeros where it is sparse or was reserved).
 *
 * Repairs run with the store locked (sfs_store_open) and reuse what
 * opening an image already does (import, extend, finish zeroing); nothing
 * that holds data is deleted.  Exit codes are fsck's: 0 clean, 1 problems
 * repaired, 4 problems left, 8 operational error, 16 usage error.
 *
 * This file is the command and the report of one image; the problems are
 * found in diagnose.c, repaired in repair.c, and a whole store is
 * checkstore.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static const char check_help[] =
	"Verify STORE/NAME: the sidecar parses, the allocation map is intact and records\n"
	"the geometry the sidecar declares, the backing file is a regular file at least\n"
	"as long as the disk.  One line per problem.  Given a STORE, check every image in\n"
	"it, what a crash left for the next start to put right (temporary files,\n"
	"interrupted renames, unlinks and grows) and the files that are no image.\n\n"
	"  --repair    fix what can be fixed without losing data: rebuild a missing or\n"
	"              corrupt map from the backing file (the corrupt one is kept as\n"
	"              .sectorfs/NAME.map.corrupt), mark the blocks of bitmap chunks\n"
	"              that fail their checksum allocated (they then read what the\n"
	"              backing file holds), rewrite a sidecar that disagrees with\n"
	"              the recorded geometry, extend a short backing file, finish eager\n"
	"              zeroing (without --repair, eager zeroing not finished is a note:\n"
	"              sectorfs resumes it).  Refused while a sectorfs daemon serves the store.\n"
	"  -h, --help  this help\n\n"
	"Exit status (as fsck): 0 clean, 1 problems repaired, 4 problems left,\n"
	"8 operational error, 16 usage error.\n";

static void print_problems(const struct img_ref *r, const struct img_diag *d, const char *prefix)
{
	for (int p = 0; p < P_N; p++)
		if (d->has[p])
			printf("%s: %s%s\n", r->path, prefix, d->text[p]);
}

/* Every problem, with why --repair leaves it where it does; the number of those. */
static unsigned print_problems_why(const struct img_view *v, const struct img_diag *d, const char *prefix)
{
	unsigned n = 0;

	for (int p = 0; p < P_N; p++) {
		const char *why = d->has[p] ? img_check_why_not(v, p) : NULL;

		if (d->has[p])
			printf("%s: %s%s%s%s%s\n", v->ref->path, prefix, d->text[p], why ? " (not repairable: " : "",
			       why ? why : "", why ? ")" : "");
		n += why != NULL;
	}
	return n;
}

/* The one line of an image with no problem. */
static void report_clean(const struct img_view *v, const struct img_diag *d)
{
	const struct img_ref *r = v->ref;

	if (d->declared_only)
		printf("%s: clean (declared by its sidecar, not created yet)\n", r->path);
	else if (!v->map)            /* a backing file without data, its map made at the next open */
		printf("%s: clean (%llu bytes, %s, no allocation map yet)\n", r->path,
		       (unsigned long long)v->sc.size, sfs_prov_name(v->sc.prov));
	else
		printf("%s: clean (%llu bytes, %s, %llu of %llu blocks allocated)\n", r->path,
		       (unsigned long long)sfs_map_info(v->map)->geom.size,
		       sfs_prov_name(sfs_map_info(v->map)->prov), (unsigned long long)sfs_map_count(v->map),
		       (unsigned long long)sfs_map_nblocks(v->map));
}

/* Without --repair: every problem, then what --repair would do about them. */
static void report_problems(const struct img_view *v, const struct img_diag *d)
{
	const struct img_ref *r = v->ref;
	unsigned left = print_problems_why(v, d, "");

	if (left < d->n)
		printf("%s: %u problem%s; '" IMG_PROG " check --repair %s' fixes %s without losing data\n",
		       r->path, d->n, d->n == 1 ? "" : "s", r->path,
		       left ? "the others" : d->n == 1 ? "it" : "them");
	else
		printf("%s: %u problem%s, none that --repair can fix\n", r->path, d->n, d->n == 1 ? "" : "s");
}

/* With --repair: the problems, the repairs, then a new look at what is left.  The view is
 * closed. */
static int repair_and_recheck(struct img_view *v, const struct img_diag *d)
{
	const struct img_ref *r = v->ref;
	struct img_diag after;
	int rc;

	print_problems(r, d, "");
	rc = img_check_repair(v, d);
	img_view_close(v);
	if (rc < 0 || img_view_open(v, r) < 0)
		return FSCK_OPER;
	img_check_diagnose(v, &after);
	print_problems_why(v, &after, "not repaired: ");
	img_view_close(v);
	printf("%s: %u problem%s found, %u repaired\n", r->path, d->n, d->n == 1 ? "" : "s",
	       after.n < d->n ? d->n - after.n : 0);
	return after.n ? FSCK_LEFT : FSCK_REPAIRED;
}

struct find_plan {
	const char *name;
	struct sfs_recover_item *out;
	bool found;
};

static void find_plan(void *ctx, const struct sfs_recover_item *p)
{
	struct find_plan *f = ctx;

	if (p->is_record && (strcmp(p->name, f->name) == 0 || strcmp(p->to, f->name) == 0)) {
		*f->out = *p;
		f->found = true;
	}
}

bool img_check_pending(const char *store, const char *name, struct sfs_recover_item *p)
{
	struct find_plan f = { name, p, false };
	int dfd, sfd;

	if (img_served(store, NULL, 0) || (dfd = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	sfd = openat(dfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd >= 0) {
		sfs_recover_plan(dfd, sfd, find_plan, &f);
		close(sfd);
	}
	close(dfd);
	return f.found;
}

/* Does the next start take the image out of the store (an unlink finished, a make undone, a
 * rename moving it to the other name)?  Then it is not checked: what stays is the plan's. */
static bool leaves(const struct img_ref *ref, const struct sfs_recover_item *p)
{
	if (!p || p->verdict == SFS_RECOVER_BLOCKED || p->verdict == SFS_RECOVER_DROP)
		return false;
	if (p->kind == SFS_INTENT_RENAME)
		return strcmp(ref->name, p->verdict == SFS_RECOVER_UNDO ? p->to : p->name) == 0;
	return p->goes && !p->keeps_map;
}

/* 'check [--repair] STORE/NAME' as pend says the next start leaves it, saying that the store is
 * served when note_served. */
static int check_image(const struct img_ref *ref, bool repair, const struct sfs_recover_item *pend,
		       bool note_served)
{
	struct img_diag d;
	struct img_view v;

	if (repair && (img_store_exists(ref->store) < 0 || img_refuse_if_served(ref) < 0))
		return FSCK_OPER;
	if (pend && pend->verdict != SFS_RECOVER_BLOCKED) {
		printf("%s: pending: %s: completed at the next start%s\n", ref->path, pend->what,
		       leaves(ref, pend) ? ", and the image is not there after it" : "");
		if (pend->alone[0])
			printf("%s: note: %s\n", ref->path, pend->alone);
	}
	if (leaves(ref, pend))
		return FSCK_CLEAN;
	if (img_view_open_as(&v, ref, pend) < 0)
		return FSCK_OPER;
	if (img_check_diagnose(&v, &d) < 0) {
		tool_error("%s: no such image (no sidecar, backing file or map)", ref->path);
		img_view_close(&v);
		return FSCK_OPER;
	}
	if (v.served && note_served)
		tool_error("note: %s is served by sectorfs (%s); checking the state on disk as of its "
			   "last flush", ref->store, v.holder);
	if (d.note[0])
		printf("%s: note: %s\n", ref->path, d.note);
	/* no damage, and the next start finishes it: a note unless asked to finish it now */
	if (d.has[P_UNZEROED] && !repair) {
		printf("%s: note: %s\n", ref->path, d.text[P_UNZEROED]);
		d.has[P_UNZEROED] = false;
		d.n--;
	}
	if (d.n && repair)
		return repair_and_recheck(&v, &d);
	if (d.n)
		report_problems(&v, &d);
	else
		report_clean(&v, &d);
	img_view_close(&v);
	return d.n ? FSCK_LEFT : FSCK_CLEAN;
}

int img_check_image(const struct img_ref *ref, bool repair, const struct sfs_recover_item *pend)
{
	return check_image(ref, repair, pend, true);
}

int img_check_store_image(const struct img_ref *ref, bool repair, const struct sfs_recover_item *pend)
{
	return check_image(ref, repair, pend, false);
}

enum { CHECK_REPAIR };
static const struct tool_opt check_opts[] = {
	[CHECK_REPAIR] = { "repair", 0, TOOL_FLAG },
	{ NULL },
};

static int exec_check(const struct tool_cmd *self, struct tool_item *item)
{
	const struct img_target *t = item->target;
	bool repair = item->opt[CHECK_REPAIR].set;
	struct sfs_recover_item pend;

	(void)self;
	if (t->store_dir)
		return img_check_store(t->store_dir, repair);
	/* with --repair the session's start applies what is pending before the image is looked at */
	return img_check_image(&t->ref, repair,
			       img_check_pending(t->ref.store, t->ref.name, &pend) ? &pend : NULL);
}

TOOL_CMD(img_cmd_check, "check", "[--repair] STORE/NAME | STORE",
	 "verify that sidecar, map and backing file agree (fsck exit codes)",
	 .help = check_help, .opts = check_opts, .args = { "STORE/NAME" },
	 .target = IMG_TARGET_CHECK, .usage_status = FSCK_USAGE, .exec = exec_check);
