/* SPDX-License-Identifier: MIT */
/*
 * main.c - sectorfs-bench: workloads that reproduce the questions behind
 * sectorfs (SPEC.md "Tools").
 *
 *   sweep    ATTO-style transfer-size sweep, 512 B .. 8 MiB, read and write
 *   zeroing  the zero-on-new-write experiment across provisioning modes
 *   redo     a redo-log writer with group commit on 512 or 4096-byte blocks
 *   scale    start-up, memory and descriptors of a store of many images
 *   crash    the crash explorer: a workload cut at sampled points, checked
 *   powercut the seed case: what a power cut does to flushed redo blocks
 *
 * One command per file, each described by a struct tool_cmd (usage,
 * help, option template, arguments, target, exec) listed in the table
 * below, as sectorfs-img and tmux do it.  tool_main() parses the command
 * line against the entry, opens its target (target.c) and runs exec,
 * which returns the exit status: 0 on success, 1 on errors, 130 when
 * interrupted (after printing what it measured).
 */
#include "common.h"

static const struct tool_cmd *const commands[] = {
	&bench_cmd_sweep, &bench_cmd_zeroing, &bench_cmd_redo, &bench_cmd_scale, &bench_cmd_crash,
	&bench_cmd_powercut, NULL,
};

TOOL_MAIN(
	.prog = BENCH_PROG,
	.intro = "usage: " BENCH_PROG " COMMAND [options] ...\n\n"
		"Workloads that show what sector size, alignment and provisioning cost: run them\n"
		"on a sectorfs image (or any file or block device that takes O_DIRECT I/O) and\n"
		"read the image's statistics in MNT/.stats/ beside the figures printed here.\n"
		"sweep and redo WRITE OVER THE DISK THEY ARE GIVEN; crash works on copies.\n",
	.outro = "Sizes are bytes or a number with K, M, G or T (binary: 1K = 1024).  MB/s are\n"
		"decimal (10^6 bytes per second).  Ctrl-C stops a run early, prints what was\n"
		"measured and exits 130.\n",
	.size_example = "32K",
	.cmds = commands,
	.target_size = sizeof(struct bench_target),
	.open_target = bench_target_open, .close_target = bench_target_close)
