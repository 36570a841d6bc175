/* SPDX-License-Identifier: MIT */
/*
 * scale.c - sectorfs-bench scale: what a store of many images costs.
 *
 * A store of --images thin 4kn images of --size bytes is made (sidecars
 * only) in a temporary directory under --dir, and served by daemons we
 * start ourselves, each under --nofile descriptors when given (as
 * `ulimit -n` would set it, soft and hard):
 *
 *   1. first mount: the time until the mount is ready, which includes
 *      making every backing file and map; RSS and descriptors then;
 *   2. later mount (the files there, the page cache warm): ready time,
 *      RSS and descriptors idle, and RSS per image against a daemon
 *      serving a store of one image; `ls -l MNT` timed twice (the first
 *      looks every name up, the second finds the kernel's attributes
 *      expired again after a second) and the RSS after it: the idle
 *      figure the rest is compared with;
 *   2b. touch: one 4 KiB O_DIRECT read of each image (of a block never
 *      written: the disk is not touched, the daemon makes the image's
 *      statistics), then --touch-idle-seconds of quiet: the RSS right
 *      after the pass and after the quiet, and what each touched image
 *      costs against the idle figure (tests/mount/touched-memory.sh
 *      holds it under a bound);
 *   3. load: --load-seconds of fio over 8 of the images (one job each,
 *      random reads and writes half and half, 4 KiB, 64 KiB and 1 MiB,
 *      QD 4, O_DIRECT), the daemon's RSS and worker threads sampled every
 *      100 ms: the peak, the bound sectorfs-bench(1) states (128 MiB + 2 MiB per
 *      worker thread), the RSS as the load ends and --after-seconds later;
 *   4. per-I/O cost, measured before the load (which writes its images):
 *      4 KiB random reads at QD 1 (of blocks never written, so that they
 *      cost the daemon and FUSE, not the disk) on one image of this store
 *      and on the image of a store of one, served at the same time by two
 *      daemons, --repeat times each, interleaved: the median IOPS of each
 *      and the median of the per-repeat ratio.
 *
 * Without fio, steps 3 and 4 are left out (said on stderr).  Everything
 * made is removed at the end (--keep leaves the store); daemons are
 * stopped with fusermount3 -u and waited for by pid.  Ctrl-C stops the
 * run, undoes it and exits 130.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "scale.h"
#include "testbed.h"
#include "util/units.h"

static const char help[] =
	"Make a store of N thin 4kn images (sidecars; the first mount makes the files),\n"
	"serve it, and show: the images it lists; the time until the mount is ready,\n"
	"first and later; the daemon's RSS idle and per image, its descriptors, the time\n"
	"of ls -l MNT; the RSS after one 4 KiB read of each image, and after a quiet\n"
	"time; the peak RSS under a mixed fio load over 8 of the images and the RSS\n"
	"after it; and 4 KiB random read IOPS on one image of the store against a\n"
	"store of one image.\n"
	"Everything is removed at the end.\n\n"
	"  --images N         images in the store (default 1000)\n"
	"  --size SIZE        size of each image (default 1G)\n"
	"  --nofile N         run the daemons with a descriptor limit of N, soft and hard\n"
	"                     (as ulimit -n N; default: ours)\n"
	"  --dir DIR          make the store in a new directory in DIR (default $TMPDIR,\n"
	"                     else /var/tmp: a disk, not tmpfs)\n"
	"  --load-seconds S   length of the fio load (default 60; 0 leaves it out)\n"
	"  --after-seconds S  when to take the RSS after the load (default 10)\n"
	"  --touch-idle-seconds S  quiet after the read of each image, before its RSS\n"
	"                     (default 10)\n"
	"  --repeat N         repeats of the per-I/O comparison (default 5; 0 leaves it out)\n"
	"  --compare-seconds S  length of each of its runs (default 5)\n"
	"  --daemon PATH      the sectorfs daemon (default: ../fs/sectorfs next to this\n"
	"                     program, else sectorfs beside it, else in PATH)\n"
	"  --keep             leave the store (and its images) in place\n"
	"  --json             one JSON object with every figure\n"
	"  -h, --help         this help\n";

static bool have(const char *cmd)
{
	char *argv[] = { (char *)cmd, (char *)"--version", NULL };

	return bench_run_cmd(argv, NULL, "/dev/null") == 0;
}

/* The read and write IOPS summed over the jobs of fio's JSON output in path. */
static int fio_iops(const char *path, double *rd, double *wr)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e), *jobs, *job;
	size_t i;

	*rd = *wr = 0;
	if (!j || !(jobs = json_object_get(j, "jobs"))) {
		tool_error("cannot read fio's output %s: %s", path, j ? "no jobs" : e.text);
		json_decref(j);
		return -1;
	}
	json_array_foreach(jobs, i, job) {
		*rd += json_number_value(json_object_get(json_object_get(job, "read"), "iops"));
		*wr += json_number_value(json_object_get(json_object_get(job, "write"), "iops"));
	}
	json_decref(j);
	return 0;
}

