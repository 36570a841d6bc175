/* SPDX-License-Identifier: MIT */
/*
 * inflate.c - sectorfs-img inflate: thin or zeroedthick to
 * eagerzeroedthick, as vmkfstools --inflatedisk / --eagerzero do.
 *
 *   1. every unallocated block is zeroed and marked (sfs_image_fill, with
 *      a progress bar): data already written is not touched;
 *   2. the map header is rewritten to say eagerzeroedthick + ZEROED
 *      (sfs_image_set_provisioning: new map, then rename);
 *   3. the sidecar is rewritten with the new provisioning.
 *
 * A crash or Ctrl-C during 1 leaves a valid image of the old mode with
 * more blocks allocated; running inflate again finishes the job.  Steps 2
 * and 3 are bracketed by an intent record, .sectorfs/NAME.inflate
 * (recover.h): after a crash between them the next start of the store
 * rewrites the sidecar to say what the map says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "recover.h"
#include "units.h"

static const char inflate_help[] =
	"Convert STORE/NAME to eagerzeroedthick: zero every block not yet written (with a\n"
	"progress bar when stdout is a terminal), leave the data already written as it\n"
	"is, record the new mode in the image's map and rewrite its sidecar.  Ctrl-C\n"
	"stops it with the image valid in its old mode (exit 130); run it again to finish.\n"
	"Refused while a sectorfs daemon serves the store.\n\n"
	"  -h, --help  this help\n";

static int inflate(struct img_session *ss)
{
	struct sfs_map *m = sfs_image_map(ss->im);
	const struct sfs_map_info *mi = sfs_map_info(m);
	struct sfs_sidecar sc = sfs_image_sidecar(ss->im);
	enum sfs_prov was = mi->prov;
	struct sfs_geom g = sfs_image_geom(ss->im);
	uint64_t before = sfs_map_count(m), nb = sfs_map_nblocks(m);
	uint64_t before_bytes = sfs_allocated_bytes(m, &g);
	struct tool_progress p;
	char err[1024], human[32];
	int rc;

	if (was == SFS_PROV_EAGERZEROEDTHICK && (mi->flags & SFS_MAP_F_ZEROED)) {
		struct sfs_sidecar file;
		char fname[SFS_NAME_MAX + 8];

		/* The sidecar may still say the old mode (a crash after the map was rewritten). */
		sfs_sidecar_name(fname, sizeof(fname), ss->ref->name);
		if (sfs_sidecar_load(ss->store_fd, fname, &file, NULL, 0) == 0 &&
		    file.prov != SFS_PROV_EAGERZEROEDTHICK && img_save_sidecar(ss, &sc) < 0)
			return 1;
		printf("%s: already eagerzeroedthick\n", ss->ref->path);
		return 0;
	}
	tool_catch_signals();
	tool_progress_bar_start(&p, "zeroing");
	rc = sfs_image_fill(ss->im, tool_progress_bar_cb, &p);
	tool_progress_bar_end(&p);
	if (rc == -ECANCELED) {
		tool_error("inflate interrupted: %s is still %s, %llu of %llu blocks allocated; "
			   "run inflate again to finish", ss->ref->path, sfs_prov_name(was),
			   (unsigned long long)sfs_map_count(m), (unsigned long long)nb);
		return 130;
	}
	if (rc < 0) {
		tool_error("%s: zeroing failed: %s", ss->ref->path, strerror(-rc));
		return 1;
	}
	if (img_session_intent(ss, SFS_INFLATE_SUFFIX, "inflate\n") < 0)
		return 1;
	rc = sfs_image_set_provisioning(ss->im, ss->state_fd, SFS_PROV_EAGERZEROEDTHICK,
					mi->flags | SFS_MAP_F_ZEROED, err, sizeof(err));
	if (rc < 0) {
		tool_error("%s", err);
		sfs_intent_drop(ss->state_fd, ss->ref->name, SFS_INFLATE_SUFFIX);
		return 1;
	}
	sc.prov = SFS_PROV_EAGERZEROEDTHICK;
	if (img_save_sidecar(ss, &sc) < 0)
		return 1;      /* the record stays: the next start rewrites the sidecar */
	sfs_intent_drop(ss->state_fd, ss->ref->name, SFS_INFLATE_SUFFIX);
	sfs_format_human(sfs_blocks_bytes(&g, 0, nb) - before_bytes, human, sizeof(human));
	printf("inflated %s: %s -> eagerzeroedthick, %llu of %llu blocks zeroed now (%s)\n",
	       ss->ref->path, sfs_prov_name(was), (unsigned long long)(nb - before),
	       (unsigned long long)nb, human);
	return 0;
}

static int exec_inflate(const struct tool_cmd *self, struct tool_item *item)
{
	struct img_target *t = item->target;

	(void)self;
	return inflate(&t->ss);
}

TOOL_CMD(img_cmd_inflate, "inflate", "STORE/NAME",
	 "convert a thin or zeroedthick image to eagerzeroedthick",
	 .help = inflate_help, .args = { "STORE/NAME" }, .target = IMG_TARGET_SESSION,
	 .exec = exec_inflate);
