/* SPDX-License-Identifier: MIT */
/*
 * main.c - sectorfs-img: the vmkfstools / qemu-img of a sectorfs store.
 *
 * One command per file, each described by a struct tool_cmd (usage,
 * help, option template, arguments, target, exec) listed in the table
 * below, as tmux does it.  tool_main() parses the command line against
 * the entry, opens its target (target.c) and runs exec, which returns the
 * exit status: 0 on success, 1 on usage errors and failures (check uses
 * fsck's codes instead, see check.h), 130 when interrupted.
 */
#include "common.h"

static const struct tool_cmd *const commands[] = {
	&img_cmd_create, &img_cmd_info, &img_cmd_check,
	&img_cmd_resize, &img_cmd_inflate, &img_cmd_map, NULL,
};

TOOL_MAIN(
	.prog = IMG_PROG,
	.intro = "usage: " IMG_PROG " COMMAND [options] STORE/NAME ...\n\n"
		"Create, inspect, check, grow and convert the disk images of a sectorfs store:\n"
		"raw files STORE/NAME with sidecars STORE/NAME.json and allocation maps in\n"
		"STORE/.sectorfs/.  Commands that change an image refuse while a sectorfs\n"
		"daemon serves the store.\n",
	.outro = "Sizes are bytes or a number with K, M, G or T (binary: 1K = 1024).\n",
	.size_example = "8G",
	.cmds = commands,
	.target_size = sizeof(struct img_target),
	.open_target = img_target_open, .close_target = img_target_close)
