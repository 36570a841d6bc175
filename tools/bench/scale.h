/* SPDX-License-Identifier: MIT */
/*
 * scale.h - sectorfs-bench scale (scale.c): the run and its figures, the
 * daemons it starts (scale_daemon.c) and its reports (scale_report.c).
 */
#ifndef SFS_BENCH_SCALE_H
#define SFS_BENCH_SCALE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "toolutil.h"

#define FUSE_MAGIC 0x65735546
#define LOAD_IMAGES 8
#define MAX_REPEAT 50

struct daemon_run {
	char store[PATH_MAX], mnt[PATH_MAX + 8], pidfile[PATH_MAX + 8], log[PATH_MAX + 8];
	pid_t pid;
};

/* The figures of a run, filled by scale.c, printed by scale_report.c: the store as asked, and
 * what each step measured (RSS in KiB, times in seconds). */
struct scale_result {
	unsigned long images, nofile;   /* the store; the daemons' descriptor limit, 0: ours */
	uint64_t size;                  /* of each image */
	double load_s, after_s;         /* the load's length; when the RSS after it was taken */
	/* 1, 2: the first and a later mount, idle */
	long listed;                    /* the images MNT lists */
	double ready_first, ready_later;
	long rss_first, fds_first, rss_later, fds_later;
	long rss_idle, fds_idle, threads_idle;
	long rss_one;                   /* the daemon serving a store of one image */
	double ls1, ls2;                /* ls -l MNT, first and again */
	/* 2b: one read of each image, then quiet */
	long touched;                   /* the images read */
	double touch_s, touch_idle_s;   /* the pass's time; the quiet after it */
	long rss_touched, rss_touched_idle;
	/* 3: the load, when it ran (loaded) */
	bool loaded;
	unsigned load_images;           /* the images it ran on */
	double load_read_iops, load_write_iops;
	long peak_rss, peak_threads, rss_end, rss_after;
	/* 4: the per-I/O comparison, ncmp repeats of it */
	unsigned ncmp;
	double iops_big[MAX_REPEAT], iops_one[MAX_REPEAT];
};

/* The run: what it was asked, its daemons, and its result. */
struct scale {
	char daemon[PATH_MAX];
	char dir[PATH_MAX - 64];
	unsigned long repeat;
	double cmp_s;
	bool json, keep, have_fio;
	struct daemon_run big, one;
	struct tool_progress prog;
	struct scale_result res;
};

/* The monotonic clock in seconds. */
double scale_now_s(void);

/* Sleep s seconds, cut short by Ctrl-C (tool_interrupted). */
void scale_sleep_s(double s);

/* A field of /proc/PID/status ("VmRSS", "Threads"): its number, -1 when unreadable. */
long scale_proc_status(pid_t pid, const char *key);

/* The names in directory path not starting with '.', or -1 when it cannot be read. */
long scale_count_names(const char *path);

/* The descriptors process pid holds, or -1 when they cannot be counted. */
long scale_proc_fds(pid_t pid);

/* Is a FUSE file system mounted at mnt? */
bool scale_mounted(const char *mnt);

/* Start the daemon on d (under nofile when > 0); the seconds until the mount was ready, or
 * -1 (printed). */
double scale_start_daemon(struct scale *sc, struct daemon_run *d);

/* Unmount d and wait for its daemon, when one runs: 0, or -1 (printed, its log shown) when it
 * exited badly or had to be killed. */
int scale_stop_daemon(struct daemon_run *d);

/* Make the store, mount point, pidfile and log names of d in DIR/tag, and a store of n sidecars
 * (d00000.json ...) of sc's image size: 0, or -1 (printed, or interrupted). */
int scale_make_store(struct scale *sc, struct daemon_run *d, const char *tag, unsigned long n);

/* The wall time of `ls -l MNT` (output dropped), or -1. */
double scale_time_ls(const struct daemon_run *d);

/* Print the figures for people. */
void scale_report_text(const struct scale_result *r);

/* Print the figures as one JSON object: 0, or 1 when it cannot be made or written. */
int scale_report_json(const struct scale_result *r);

#endif
