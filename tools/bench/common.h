/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the sectorfs-bench commands share.
 *
 * Each command is one file (sweep.c, zeroing.c, redo.c; the longer ones
 * keep their output in CMD_report.c) and one entry of the table in main.c
 * (name, usage line, summary, exec), as in sectorfs-img.  The helpers
 * here (common.c; bench_run and bench_hist in run.c) give every command
 * the same shape:
 *   - messages are "sectorfs-bench: ..." on stderr; usage errors add the
 *     usage line and a pointer to --help; exit 1 on any error;
 *   - the disk under test is opened with O_DIRECT and its logical sector
 *     found once (bench_disk_open): the user.sectorfs.logical_sector_size
 *     xattr, BLKSSZGET on a block device, else 512;
 *   - workloads run in worker threads started together (bench_run); the
 *     main thread only watches the clock, SIGINT/SIGTERM and the progress
 *     line, and tells the workers to stop.  Workers never see signals, so
 *     no I/O of theirs is ever interrupted (a FUSE request would be);
 *   - latencies go into a log-linear histogram (bench_hist): fixed size,
 *     exact count/mean/max, percentiles within 1.6 %;
 *   - a progress line is drawn on stderr, only when stderr is a terminal
 *     and only once the command has run for BENCH_PROGRESS_AFTER_NS.
 *     stderr, not stdout as in sectorfs-img: a benchmark's results are
 *     often sent to a file while the person waiting watches the terminal.
 * Ctrl-C ends a run early: the command prints what it measured, marked
 * as interrupted, and exits 130.
 */
#ifndef SFS_BENCH_COMMON_H
#define SFS_BENCH_COMMON_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "toolutil.h"

#define BENCH_PROG "sectorfs-bench"
#define BENCH_EXIT_INTERRUPTED 130
#define BENCH_PROGRESS_AFTER_NS 2000000000ull   /* runs shorter than 2 s draw no progress */

extern const struct tool_cmd bench_cmd_sweep, bench_cmd_zeroing, bench_cmd_redo, bench_cmd_scale;

/* ---- messages and arguments ---- */

/* "sectorfs-bench: MSG" on stderr. */
void bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "sectorfs-bench CMD: MSG", the usage line and a --help hint on stderr; returns 1. */
int bench_usage_error(const struct tool_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report a getopt_long failure (unknown option, missing argument); returns 1. */
int bench_bad_option(const struct tool_cmd *cmd, int opt, char **argv);

/* Parse SIZE ("32K", "8M", "4096") given to option opt; prints the error.  0 or -1. */
int bench_parse_size(const struct tool_cmd *cmd, const char *opt, const char *s, uint64_t *out);

/* Parse a positive, finite number of seconds ("0.3", "10"); prints the error.  0 or -1. */
int bench_parse_seconds(const struct tool_cmd *cmd, const char *opt, const char *s, double *out);

/* Parse an integer in [min, max]; prints the error.  0 or -1. */
int bench_parse_uint(const struct tool_cmd *cmd, const char *opt, const char *s,
		     unsigned long min, unsigned long max, unsigned long *out);

/* A transfer size for people: "512 B", "4 KiB", "8 MiB"; other sizes as "1.5 KiB". */
const char *bench_fmt_size(uint64_t bytes, char *buf, size_t len);

/* A latency given in microseconds for people: "87.3 us", "2.41 ms", "1.20 s". */
const char *bench_fmt_us(double us, char *buf, size_t len);

/* The symbolic name of an errno value ("EINVAL"), "E<number>" for rare ones. */
const char *bench_errno_name(int e, char *buf, size_t len);

/* ---- time, signals, progress ---- */


struct bench_progress {
	bool tty;               /* stderr is a terminal */
	bool drawn;             /* a line is on screen */
	uint64_t t0, last;      /* ns: the command's start, the last redraw */
};

/* Start the clock of the command's progress line. */
void bench_progress_init(struct bench_progress *p);

/* Redraw the line (at most 10 times a second, only on a terminal after 2 s). */
void bench_progress_draw(struct bench_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Erase the line, if one was drawn, before results are printed. */
void bench_progress_clear(struct bench_progress *p);

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

/* ---- latency histogram (nanoseconds) ---- */

#define BENCH_HIST_SUB 32                     /* buckets per power of two */
#define BENCH_HIST_BUCKETS (60 * BENCH_HIST_SUB)

struct bench_hist {
	uint64_t count, min, max;
	double sum;
	uint64_t b[BENCH_HIST_BUCKETS];
};

void bench_hist_init(struct bench_hist *h);
void bench_hist_add(struct bench_hist *h, uint64_t ns);
void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src);

/* Mean and the p-th percentile (0 < p <= 100) in microseconds; 0 when empty. */
double bench_hist_mean_us(const struct bench_hist *h);
double bench_hist_pct_us(const struct bench_hist *h, double p);

/* {"count", "mean_us", "p50_us", "p99_us", "max_us"} */
json_t *bench_hist_json(const struct bench_hist *h);

/* ---- worker threads ---- */

struct bench_run;
typedef void (*bench_worker_fn)(struct bench_run *r, unsigned idx, void *arg);

struct bench_run {
	/* set by the caller */
	unsigned nthreads;
	bench_worker_fn worker;        /* called once per thread with its index */
	void *arg;
	double seconds;                /* stop after this long; 0: when the workers return */
	void (*tick)(struct bench_run *r, void *arg);  /* ~10 times a second in the main thread */
	/* set by bench_run() */
	atomic_bool stop;              /* workers poll it between I/Os */
	uint64_t t0, t1;               /* ns: start, last worker's return */
	bool interrupted;              /* a signal ended the run */
	/* private */
	atomic_uint running;
	_Atomic uint64_t t_end;
	bool go;                       /* the gate is open */
	pthread_mutex_t lock;
	pthread_cond_t gate, done;
};

/* Run r->nthreads workers, held at a gate and released together, until they return, the
 * time is up or a signal comes (r->stop is set; the workers finish their I/O and return).
 * Returns 0, or -1 (printed) when a thread cannot be created: the threads started then
 * return at once (stop is set before the gate opens). */
int bench_run(struct bench_run *r);

/* Seconds between start and the last worker's return. */
double bench_run_seconds(const struct bench_run *r);

/* ---- output ---- */

/* A JSON number, or null when not finite. */
json_t *bench_jreal(double v);

/* Print o indented on stdout and drop it; 0 or 1 (printed). */
int bench_json_print(json_t *o);

#endif