/* Step 2b: one 4 KiB read of each image, then quiet; the RSS after each. */
static int scale_touch(struct scale *sc)
{
	struct scale_result *res = &sc->res;
	char path[PATH_MAX + 48];
	void *buf = NULL;
	double t0 = scale_now_s();
	int rc = 0;

	if (posix_memalign(&buf, 4096, 4096) != 0)
		return -1;
	res->touched = 0;
	for (unsigned long i = 0; i < res->images && !tool_interrupted; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/d%05lu", sc->big.mnt, i);
		fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0 || pread(fd, buf, 4096, 0) != 4096) {
			tool_error("touch: %s: %s", path, fd < 0 ? strerror(errno) : "a 4 KiB read failed");
			if (fd >= 0)
				close(fd);
			rc = -1;
			break;
		}
		close(fd);
		res->touched++;
		if (i % 256 == 0)
			tool_progress_draw(&sc->prog, "touch: %lu of %lu images", i + 1, res->images);
	}
	free(buf);
	tool_progress_clear(&sc->prog);
	if (rc < 0 || tool_interrupted)
		return -1;
	res->touch_s = scale_now_s() - t0;
	res->rss_touched = scale_proc_status(sc->big.pid, "VmRSS");
	scale_sleep_s(res->touch_idle_s);
	res->rss_touched_idle = scale_proc_status(sc->big.pid, "VmRSS");
	return tool_interrupted ? -1 : 0;
}

/* Step 3: fio over LOAD_IMAGES images while the daemon's RSS is sampled. */
static int scale_load(struct scale *sc)
{
	struct scale_result *res = &sc->res;
	char job[PATH_MAX + 16], out[PATH_MAX + 16], outopt[PATH_MAX + 32];
	char *argv[] = { (char *)"fio", (char *)"--output-format=json", outopt, job, NULL };
	unsigned n = res->images < LOAD_IMAGES ? (unsigned)res->images : LOAD_IMAGES;
	double t0;
	pid_t pid;
	FILE *f;
	int st;

	snprintf(job, sizeof(job), "%s/load.fio", sc->dir);
	snprintf(out, sizeof(out), "%s/load.json", sc->dir);
	snprintf(outopt, sizeof(outopt), "--output=%s", out);
	if (!(f = fopen(job, "we"))) {
		tool_error("%s: %s", job, strerror(errno));
		return -1;
	}
	fprintf(f, "[global]\ndirect=1\nioengine=libaio\niodepth=4\nrw=randrw\nrwmixread=50\n"
		"bssplit=4k/40:64k/30:1m/30\ntime_based\nruntime=%.0f\nsize=%llu\nallow_file_create=0\n",
		res->load_s, (unsigned long long)res->size);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "[j%u]\nfilename=%s/d%05lu\n", i, sc->big.mnt, i * (res->images / n));
	fclose(f);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	t0 = scale_now_s();
	res->peak_rss = res->peak_threads = 0;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		long r = scale_proc_status(sc->big.pid, "VmRSS"), t = scale_proc_status(sc->big.pid, "Threads");

		if (r > res->peak_rss)
			res->peak_rss = r;
		if (t > res->peak_threads)
			res->peak_threads = t;
		if (tool_interrupted)
			kill(pid, SIGTERM);
		else
			tool_progress_draw(&sc->prog, "load: %.0f of %.0f s, RSS %ld MiB", scale_now_s() - t0,
					   res->load_s, r / 1024);
		scale_sleep_s(0.1);
	}
	tool_progress_clear(&sc->prog);
	if (tool_interrupted)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		tool_error("fio failed (job %s)", job);
		return -1;
	}
	res->rss_end = scale_proc_status(sc->big.pid, "VmRSS");
	scale_sleep_s(res->after_s);
	res->rss_after = scale_proc_status(sc->big.pid, "VmRSS");
	if (fio_iops(out, &res->load_read_iops, &res->load_write_iops) < 0)
		return -1;
	res->load_images = n;
	res->loaded = true;
	return 0;
}

