/* SPDX-License-Identifier: MIT */
/*
 * inflate.c - sectorfs-img inflate: thin or zeroedthick to
 * eagerzeroedthick, as vmkfstools --inflatedisk / --eagerzero do.
 *
 * The store does it (sfs_store_inflate, core/store/make.c): every
 * unallocated block zeroed and marked, with a progress bar (data already
 * written is not touched), then the map header rewritten in place to say
 * eagerzeroedthick + ZEROED, then the sidecar, the last two under an
 * intent record.  A crash or Ctrl-C during the zeroing leaves a valid
 * image of the old mode with more blocks allocated; running inflate again
 * finishes the job.  After a crash past the map the next start of the
 * store rewrites the sidecar to say what the map says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "util/units.h"

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
	enum sfs_prov was = sfs_map_info(m)->prov;
	bool already = was == SFS_PROV_EAGERZEROEDTHICK && (sfs_map_info(m)->flags & SFS_MAP_F_ZEROED);
	struct sfs_geom g = sfs_image_geom(ss->im);
	uint64_t before = sfs_map_count(m), nb = sfs_map_nblocks(m);
	uint64_t before_bytes = sfs_allocated_bytes(m, &g);
	struct img_bars b = { .on = false };
	struct sfs_store_progress pr = img_bars_progress(&b);
	char err[1024], human[32];
	int rc;

	tool_catch_signals();
	rc = sfs_store_inflate(ss->store, ss->im, &pr, err, sizeof(err));
	img_bars_end(&b);
	if (rc == 0 && already) {
		printf("%s: already eagerzeroedthick\n", ss->ref->path);
		return 0;
	}
	if (rc == -ECANCELED) {
		tool_error("inflate interrupted: %s is still %s, %llu of %llu blocks allocated; "
			   "run inflate again to finish", ss->ref->path, sfs_prov_name(was),
			   (unsigned long long)sfs_map_count(m), (unsigned long long)nb);
		return 130;
	}
	if (rc < 0) {
		tool_error("%s: %s", ss->ref->path, err);
		return 1;
	}
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
