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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "recover.h"
#include "units.h"

static const char help[] =
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

/* ---- what is wrong ---- */

__attribute__((format(printf, 3, 4)))
static void add(struct img_diag *d, enum img_prob p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->text[p], sizeof(d->text[p]), fmt, ap);
	va_end(ap);
	d->has[p] = true;
	d->n++;
}

const char *img_check_sector_text(uint32_t lss, uint32_t pss, char *buf, size_t len)
{
	const char *name = sfs_sector_name(lss, pss);

	snprintf(buf, len, "%s (%u/%u)", name ? name : "custom", lss, pss);
	return buf;
}

/* Compare the sidecar with what the map records. */
static void compare(const struct img_view *v, struct img_diag *d)
{
	const struct sfs_map_info *mi = sfs_map_info(v->map);
	const struct sfs_sidecar *sc = &v->sc;
	char a[64], b[64];

	if (sc->lss != mi->geom.lss || sc->pss != mi->geom.pss)
		add(d, P_SECTOR, "sidecar says sector %s but the image was made with %s; "
		    "the sector format never changes", img_check_sector_text(sc->lss, sc->pss, a, sizeof(a)),
		    img_check_sector_text(mi->geom.lss, mi->geom.pss, b, sizeof(b)));
	if (sc->block_size != mi->geom.block_size)
		add(d, P_BLOCK, "sidecar says block_size %llu but the image has %llu",
		    (unsigned long long)sc->block_size, (unsigned long long)mi->geom.block_size);
	if (sc->prov != mi->prov)
		add(d, P_PROV, "sidecar says provisioning %s but the image is %s%s", sfs_prov_name(sc->prov),
		    sfs_prov_name(mi->prov), sc->prov == SFS_PROV_EAGERZEROEDTHICK ?
		    " ('" IMG_PROG " inflate' converts it)" : "");
	if (sc->size < mi->geom.size)
		add(d, P_SIZE, "sidecar size %llu is smaller than the image (%llu bytes); images never shrink",
		    (unsigned long long)sc->size, (unsigned long long)mi->geom.size);
	else if (sc->size > mi->geom.size)
		snprintf(d->note, sizeof(d->note), "sidecar size %llu is larger than the image (%llu "
			 "bytes): it grows when next opened", (unsigned long long)sc->size,
			 (unsigned long long)mi->geom.size);
}

int img_check_diagnose(const struct img_view *v, struct img_diag *d)
{
	const struct img_ref *r = v->ref;
	char pending[600];

	memset(d, 0, sizeof(*d));
	/* A crash left a change of this image half done: the next start puts it right. */
	if (!v->served && v->state_fd >= 0 && sfs_recover_pending(v->state_fd, r->name, pending, sizeof(pending)))
		add(d, P_PENDING, "%s: the next start of the store finishes or undoes it, as does "
		    "'" IMG_PROG " check --repair %s'", pending, r->store);
	if (!v->sc_present && v->map_rc == -ENOENT && v->bk_rc == -ENOENT)
		return d->n ? 0 : -1;
	if (!v->sc_present)
		add(d, P_UNDECLARED, "no sidecar %s.json: the image is not declared (files left by an "
		    "interrupted create or unlink?)", r->name);
	else if (v->sc_rc < 0)
		add(d, P_SIDECAR, "sidecar: %s", v->sc_err);
	if (v->bk_rc == -ENOENT && v->map_rc == -ENOENT && v->sc_present) {
		/* not created yet (a sidecar that does not parse never gets its files) */
		d->declared_only = v->sc_rc == 0;
		return 0;
	}
	if (v->bk_rc < 0)
		add(d, P_BACKING, "backing file %s: %s", r->path, strerror(-v->bk_rc));
	else if (!S_ISREG(v->bk.st_mode))
		add(d, P_BACKING, "backing file %s is not a regular file", r->path);
	else if (v->bk.st_nlink != 1)
		add(d, P_BACKING, "backing file %s has %lu hard links; it must have one", r->path,
		    (unsigned long)v->bk.st_nlink);
	if (v->map_rc == -ENOENT)
		add(d, P_MAP_MISSING, "allocation map %s/%s.map is missing", SFS_STATE_DIR, r->name);
	else if (v->map_rc < 0)
		add(d, P_MAP_BAD, "allocation map: %s", v->map_err);
	if (!v->map)
		return 0;
	if (sfs_map_damage(v->map)->chunks) {
		char text[512];

		add(d, P_MAP_DAMAGED, "allocation map: %s", img_view_damage_text(v, text, sizeof(text)));
	}
	if (v->sc_rc == 0)
		compare(v, d);
	if (v->bk_rc == 0 && S_ISREG(v->bk.st_mode) &&
	    (uint64_t)v->bk.st_size < sfs_map_info(v->map)->geom.size)
		add(d, P_SHORT, "backing file is %lld bytes, shorter than the disk (%llu bytes)",
		    (long long)v->bk.st_size, (unsigned long long)sfs_map_info(v->map)->geom.size);
	if (sfs_map_info(v->map)->prov == SFS_PROV_EAGERZEROEDTHICK &&
	    !(sfs_map_info(v->map)->flags & SFS_MAP_F_ZEROED))
		add(d, P_UNZEROED, "eager zeroing not finished (%llu of %llu blocks): the blocks not zeroed "
		    "yet read as zeros, sectorfs resumes it when it next serves the store, --repair "
		    "finishes it now", (unsigned long long)sfs_map_count(v->map),
		    (unsigned long long)sfs_map_nblocks(v->map));
	return 0;
}

