/* SPDX-License-Identifier: MIT */
/*
 * map.c - sectorfs-img map: the allocated and unallocated ranges of an
 * image, like qemu-img map.
 *
 * The disk is cut into maximal runs of blocks with the same map bit; each
 * run is one line (or one JSON object) with its byte offset, its length
 * (the last block may be partial: lengths add up to the disk size) and
 * whether it is allocated.  An unallocated range reads as zeros without
 * touching the backing file.  The map is read on disk without the lock
 * (view.c), so this works while the store is served, showing the state of
 * the daemon's last flush.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "common.h"

static int exec_map(int argc, char **argv);

const struct tool_cmd img_cmd_map = {
	"map", "[--json] STORE/NAME",
	"list allocated and unallocated ranges (like qemu-img map)",
	exec_map,
};

static const char help[] =
	"List the ranges of STORE/NAME, allocated or not, in disk order: offset and length\n"
	"in bytes, and whether the blocks hold data in the backing file (false: the range\n"
	"reads as zeros).  Works while the store is served (as of the daemon's last\n"
	"flush); changes nothing.\n\n"
	"  --json      a JSON array of {\"offset\", \"length\", \"allocated\"} objects\n"
	"  -h, --help  this help\n";

/* One run: a text line, or an object appended to arr. */
static void emit(bool json, json_t *arr, uint64_t off, uint64_t len, bool alloc)
{
	if (!len)
		return;
	if (json) {
		json_t *o = json_object();

		json_object_set_new(o, "offset", json_integer((json_int_t)off));
		json_object_set_new(o, "length", json_integer((json_int_t)len));
		json_object_set_new(o, "allocated", json_boolean(alloc));
		json_array_append_new(arr, o);
	} else {
		printf("%-20llu %-20llu %s\n", (unsigned long long)off, (unsigned long long)len,
		       alloc ? "true" : "false");
	}
}

static int exec_map(int argc, char **argv)
{
	struct sfs_map_info mi;
	struct img_view v;
	struct img_ref ref;
	bool json, created;
	json_t *arr = NULL;
	uint64_t nb;
	int rc;

	if (!img_parse_one_image(&img_cmd_map, help, "json", 1, argc, argv, &json, &ref, &rc))
		return rc;
	if (img_view_open(&v, &ref) < 0)
		return 1;
	if (img_view_image(&v, &mi, &created) < 0) {
		img_view_close(&v);
		return 1;
	}
	if (json)
		arr = json_array();
	else
		printf("%-20s %-20s %s\n", "Offset", "Length", "Allocated");
	nb = sfs_geom_nblocks(&mi.geom);
	if (!created) {
		emit(json, arr, 0, mi.geom.size, false);
	} else {
		for (uint64_t b = 0; b < nb;) {
			bool set = sfs_map_test(v.map, b);
			uint64_t e = set ? sfs_map_next_clear(v.map, b) : sfs_map_next_set(v.map, b), s, x;

			sfs_geom_block_range(&mi.geom, b, &s, &x);
			emit(json, arr, s, sfs_blocks_bytes(&mi.geom, b, e), set);
			b = e;
		}
	}
	if (json) {
		char *text = json_dumps(arr, JSON_INDENT(2));

		json_decref(arr);
		if (!text) {
			img_error("out of memory");
			img_view_close(&v);
			return 1;
		}
		printf("%s\n", text);
		free(text);
	}
	img_view_close(&v);
	return 0;
}