/* One 4 KiB random read run at QD 1 on path: its IOPS, or -1. */
static double qd1_reads(struct scale *sc, const char *path)
{
	char fname[PATH_MAX + 32], out[PATH_MAX + 16], outopt[PATH_MAX + 32], rt[32], sz[48];
	char *argv[] = { (char *)"fio", (char *)"--name=qd1", fname, (char *)"--direct=1", (char *)"--rw=randread",
			 (char *)"--bs=4k", (char *)"--ioengine=psync", (char *)"--iodepth=1", (char *)"--norandommap",
			 (char *)"--randrepeat=0", (char *)"--time_based", rt, sz, (char *)"--allow_file_create=0",
			 (char *)"--output-format=json", outopt, NULL };
	double rd, wr;

	snprintf(fname, sizeof(fname), "--filename=%s", path);
	snprintf(out, sizeof(out), "%s/qd1.json", sc->dir);
	snprintf(outopt, sizeof(outopt), "--output=%s", out);
	snprintf(rt, sizeof(rt), "--runtime=%.0f", sc->cmp_s);
	snprintf(sz, sizeof(sz), "--size=%llu", (unsigned long long)sc->res.size);
	if (bench_run_cmd(argv, NULL, "/dev/null") != 0 || fio_iops(out, &rd, &wr) < 0)
		return -1;
	return rd;
}

/* Step 4: the same reads on an image of the big store and on a store of one, interleaved. */
static int compare(struct scale *sc)
{
	struct scale_result *res = &sc->res;
	char big[PATH_MAX + 48], one[PATH_MAX + 48];

	snprintf(big, sizeof(big), "%s/d%05lu", sc->big.mnt, res->images / 2);
	snprintf(one, sizeof(one), "%s/d00000", sc->one.mnt);
	for (unsigned i = 0; i < sc->repeat && !tool_interrupted; i++) {
		/* alternate which goes first, so neither always runs on a cache the other warmed */
		const char *first = i % 2 ? one : big, *second = i % 2 ? big : one;
		double a = qd1_reads(sc, first), b = a < 0 ? -1 : qd1_reads(sc, second);

		if (a < 0 || b < 0) {
			tool_error("fio on %s or %s failed", first, second);
			return -1;
		}
		res->iops_big[i] = i % 2 ? b : a;
		res->iops_one[i] = i % 2 ? a : b;
		res->ncmp = i + 1;
		tool_progress_draw(&sc->prog, "per-I/O cost: %u of %lu repeats", i + 1, sc->repeat);
	}
	tool_progress_clear(&sc->prog);
	return tool_interrupted ? -1 : 0;
}

static int measure(struct scale *sc)
{
	struct scale_result *res = &sc->res;

	if (scale_make_store(sc, &sc->big, "store", res->images) < 0 || scale_make_store(sc, &sc->one, "one", 1) < 0)
		return -1;
	/* 1: the first mount makes every backing file and map */
	if ((res->ready_first = scale_start_daemon(sc, &sc->big)) < 0)
		return -1;
	res->rss_first = scale_proc_status(sc->big.pid, "VmRSS");
	res->fds_first = scale_proc_fds(sc->big.pid);
	if (scale_stop_daemon(&sc->big) < 0)
		return -1;
	/* 2: a later mount */
	if ((res->ready_later = scale_start_daemon(sc, &sc->big)) < 0)
		return -1;
	res->rss_later = scale_proc_status(sc->big.pid, "VmRSS");
	res->fds_later = scale_proc_fds(sc->big.pid);
	if (scale_start_daemon(sc, &sc->one) < 0)
		return -1;
	res->rss_one = scale_proc_status(sc->one.pid, "VmRSS");
	res->ls1 = scale_time_ls(&sc->big);
	scale_sleep_s(1.2);                     /* the attributes the first ls -l got expire (1 s) */
	res->ls2 = scale_time_ls(&sc->big);
	res->listed = scale_count_names(sc->big.mnt);   /* the images MNT lists */
	scale_sleep_s(3);                       /* the quiet mount gives back what the listing took */
	res->rss_idle = scale_proc_status(sc->big.pid, "VmRSS");
	res->fds_idle = scale_proc_fds(sc->big.pid);
	res->threads_idle = scale_proc_status(sc->big.pid, "Threads");
	if (res->ls1 < 0 || res->ls2 < 0) {
		tool_error("ls -l %s failed", sc->big.mnt);
		return -1;
	}
	if (scale_touch(sc) < 0)
		return -1;
	if (!sc->have_fio)
		return 0;
	/* 4 before 3: the load writes the images it runs on, and reads of written blocks would
	 * cost the disk too */
	if (sc->repeat && compare(sc) < 0)
		return -1;
	if (res->load_s > 0 && scale_load(sc) < 0)
		return -1;
	return 0;
}

