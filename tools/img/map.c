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
#include <stdio.h>

#include <jansson.h>

#include "common.h"

static const char map_help[] =
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

static int exec_map(const struct tool_cmd *self, struct tool_item *item)
{
	struct img_target *t = item->target;
	const struct sfs_geom *g = &t->mi.geom;
	struct sfs_map *m = t->view.map;
	bool json = item->opt[IMG_OPT_JSON].set;
	json_t *arr = json ? json_array() : NULL;
	uint64_t nb = sfs_geom_nblocks(g);

	(void)self;
	if (!json)
		printf("%-20s %-20s %s\n", "Offset", "Length", "Allocated");
	if (!t->created) {
		emit(json, arr, 0, g->size, false);
	} else {
		for (uint64_t b = 0; b < nb;) {
			bool set = sfs_map_test(m, b);
			uint64_t e = set ? sfs_map_next_clear(m, b) : sfs_map_next_set(m, b), s, x;

			sfs_geom_block_range(g, b, &s, &x);
			emit(json, arr, s, sfs_blocks_bytes(g, b, e), set);
			b = e;
		}
	}
	return json ? tool_print_json(arr, JSON_INDENT(2)) : 0;
}

TOOL_CMD(img_cmd_map, "map", "[--json] STORE/NAME",
	 "list allocated and unallocated ranges (like qemu-img map)",
	 .help = map_help, .opts = img_json_opts, .args = { "STORE/NAME" },
	 .target = IMG_TARGET_VIEW, .exec = exec_map);
