/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the sectorfs-bench commands share.
 *
 * Each command is one file (sweep.c, zeroing.c, redo.c; each keeps its
 * output in CMD_report.c, fed a result struct) and one entry of the table
 * in main.c, as in sectorfs-img (toolutil.h): the entry carries the option
 * template, the arguments and the target, which target.c opens:
 *   - BENCH_TARGET_DISK: the disk under test, IMAGE, opened with O_DIRECT
 *     (read-only when the command's --read-only is given) and its logical
 *     sector found once (bench_disk_open): the
 *     user.sectorfs.logical_sector_size xattr, BLKSSZGET on a block
 *     device, else 512;
 *   - BENCH_TARGET_TESTBED: a store served at a mount (testbed.h), from
 *     the command's --store, --mount and --daemon.
 * The options more than one command takes (--json, --svg, the testbed's)
 * are defined once here and named in each entry's .shared; so are the
 * checks of --seed and --policy.
 * The rest of the shape:
 *   - messages are "sectorfs-bench: ..." on stderr (tool_error); usage
 *     errors add the usage line and a pointer to --help; exit 1 on any
 *     error;
 *   - workloads run in worker threads started together (run.h); the main
 *     thread only watches the clock, SIGINT/SIGTERM and the progress
 *     line, and tells the workers to stop.  Workers never see signals, so
 *     no I/O of theirs is ever interrupted (a FUSE request would be);
 *   - latencies go into a log-linear histogram (hist.h);
 *   - a progress line is drawn on stderr, only when stderr is a terminal
 *     and only once the command has run for BENCH_PROGRESS_AFTER_NS
 *     (bench_begin).  stderr, not stdout as in sectorfs-img: a
 *     benchmark's results are often sent to a file while the person
 *     waiting watches the terminal.
 * Ctrl-C ends a run early: the command prints what it measured, marked
 * as interrupted, and exits 130.
 */
#ifndef SFS_BENCH_COMMON_H
#define SFS_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "toolutil.h"
#include "testbed.h"

#define BENCH_PROG "sectorfs-bench"
#define BENCH_EXIT_INTERRUPTED 130
#define BENCH_PROGRESS_AFTER_NS 2000000000ull   /* runs shorter than 2 s draw no progress */

extern const struct tool_cmd bench_cmd_sweep, bench_cmd_zeroing, bench_cmd_redo, bench_cmd_scale,
	bench_cmd_crash, bench_cmd_powercut;

/* ---- options several commands take (toolutil.h: a command's .shared) ---- */

/* --store DIR and --mount MNT: the store of a BENCH_TARGET_TESTBED command; --daemon PATH: the
 * sectorfs it runs (testbed_find_daemon). */
extern const struct tool_opt bench_opts_testbed[], bench_opts_daemon[];

/* --json: the figures as one JSON object; --svg FILE: a chart of them too. */
extern const struct tool_opt bench_opts_json[], bench_opts_svg[];

/* A check of the testbed's options: 0, or the usage status (printed) when --store and --mount
 * are both given. */
int bench_check_testbed(const struct tool_cmd *self, const struct tool_item *item);

/* --seed's argument arg into *seed: 0, or the usage status (printed) when it is not a number
 * from 0 to 2^64-1 (decimal, 0x hex or 0 octal). */
int bench_parse_seed(const struct tool_cmd *self, const char *arg, uint64_t *seed);

/* 0 when p is a power-cut policy (lose-all, keep-all, random, random:P); else the usage status
 * (printed). */
int bench_check_policy(const struct tool_cmd *self, const char *p);

/* ---- the figures ---- */

struct svg_chart;

/* Draw the chart of res, a command's result, into c (svg_chart_init first). */
typedef void bench_chart_fn(const void *res, struct svg_chart *c);

/* How a command gives its figures (CMD_report.c), each handed the command's result: for people
 * on stdout, as one JSON object on stdout (0, or 1 when it cannot be made or written), as an
 * SVG chart. */
struct bench_figures {
	void (*text)(const void *res);
	int (*json)(const void *res);
	bench_chart_fn *chart;
	bool (*any)(const void *res);   /* bench_end: whether a cut short run has some (NULL: yes) */
	const char *cut;                /* bench_end: after "interrupted", what they cover */
};

/* The chart draw makes of res written to path: 0, or 1 (printed). */
int bench_chart(bench_chart_fn *draw, const void *res, const char *path);

/* The figures of res as item's --json and --svg ask: JSON or text, then the chart when --svg
 * names a file.  The exit status, 0 or 1. */
int bench_figures(const struct bench_figures *f, const void *res, const struct tool_item *item);

/* ---- for people ---- */

/* A latency given in microseconds for people: "87.3 us", "2.41 ms", "1.20 s". */
const char *bench_fmt_us(double us, char *buf, size_t len);

/* The symbolic name of an errno value ("EINVAL"), "E<number>" for rare ones. */
const char *bench_errno_name(int e, char *buf, size_t len);

/* After a run that Ctrl-C cut short: "sectorfs-bench: interrupted" followed by what fmt
 * makes (": the figures ..."), on stderr; the exit status, rc when the command failed
 * already, else 130. */
int bench_interrupted(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Catch SIGINT, SIGTERM and SIGHUP (tool_catch_signals), then start the command's progress
 * line on stderr (after BENCH_PROGRESS_AFTER_NS). */
void bench_begin(struct tool_progress *p);

/* End an experiment whose loop returned r (0: done, 1: cut short by Ctrl-C, -1: failed): the
 * progress line cleared, *interrupted (in res) set to r == 1, the figures of res given as item
 * asks when f->any says there are some, stdout flushed, and a cut short run said to be
 * interrupted, with f->cut.  The exit status: 0, 1 when the loop or the figures failed, else
 * 130 when interrupted. */
int bench_end(struct tool_progress *p, int r, bool *interrupted, const struct bench_figures *f,
	      const void *res, const struct tool_item *item);

/* ---- the disk under test ---- */

struct bench_disk {
	const char *path;
	int fd;
	bool blockdev;
	uint64_t size;            /* bytes: st_size, or BLKGETSIZE64 */
	unsigned logical;         /* logical sector */
	unsigned physical;        /* physical sector (= logical when unknown) */
	const char *sector_from;  /* "xattr", "BLKSSZGET" or "default" */
};

/* Open path with flags | O_DIRECT, find its size and sectors; prints the error.  0 or -1. */
int bench_disk_open(struct bench_disk *d, const char *path, int flags);

void bench_disk_close(struct bench_disk *d);

/* posix_memalign'd buffer of len bytes filled with a non-zero pattern; NULL (printed). */
void *bench_buf_alloc(size_t len, size_t align);

/* ---- the targets (target.c) ---- */

enum bench_target_kind {
	BENCH_TARGET_NONE,
	BENCH_TARGET_DISK,
	BENCH_TARGET_TESTBED,
};

/* What tool_main opened for a bench command (item->target). */
struct bench_target {
	struct bench_disk disk;        /* BENCH_TARGET_DISK */
	struct testbed tb;             /* BENCH_TARGET_TESTBED */
	bool tb_open;
};

/* The tool's open_target and close_target (toolutil.h). */
int bench_target_open(struct tool_item *item);
int bench_target_close(struct tool_item *item, int rc);

/* ---- daemons started for a run (testbed.c, scale_daemon.c) ---- */

/* Run argv and wait for it, its input from in and its output (stdout and stderr) to out
 * (created or truncated), each when not NULL: its exit status, or -1. */
int bench_run_cmd(char *const argv[], const char *in, const char *out);

/* Fork a child that takes a process group of its own (Ctrl-C at the terminal is ours), at
 * most nofile descriptors when > 0 (exit 126 if refused), output to log (appended, or
 * truncated first), input from /dev/null, then execs argv (exit 127 when it cannot): the
 * child's pid, or -1 (printed) when it cannot be forked. */
pid_t bench_start_daemon(char *const argv[], const char *log, bool truncate, unsigned long nofile);

/* Lines of log on stderr as "  daemon: LINE": its last tail lines (0: all of it). */
void bench_show_log(const char *log, unsigned tail);

/* Wait up to secs for daemon pid to exit after its unmount: 0 when it exited 0; -1 (printed,
 * its log shown as bench_show_log(log, tail)) when it exited badly or had to be killed. */
int bench_reap_daemon(pid_t pid, double secs, const char *log, unsigned tail);

/* ---- output ---- */

/* A JSON number, or null when not finite. */
json_t *bench_jreal(double v);

/* Print o indented on stdout and drop it; 0, or 1 when it cannot be made or written. */
int bench_json_print(json_t *o);

#endif