static int cleanup(struct scale *sc)
{
	int rc = 0;

	if (scale_stop_daemon(&sc->big) < 0)
		rc = -1;
	if (scale_stop_daemon(&sc->one) < 0)
		rc = -1;
	if (!sc->dir[0])
		return rc;
	if (scale_mounted(sc->big.mnt) || scale_mounted(sc->one.mnt)) {
		tool_error("a mount is left in %s: not removed", sc->dir);
		return -1;
	}
	if (sc->keep) {
		fprintf(stderr, "%s: the store is kept in %s\n", BENCH_PROG, sc->big.store);
		return rc;
	}
	if (testbed_rm_tree(sc->dir) < 0) {
		tool_error("cannot remove %s: %s", sc->dir, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* Seconds of a phase that 0 leaves out: 0, or -1 (printed). */
static int parse_phase_seconds(const struct tool_cmd *self, const char *what, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 1e6)) {
		tool_usage_error(self, "invalid %s '%s': seconds from 0 to 1000000", what, arg);
		return -1;
	}
	*out = v;
	return 0;
}

enum { SC_IMAGES, SC_SIZE, SC_NOFILE, SC_DIR, SC_LOAD, SC_AFTER, SC_TOUCH_IDLE, SC_REPEAT, SC_COMPARE,
       SC_KEEP };
static const struct tool_opt scale_opts[] = {
	[SC_IMAGES] = { "images", 0, TOOL_UINT, 1, 99999, "1000" },
	[SC_SIZE] = { "size", 0, TOOL_SIZE, 1, 0, "1G" },
	[SC_NOFILE] = { "nofile", 0, TOOL_UINT, 16, 1u << 20, NULL },
	[SC_DIR] = { "dir", 0, TOOL_STRING },
	[SC_LOAD] = { "load-seconds", 0, TOOL_STRING, 0, 0, "60" },
	[SC_AFTER] = { "after-seconds", 0, TOOL_STRING, 0, 0, "10" },
	[SC_TOUCH_IDLE] = { "touch-idle-seconds", 0, TOOL_STRING, 0, 0, "10" },
	[SC_REPEAT] = { "repeat", 0, TOOL_UINT, 0, MAX_REPEAT, "5" },
	[SC_COMPARE] = { "compare-seconds", 0, TOOL_SECONDS, 0, 0, "5" },
	[SC_KEEP] = { "keep", 0, TOOL_FLAG },
	{ NULL },
};

static int check_scale(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct scale *sc = item->data;

	sc->res.images = (unsigned long)o[SC_IMAGES].n;
	sc->res.size = o[SC_SIZE].n;
	sc->res.nofile = o[SC_NOFILE].set ? (unsigned long)o[SC_NOFILE].n : 0;
	sc->repeat = (unsigned long)o[SC_REPEAT].n;
	sc->cmp_s = o[SC_COMPARE].secs;
	sc->keep = o[SC_KEEP].set;
	sc->json = tool_opt_set(item, "json");
	if (parse_phase_seconds(self, "--load-seconds", o[SC_LOAD].arg, &sc->res.load_s) < 0 ||
	    parse_phase_seconds(self, "--after-seconds", o[SC_AFTER].arg, &sc->res.after_s) < 0 ||
	    parse_phase_seconds(self, "--touch-idle-seconds", o[SC_TOUCH_IDLE].arg, &sc->res.touch_idle_s) < 0)
		return tool_usage_status(self);
	if (sc->res.size % 4096)
		return tool_usage_error(self, "--size must be a multiple of 4096 (4kn images)");
	return 0;
}

static int exec_scale(const struct tool_cmd *self, struct tool_item *item)
{
	struct scale *sc = item->data;
	const char *dir = item->opt[SC_DIR].arg;
	int rc = 1;

	(void)self;
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/var/tmp";
	testbed_find_daemon(sc->daemon, sizeof(sc->daemon), tool_opt_arg(item, "daemon"));
	sc->have_fio = have("fio");
	if (!sc->have_fio && (sc->res.load_s > 0 || sc->repeat))
		tool_error("fio not found: no load and no per-I/O comparison");
	snprintf(sc->dir, sizeof(sc->dir), "%s/sectorfs-bench-scale.XXXXXX", dir);
	if (!mkdtemp(sc->dir)) {
		tool_error("cannot make a directory %s: %s", sc->dir, strerror(errno));
		return 1;
	}
	/* the steps that draw the line (compare, the load) begin past BENCH_PROGRESS_AFTER_NS: the
	 * mounts and ls -l before them take over 4 s */
	bench_begin(&sc->prog);
	if (measure(sc) == 0) {
		rc = sc->json ? scale_report_json(&sc->res) : (scale_report_text(&sc->res), 0);
	} else if (tool_interrupted) {
		rc = BENCH_EXIT_INTERRUPTED;
	}
	if (cleanup(sc) < 0 && rc == 0)
		rc = 1;
	return rc;
}

TOOL_CMD(bench_cmd_scale, "scale", "[--images N] [options]",
	 "start-up time, memory and descriptors of a store of many images, idle and under load",
	 .help = help, .opts = scale_opts, .shared = { bench_opts_daemon, bench_opts_json }, .data_size = sizeof(struct scale), .check = check_scale,
	 .exec = exec_scale);
