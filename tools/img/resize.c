/* SPDX-License-Identifier: MIT */
/*
 * resize.c - sectorfs-img resize: grow an image (never shrink it).
 *
 * The image is opened through the locked store and grown with
 * sfs_store_resize(), which is sfs_image_grow() (backing file extended,
 * space reserved for thick images, new blocks zeroed for
 * eagerzeroedthick, map grown durably) followed by the sidecar rewrite:
 * the same path as a truncate through the mount.  SIZE may be absolute or
 * "+SIZE" relative to the current size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static const char resize_help[] =
	"Grow STORE/NAME to SIZE bytes, or by SIZE with a leading '+'.  SIZE must be a\n"
	"multiple of the logical sector size; images never shrink.  The new space is\n"
	"provisioned as the image is (thin: unallocated; zeroedthick: reserved;\n"
	"eagerzeroedthick: zeroed now), and the sidecar is rewritten with the new size.\n"
	"Refused while a sectorfs daemon serves the store.\n\n"
	"  -h, --help  this help\n";

/* SIZE, absolute or "+SIZE", parsed before the image is opened. */
struct resize_arg {
	uint64_t size;
	bool rel;
};

static int check_resize(const struct tool_cmd *self, struct tool_item *item)
{
	struct resize_arg *arg = item->data;
	const char *s = item->args[1];

	arg->rel = s[0] == '+';
	return tool_parse_size(self, "SIZE", s + arg->rel, false, &arg->size) < 0 ? 1 : 0;
}

/* Grow ss's image to size: 0, 1 when it is that size already, -1 (printed) when refused
 * or failed. */
static int grow(struct img_session *ss, struct sfs_geom g, uint64_t size)
{
	const char *path = ss->ref->path;
	char a[64], b[64], why[160];
	int rc;

	rc = sfs_geom_grow_check(&g, size, why, sizeof(why));
	if (sfs_geom_grow_verdict(&g, size) == SFS_GROW_SHRINKS)   /* the sizes as the tool writes them */
		tool_error("%s: cannot shrink from %s to %s: images only grow", path,
			   tool_fmt_size(g.size, TOOL_SIZE_EXACT, a, sizeof(a)),
			   tool_fmt_size(size, TOOL_SIZE_EXACT, b, sizeof(b)));
	else if (rc < 0)
		tool_error("%s: %s", path, why);
	else if (rc == 1)
		return 1;
	else if ((rc = sfs_store_resize(ss->store, ss->im, size)) < 0)
		tool_error("%s: cannot grow to %s: %s", path,
			   tool_fmt_size(size, TOOL_SIZE_EXACT, b, sizeof(b)), strerror(-rc));
	else
		return 0;
	return -1;
}

static int exec_resize(const struct tool_cmd *self, struct tool_item *item)
{
	const struct resize_arg *arg = item->data;
	struct img_target *t = item->target;
	struct sfs_geom g = sfs_image_geom(t->ss.im);
	uint64_t size = arg->size;
	char a[64], b[64];
	int rc;

	(void)self;
	if (arg->rel && size > UINT64_MAX - g.size)
		size = UINT64_MAX;                  /* refused as too large */
	else if (arg->rel)
		size += g.size;
	rc = grow(&t->ss, g, size);
	/* the result is told once the store is flushed */
	if (img_session_close(&t->ss) < 0 || rc < 0)
		return 1;
	tool_fmt_size(size, TOOL_SIZE_EXACT, b, sizeof(b));
	if (rc == 1)
		printf("%s: already %s\n", t->ref.path, b);
	else
		printf("resized %s: %s -> %s\n", t->ref.path,
		       tool_fmt_size(g.size, TOOL_SIZE_EXACT, a, sizeof(a)), b);
	return 0;
}

TOOL_CMD(img_cmd_resize, "resize", "STORE/NAME [+]SIZE",
	 "grow an image to SIZE (or by +SIZE) and rewrite its sidecar",
	 .help = resize_help, .args = { "STORE/NAME", "SIZE" }, .target = IMG_TARGET_SESSION,
	 .data_size = sizeof(struct resize_arg), .check = check_resize, .exec = exec_resize);