const char *img_check_why_not(const struct img_view *v, enum img_prob p)
{
	bool sc_ok = v->sc_rc == 0, bk_ok = v->bk_rc == 0 && S_ISREG(v->bk.st_mode) && v->bk.st_nlink == 1;

	switch (p) {
	case P_UNDECLARED:
		return "it may be an image whose sidecar was removed on purpose: write a sidecar to serve "
		       "it again, or remove the files";
	case P_SIDECAR:
		return "the sidecar is yours: correct the key it names";
	case P_BACKING:
		return "the disk's data is not there: sectorfs-img does not make it up";
	case P_MAP_MISSING:
	case P_MAP_BAD:
		if (!sc_ok)
			return "the map is rebuilt from the sidecar's declaration: correct the sidecar first";
		if (!bk_ok)
			return "the map is rebuilt from the backing file, which is not usable";
		if (p == P_MAP_BAD && v->map_rc != -EUCLEAN)
			return "the map cannot be read (an I/O or permission error), so it is not rebuilt";
		return NULL;
	case P_SECTOR:
	case P_BLOCK:
	case P_PROV:
	case P_SIZE:
		return sc_ok && v->map ? NULL : "the sidecar does not parse";
	default:
		return NULL;
	}
}

/* ---- --repair ---- */

/* Rewrite a map whose bitmap chunks fail their checksum, each block of theirs allocated; the
 * backing file is synced first (crash-ordering rule: data before the bits). */
static void salvage(struct img_session *ss, const struct img_ref *r)
{
	char fname[SFS_NAME_MAX + 8], err[512];
	struct sfs_map_damage dmg = { 0 };
	struct sfs_map *m = NULL;
	int bfd, rc;

	snprintf(fname, sizeof(fname), "%s.map", r->name);
	bfd = openat(ss->store_fd, r->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0) {
		tool_error("%s: cannot open the backing file: %s", r->path, strerror(errno));
		return;
	}
	rc = sfs_map_open(ss->state_fd, fname, SFS_MAP_SALVAGE, NULL, &m, err, sizeof(err));
	if (rc == 0) {
		dmg = *sfs_map_damage(m);
		rc = sfs_map_flush(m, bfd);
		sfs_map_close(m);
		if (rc < 0)
			snprintf(err, sizeof(err), "%s: cannot write the salvaged map: %s", fname, strerror(-rc));
	}
	close(bfd);
	if (rc < 0)
		tool_error("%s: %s", r->path, err);
	else if (dmg.blocks)
		printf("%s: repaired: marked the %llu blocks of %llu damaged bitmap chunk%s allocated: "
		       "nothing written is lost; those blocks now read what the backing file holds\n",
		       r->path, (unsigned long long)dmg.blocks, (unsigned long long)dmg.chunks,
		       dmg.chunks == 1 ? "" : "s");
	else
		printf("%s: repaired: rewrote %llu damaged bitmap chunk%s past the last block: no block "
		       "changed\n", r->path, (unsigned long long)dmg.chunks, dmg.chunks == 1 ? "" : "s");
}

/* Move a corrupt map aside for the image to rebuild it; true when moved. */
static bool move_corrupt_map(struct img_session *ss, const struct img_ref *r)
{
	char a[SFS_NAME_MAX + 16], b[SFS_NAME_MAX + 32];

	snprintf(a, sizeof(a), "%s.map", r->name);
	snprintf(b, sizeof(b), "%s.map.corrupt", r->name);
	if (renameat(ss->state_fd, a, ss->state_fd, b) < 0) {
		tool_error("%s/%s/%s: cannot move aside: %s", r->store, SFS_STATE_DIR, a, strerror(errno));
		return false;
	}
	printf("%s: repaired: moved the corrupt map to %s/%s/%s\n", r->path, r->store, SFS_STATE_DIR, b);
	return true;
}

