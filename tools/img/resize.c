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
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static int exec_resize(int argc, char **argv);

const struct tool_cmd img_cmd_resize = {
	"resize", "STORE/NAME [+]SIZE",
	"grow an image to SIZE (or by +SIZE) and rewrite its sidecar",
	exec_resize,
};

static const char help[] =
	"Grow STORE/NAME to SIZE bytes, or by SIZE with a leading '+'.  SIZE must be a\n"
	"multiple of the logical sector size; images never shrink.  The new space is\n"
	"provisioned as the image is (thin: unallocated; zeroedthick: reserved;\n"
	"eagerzeroedthick: zeroed now), and the sidecar is rewritten with the new size.\n"
	"Refused while a sectorfs daemon serves the store.\n\n"
	"  -h, --help  this help\n";

static int exec_resize(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct tool_cmd *cmd = &img_cmd_resize;
	struct img_session ss;
	struct sfs_geom g;
	struct img_ref ref;
	const char *arg;
	char a[64], b[64];
	uint64_t size;
	bool rel;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: " IMG_PROG " resize %s\n\n%s", cmd->usage, help);
			return 0;
		}
		return img_bad_option(cmd, 1, c, argv);
	}
	if (argc - optind != 2)
		return img_usage_error(cmd, 1, argc - optind < 2 ? "missing %s" : "too many arguments",
				       argc == optind ? "STORE/NAME and SIZE" : "SIZE");
	arg = argv[optind + 1];
	rel = arg[0] == '+';
	if (img_parse_size(cmd, "SIZE", arg + rel, &size) < 0 || img_ref_parse(argv[optind], &ref) < 0)
		return 1;
	if (img_session_open(&ss, &ref, "resize", IMG_S_GET) < 0)
		return 1;
	g = sfs_image_geom(ss.im);
	if (rel && size > SFS_SIZE_MAX - g.size)
		size = SFS_SIZE_MAX + 1;            /* refused below as too large */
	else if (rel)
		size += g.size;
	rc = -1;
	if (size < g.size)
		img_error("%s: cannot shrink from %s to %s: images only grow", ref.path,
			  img_fmt_size(g.size, a, sizeof(a)), img_fmt_size(size, b, sizeof(b)));
	else if (size > SFS_SIZE_MAX)
		img_error("%s: size %llu is larger than the maximum %llu (4 EiB)", ref.path,
			  (unsigned long long)size, (unsigned long long)SFS_SIZE_MAX);
	else if (size % g.lss)
		img_error("%s: size %llu is not a multiple of the logical sector size %u", ref.path,
			  (unsigned long long)size, g.lss);
	else if (size == g.size)
		rc = 1;
	else if ((rc = sfs_store_resize(ss.store, ss.im, size)) < 0)
		img_error("%s: cannot grow to %s: %s", ref.path, img_fmt_size(size, b, sizeof(b)),
			  strerror(-rc));
	if (img_session_close(&ss) < 0)
		rc = -1;
	if (rc < 0)
		return 1;
	if (rc == 1)
		printf("%s: already %s\n", ref.path, img_fmt_size(size, b, sizeof(b)));
	else
		printf("resized %s: %s -> %s\n", ref.path, img_fmt_size(g.size, a, sizeof(a)),
		       img_fmt_size(size, b, sizeof(b)));
	return 0;
}
