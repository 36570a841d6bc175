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

#define FUSE_MAGIC 0x65735546
#define LOAD_IMAGES 8
#define MAX_REPEAT 50

struct daemon_run {
	char store[PATH_MAX], mnt[PATH_MAX + 8], pidfile[PATH_MAX + 8], log[PATH_MAX + 8];
	pid_t pid;
};

struct sample {
	long rss_kib, threads;
};

struct scale {
	char daemon[PATH_MAX];
	char dir[PATH_MAX - 64];
	unsigned long images, nofile, repeat;
	uint64_t size;
	double load_s, after_s, cmp_s;
	bool json, keep, have_fio;
	struct daemon_run big, one;
	/* results */
	double ready_first, ready_later, ls1, ls2;
	long rss_first, fds_first, rss_later, fds_later, rss_one, rss_idle, fds_idle;
	long threads_idle, peak_rss, peak_threads, rss_end, rss_after, listed;
	double load_read_iops, load_write_iops;
	double iops_big[MAX_REPEAT], iops_one[MAX_REPEAT];
	unsigned ncmp;
};

double scale_now_s(void);

void scale_sleep_s(double s);

/* A field of /proc/PID/status ("VmRSS", "Threads"): its number, -1 when unreadable. */
long scale_proc_status(pid_t pid, const char *key);

/* The names in directory path not starting with '.', or -1 when it cannot be read. */
long scale_count_names(const char *path);

long scale_proc_fds(pid_t pid);


bool scale_mounted(const char *mnt);

/* Start the daemon on d (under nofile when > 0); the seconds until the mount was ready, or
 * -1 (printed). */
double scale_start_daemon(struct scale *sc, struct daemon_run *d);

int scale_stop_daemon(struct daemon_run *d);

int scale_make_store(struct scale *sc, struct daemon_run *d, const char *tag, unsigned long n);

/* The wall time of `ls -l MNT` (output dropped), or -1. */
double scale_time_ls(const struct daemon_run *d);

void scale_report_text(const struct scale *sc);

int scale_report_json(const struct scale *sc);

#endif
