/*
 * main.c - sectorfs-img: the vmkfstools / qemu-img of a sectorfs store.
 *
 * One command per file, each described by a struct img_cmd (name, usage,
 * summary, exec) in the table below, as tmux does it.  main() only finds
 * the command and hands it its arguments (argv[0] is the command name);
 * each command parses its own options, prints its own --help and returns
 * the exit status: 0 on success, 1 on usage errors and failures (check
 * uses fsck's codes instead, see check.c), 130 when interrupted.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "common.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const struct img_cmd *const commands[] = {
	&img_cmd_create, &img_cmd_info, &img_cmd_check,
	&img_cmd_resize, &img_cmd_inflate, &img_cmd_map,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: " IMG_PROG " COMMAND [options] STORE/NAME ...\n\n"
		"Create, inspect, check, grow and convert the disk images of a sectorfs store:\n"
		"raw files STORE/NAME with sidecars STORE/NAME.json and allocation maps in\n"
		"STORE/.sectorfs/.  Commands that change an image refuse while a sectorfs\n"
		"daemon serves the store.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\noptions:\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n\n"
		"Sizes are bytes or a number with K, M, G or T (binary: 1K = 1024).\n"
		"Run '" IMG_PROG " COMMAND --help' for the options of a command; see sectorfs-img(1).\n");
}

static const struct img_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct img_cmd *cmd;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf(IMG_PROG " %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 && argc < 3) {
		usage(stdout);
		return 0;
	}
	cmd = find_command(strcmp(argv[1], "help") == 0 ? argv[2] : argv[1]);
	if (!cmd) {
		img_error("unknown command '%s'\nTry '" IMG_PROG " --help' for the list of commands.",
			  strcmp(argv[1], "help") == 0 ? argv[2] : argv[1]);
		return 1;
	}
	if (strcmp(argv[1], "help") == 0) {
		char *args[] = { argv[2], (char *)"--help", NULL };

		return cmd->exec(2, args);
	}
	return cmd->exec(argc - 1, argv + 1);
}
