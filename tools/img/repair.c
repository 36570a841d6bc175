/* SPDX-License-Identifier: MIT */
/*
 * repair.c - sectorfs-img check --repair: what is done about each problem
 * diagnose.c found, with the store locked (a session, so never while a
 * daemon serves it).  Each action done is one "repaired:" line.
 *
 *   the map is corrupt        moved aside to NAME.map.corrupt (nothing that
 *                             holds data is deleted), then rebuilt
 *   the map is not the        moved aside to NAME.map.stale, then rebuilt from
 *     image's (map/ident.h)   the backing file there; its geometry is never
 *                               taken into the sidecar
 *   a change the start could  cleared (sfs_recover_clear): a grow decided by
 *     not finish                the sidecar when the map cannot say, a record
 *                               that is no regular file removed
 *   bitmap chunks damaged     salvaged: the blocks of those chunks marked
 *                             allocated, after the backing file is synced
 *   the sidecar disagrees     rewritten with the recorded geometry
 *   map missing, backing      the image opened through the store, which
 *     short, zeroing left       rebuilds the map from the backing file's
 *                               data extents, extends the file, finishes
 *                               the zeroing: what serving it would do
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "store/recover.h"
#include "util/units.h"

/* Rewrite a map whose bitmap chunks fail their checksum, each block of theirs allocated; the
 * backing file is synced first (crash-ordering rule: data before the bits). */
static void salvage(struct img_session *ss, const struct img_ref *r)
{
	char fname[SFS_NAME_MAX + 8], err[512];
	struct sfs_map_damage dmg = { 0 };
	struct sfs_map *m = NULL;
	int bfd, rc;

	sfs_map_name(fname, sizeof(fname), r->name);
	bfd = openat(ss->store_fd, r->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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

/* Move a map aside (suffix: SFS_MAP_CORRUPT_SUFFIX, SFS_MAP_STALE_SUFFIX; what: "corrupt") for
 * the image to rebuild it; true when moved. */
static bool move_map_aside(struct img_session *ss, const struct img_ref *r, const char *suffix, const char *what)
{
	char a[SFS_NAME_MAX + 16], b[SFS_NAME_MAX + 32];

	sfs_map_name(a, sizeof(a), r->name);
	snprintf(b, sizeof(b), "%s%s", r->name, suffix);
	if (renameat(ss->state_fd, a, ss->state_fd, b) < 0) {
		tool_error("%s/%s/%s: cannot move aside: %s", r->store, SFS_STATE_DIR, a, strerror(errno));
		return false;
	}
	printf("%s: repaired: moved the %s map to %s/%s/%s\n", r->path, what, r->store, SFS_STATE_DIR, b);
	return true;
}

static void print_cleared(void *ctx, int level, const char *msg)
{
	printf("%s: %s: %s\n", (const char *)ctx, level == SFS_LOG_ERR ? "not repaired" : "repaired", msg);
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
	printf("%s: repaired: rewrote %s" SFS_SIDECAR_SUFFIX " with the recorded geometry (%s, block size %s, %s, %llu "
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

	char err[1024];

	if (sfs_store_lookup(ss->store, r->name, &ss->im, err, sizeof(err)) < 0) {
		ss->im = NULL;
		tool_error("%s: cannot open the image to repair it: %s", r->path, err);
		return;
	}
	if (d->has[P_MAP_MISSING] || d->has[P_MAP_BAD] || d->has[P_MAP_TIE])
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
	/* what the store's start could not do about the image (it has just run again); while it
	 * stays, the image's files are that change's, and nothing else is done to them */
	if (d->has[P_PENDING]) {
		struct sfs_log log = { print_cleared, (void *)r->store };
		char what[SFS_FILE_NAME_LEN + 64];

		sfs_recover_clear(ss.store_fd, ss.state_fd, &log);
		if (sfs_recover_pending(ss.state_fd, r->name, what, sizeof(what)))
			return img_session_close(&ss);
	}
	if (d->has[P_MAP_BAD] && v->map_rc == -EUCLEAN && sc_ok && bk_ok &&
	    move_map_aside(&ss, r, SFS_MAP_CORRUPT_SUFFIX, "corrupt"))
		open_it = true;
	/* never adopted: its geometry is another image's, or its bits another file's */
	if (d->has[P_MAP_TIE] && sc_ok && bk_ok &&
	    move_map_aside(&ss, r, SFS_MAP_STALE_SUFFIX, "foreign"))
		open_it = true;
	if (d->has[P_MAP_DAMAGED] && bk_ok)
		salvage(&ss, r);
	if (sidecar && sc_ok && v->map && rewrite_sidecar(&ss, v))
		open_it = true;
	if (open_it)
		reopen(&ss, d);
	return img_session_close(&ss);
}
