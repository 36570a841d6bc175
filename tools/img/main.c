/* SPDX-License-Identifier: MIT */
/*
 * main.c - sectorfs-img: the vmkfstools / qemu-img of a sectorfs store.
 *
 * One command per file, each described by a struct tool_cmd (name, usage,
 * summary, exec) in the table below, as tmux does it.  main() only finds
 * the command and hands it its arguments (argv[0] is the command name);
 * each command parses its own options, prints its own --help and returns
 * the exit status: 0 on success, 1 on usage errors and failures (check
 * uses fsck's codes instead, see check.c), 130 when interrupted.
 */
#include "common.h"

static const struct tool_cmd *const commands[] = {
	&img_cmd_create, &img_cmd_info, &img_cmd_check,
	&img_cmd_resize, &img_cmd_inflate, &img_cmd_map,
};

static const struct tool sectorfs_img = {
	.prog = IMG_PROG,
	.intro = "usage: " IMG_PROG " COMMAND [options] STORE/NAME ...\n\n"
		"Create, inspect, check, grow and convert the disk images of a sectorfs store:\n"
		"raw files STORE/NAME with sidecars STORE/NAME.json and allocation maps in\n"
		"STORE/.sectorfs/.  Commands that change an image refuse while a sectorfs\n"
		"daemon serves the store.\n",
	.outro = "Sizes are bytes or a number with K, M, G or T (binary: 1K = 1024).\n"
		"Run '" IMG_PROG " COMMAND --help' for the options of a command; see sectorfs-img(1).\n",
	.cmds = commands,
	.ncmds = sizeof(commands) / sizeof(commands[0]),
};

int main(int argc, char **argv)
{
	return tool_main(&sectorfs_img, argc, argv);
}