/* Rewrite the sidecar with the geometry the map records; true when rewritten. */
static bool rewrite_sidecar(struct img_session *ss, const struct img_view *v)
{
	const struct sfs_map_info *mi = sfs_map_info(v->map);
	struct sfs_sidecar sc = v->sc;
	char sector[64], block[64];

	sc.lss = mi->geom.lss;
	sc.pss = mi->geom.pss;
	sc.block_size = mi->geom.block_size;
	sc.prov = mi->prov;
	if (sc.size < mi->geom.size)
		sc.size = mi->geom.size;
	if (img_save_sidecar(ss, &sc) < 0)
		return false;
	sfs_format_size(sc.block_size, block, sizeof(block));
	printf("%s: repaired: rewrote %s.json with the recorded geometry (%s, block size %s, %s, %llu "
	       "bytes)\n", v->ref->path, v->ref->name,
	       img_check_sector_text(sc.lss, sc.pss, sector, sizeof(sector)), block,
	       sfs_prov_name(sc.prov), (unsigned long long)sc.size);
	return true;
}

/* Open the image through the store, which rebuilds a missing map, extends a short backing
 * file and finishes eager zeroing, and say what it did. */
static void reopen(struct img_session *ss, const struct img_diag *d)
{
	const struct img_ref *r = ss->ref;

	if (sfs_store_get(ss->store, r->name, &ss->im) < 0) {
		ss->im = NULL;
		tool_error("%s: cannot open the image to repair it: %s", r->path,
			   ss->lasterr[0] ? ss->lasterr : "unknown error");
		return;
	}
	if (d->has[P_MAP_MISSING] || d->has[P_MAP_BAD])
		printf("%s: repaired: rebuilt the allocation map from the backing file's data "
		       "extents (%llu of %llu blocks hold data)\n", r->path,
		       (unsigned long long)sfs_map_count(sfs_image_map(ss->im)),
		       (unsigned long long)sfs_map_nblocks(sfs_image_map(ss->im)));
	if (d->has[P_SHORT])
		printf("%s: repaired: extended the backing file to %llu bytes\n", r->path,
		       (unsigned long long)sfs_image_geom(ss->im).size);
	if (d->has[P_UNZEROED])
		printf("%s: repaired: finished eager zeroing\n", r->path);
}

int img_check_repair(const struct img_view *v, const struct img_diag *d)
{
	const struct img_ref *r = v->ref;
	bool sc_ok = v->sc_rc == 0, bk_ok = v->bk_rc == 0 && S_ISREG(v->bk.st_mode);
	bool sidecar = d->has[P_SECTOR] || d->has[P_BLOCK] || d->has[P_PROV] || d->has[P_SIZE];
	bool open_it = (d->has[P_MAP_MISSING] && sc_ok && bk_ok) || d->has[P_SHORT] || d->has[P_UNZEROED];
	struct img_session ss;

	if (img_session_open(&ss, r, "check --repair", IMG_S_QUIET) < 0)
		return -1;
	if (d->has[P_MAP_BAD] && v->map_rc == -EUCLEAN && sc_ok && bk_ok && move_corrupt_map(&ss, r))
		open_it = true;
	if (d->has[P_MAP_DAMAGED] && bk_ok)
		salvage(&ss, r);
	if (sidecar && sc_ok && v->map && rewrite_sidecar(&ss, v))
		open_it = true;
	if (open_it)
		reopen(&ss, d);
	return img_session_close(&ss);
}

/* ---- the report ---- */

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

int img_check_image(const struct img_ref *ref, bool repair)
{
	struct img_diag d;
	struct img_view v;

	if (repair && (img_store_exists(ref->store) < 0 || img_refuse_if_served(ref) < 0))
		return FSCK_OPER;
	if (img_view_open(&v, ref) < 0)
		return FSCK_OPER;
	if (img_check_diagnose(&v, &d) < 0) {
		tool_error("%s: no such image (no sidecar, backing file or map)", ref->path);
		img_view_close(&v);
		return FSCK_OPER;
	}
	if (v.served)
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

enum { CHECK_REPAIR };
static const struct tool_opt opts[] = {
	[CHECK_REPAIR] = { "repair", 0, TOOL_FLAG },
	{ NULL },
};

static int exec_check(const struct tool_cmd *self, struct tool_item *item)
{
	const struct img_target *t = item->target;
	bool repair = item->opt[CHECK_REPAIR].set;

	(void)self;
	return t->store_dir ? img_check_store(t->store_dir, repair) : img_check_image(&t->ref, repair);
}

const struct tool_cmd img_cmd_check = {
	.name = "check",
	.usage = "[--repair] STORE/NAME | STORE",
	.summary = "verify that sidecar, map and backing file agree (fsck exit codes)",
	.help = help,
	.opts = opts,
	.args = { "STORE/NAME" },
	.target = IMG_TARGET_CHECK,
	.usage_status = FSCK_USAGE,
	.exec = exec_check,
};
