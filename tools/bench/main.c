/*
 * main.c - sectorfs-bench: workloads that reproduce the questions behind
 * sectorfs (SPEC.md "Tools").
 *
 *   sweep    ATTO-style transfer-size sweep, 512 B .. 8 MiB, read and write
 *   zeroing  the zero-on-new-write experiment across provisioning modes
 *   redo     a redo-log writer with group commit on 512 or 4096-byte blocks
 *
 * One command per file, each described by a struct bench_cmd in the table
 * below, as sectorfs-img and tmux do it.  main() only finds the command
 * and hands it its arguments (argv[0] is the command name); each command
 * parses its own options, prints its own --help and returns the exit
 * status: 0 on success, 1 on errors, 130 when interrupted (after printing
 * what it measured).
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

static const struct bench_cmd *const commands[] = {
	&bench_cmd_sweep, &bench_cmd_zeroing, &bench_cmd_redo,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: " BENCH_PROG " COMMAND [options] ...\n\n"
		"Workloads that show what sector size, alignment and provisioning cost: run them\n"
		"on a sectorfs image (or any file or block device that takes O_DIRECT I/O) and\n"
		"read the image's statistics in MNT/.stats/ beside the figures printed here.\n"
		"sweep and redo WRITE OVER THE DISK THEY ARE GIVEN.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\noptions:\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n\n"
		"Sizes are bytes or a number with K, M, G or T (binary: 1K = 1024).  MB/s are\n"
		"decimal (10^6 bytes per second).  Ctrl-C stops a run early, prints what was\n"
		"measured and exits 130.\n"
		"Run '" BENCH_PROG " COMMAND --help' for the options of a command; see sectorfs-bench(1).\n");
}

static const struct bench_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct bench_cmd *cmd;
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    (strcmp(argv[1], "help") == 0 && argc < 3)) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf(BENCH_PROG " %s\n", PACKAGE_VERSION);
		return 0;
	}
	name = strcmp(argv[1], "help") == 0 ? argv[2] : argv[1];
	cmd = find_command(name);
	if (!cmd) {
		bench_error("unknown command '%s'\nTry '" BENCH_PROG " --help' for the list of commands.",
			    name);
		return 1;
	}
	if (strcmp(argv[1], "help") == 0) {
		char *args[] = { argv[2], (char *)"--help", NULL };

		return cmd->exec(2, args);
	}
	return cmd->exec(argc - 1, argv + 1);
}
