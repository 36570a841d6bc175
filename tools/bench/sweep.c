/* SPDX-License-Identifier: MIT */
/*
 * sweep.c - sectorfs-bench sweep: throughput against transfer size, as
 * ATTO Disk Benchmark draws it.
 *
 * For each power of two from --min to --max (512 B .. 8 MiB by default)
 * there are two tests, a write then a read, each lasting --time seconds:
 * QD threads, each with its own stripe of the span, issue sequential
 * O_DIRECT pwrite()/pread() calls of exactly that size, one at a time,
 * wrapping round at the end of the stripe.  Throughput is bytes moved
 * over the test's wall time (start gate to the last thread's return).
 *
 *    span:  |---- thread 0 ---->|---- thread 1 ---->| ... |   (stripes)
 *            0  x  2x  3x ...     each I/O x bytes, x-aligned
 *
 * Sizes below the disk's logical sector are not skipped: they are tried,
 * and a disk that refuses them (a 4Kn disk refuses 512 B..2 KiB with
 * EINVAL, as a real one does) shows "refused (EINVAL)" for them.  Sizes
 * larger than the span are "skipped"; QD is lowered for a size when the
 * span has fewer than QD transfers in it.  Output: a table, a bar chart
 * of MB/s, or one JSON object (--json) or CSV rows (--csv).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "median.h"
#include "run.h"
#include "sweep.h"
#include "util/units.h"

static const char sweep_help[] =
	"Sequential O_DIRECT writes, then reads, of each power-of-two transfer size from\n"
	"--min to --max on IMAGE (a file, a sectorfs image or a block device), each for\n"
	"--time seconds with --qd threads, each on its own stripe of the disk.  Sizes\n"
	"below the logical sector (the user.sectorfs.logical_sector_size xattr, BLKSSZGET\n"
	"on a block device, else 512) are tried too and shown as refused when the disk\n"
	"refuses them.  THE WRITE TESTS OVERWRITE THE DISK (within --span).\n\n"
	"  --min SIZE      smallest transfer (default 512)\n"
	"  --max SIZE      largest transfer (default 8M)\n"
	"  --qd N          I/Os in flight: N threads (default 1)\n"
	"  --time SECONDS  length of each test (default 1)\n"
	"  --span SIZE     use only the first SIZE bytes of the disk (default: all of it)\n"
	"  --read-only     only the read tests (changes nothing)\n"
	"  --write-only    only the write tests\n"
	"  --json          one JSON object with every figure\n"
	"  --csv           CSV, one row per size and direction\n"
	"  --profile-out FILE  write a device profile of IMAGE to FILE: the QD1 mean\n"
	"                  latency per size, channels from 4 KiB I/O at QD 1..32 (each\n"
	"                  for --time), flush from fdatasync; needs --qd 1\n"
	"  --compare SRC.json  the replay check: compare the median latency per size with\n"
	"                  the sweep (--json) in SRC.json; exit 1 when a size the\n"
	"                  source was slower than the floor at differs by more than 10%\n"
	"  --floor FLOOR.json  the same sweep of an image without a profile on the same\n"
	"                  mount: sizes the source was faster than it are not compared\n"
	"  --svg FILE      also draw the sweep as an SVG chart (write and read MB/s per\n"
	"                  size, refused sizes marked)\n"
	"  -h, --help      this help\n";

#define MAX_XFER (64ull << 20)
#define CHAN_MAX_QD 32u                 /* --profile-out: SWEEP_CHAN_XFER I/O at QD 1, 2, 4 .. this */

/* One thread's buffer and figures for the test that runs. */
struct sweep_worker {
	_Atomic uint64_t bytes;         /* read by the progress line */
	uint64_t ios;
	int err;
	struct bench_hist lat;
	void *buf;
};

struct sweep {
	struct sweep_result res;
	int fd;                         /* the disk's */
	struct sweep_worker *w;         /* nw of them: res.qd, or CHAN_MAX_QD for --profile-out */
	unsigned nw, want_w;
	struct sweep_test *cur;
	unsigned index;                 /* of cur in res.tests */
	struct tool_progress prog;
};

static void sweep_worker(struct bench_run *r, unsigned idx, void *arg)
{
	struct sweep *s = arg;
	struct sweep_test *t = s->cur;
	struct sweep_worker *w = &s->w[idx];
	uint64_t stripe = s->res.span / t->threads / t->xfer * t->xfer;
	uint64_t base = stripe * idx, off = base, t0, t1;
	ssize_t n;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		t0 = sfs_now_ns();
		if (t->write)
			n = pwrite(s->fd, w->buf, t->xfer, (off_t)off);
		else
			n = pread(s->fd, w->buf, t->xfer, (off_t)off);
		t1 = sfs_now_ns();
		if (n < 0) {
			w->err = errno;
			atomic_store(&r->stop, true);   /* one refusal decides the test */
			return;
		}
		bench_hist_add(&w->lat, t1 - t0);
		w->ios++;
		atomic_store_explicit(&w->bytes, w->bytes + (uint64_t)n, memory_order_relaxed);
		off += t->xfer;
		if (off >= base + stripe || n == 0)
			off = base;
	}
}

static void sweep_tick(struct bench_run *r, void *arg)
{
	struct sweep *s = arg;
	uint64_t bytes = 0;
	double secs = (double)(sfs_now_ns() - r->t0) / 1e9;
	char sz[32];

	for (unsigned i = 0; i < s->cur->threads; i++)
		bytes += atomic_load_explicit(&s->w[i].bytes, memory_order_relaxed);
	tool_progress_draw(&s->prog, "sweep: %s %s  [test %u of %u]  %.1f MB/s",
			   tool_fmt_size(s->cur->xfer, TOOL_SIZE_IEC, sz, sizeof(sz)),
			   s->cur->write ? "write" : "read", s->index + 1, s->res.ntests,
			   secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
}

/* The workers' figures into t, and what they say of the test. */
static void sum_workers(struct sweep *s, struct sweep_test *t)
{
	bench_hist_init(&t->lat);
	for (unsigned i = 0; i < t->threads; i++) {
		t->ios += s->w[i].ios;
		t->bytes += atomic_load(&s->w[i].bytes);
		bench_hist_merge(&t->lat, &s->w[i].lat);
		if (s->w[i].err)
			t->failed++;
		if (s->w[i].err && !t->err)
			t->err = s->w[i].err;
	}
	if (t->err)
		t->st = t->err == EINVAL && t->ios == 0 ? ST_REFUSED : ST_ERROR;
	else
		t->st = ST_OK;
}

/* Run one test; -1 only when threads cannot be started. */
static int run_test(struct sweep *s, struct sweep_test *t)
{
	struct bench_run r = { .worker = sweep_worker, .arg = s, .seconds = s->res.seconds,
			       .tick = sweep_tick };
	uint64_t n = s->res.span / t->xfer;

	if (n == 0) {
		t->st = ST_SKIPPED;
		return 0;
	}
	t->threads = n < s->res.qd ? (unsigned)n : s->res.qd;
	for (unsigned i = 0; i < t->threads; i++) {
		atomic_store(&s->w[i].bytes, 0);
		s->w[i].ios = 0;
		s->w[i].err = 0;
		bench_hist_init(&s->w[i].lat);
	}
	s->cur = t;
	r.nthreads = t->threads;
	if (bench_run(&r) < 0)
		return -1;
	t->secs = bench_run_seconds(&r);
	sum_workers(s, t);
	s->res.interrupted = r.interrupted;
	t->cut = r.interrupted && t->st == ST_OK;
	return 0;
}

enum {
	SWEEP_MIN, SWEEP_MAX, SWEEP_QD, SWEEP_TIME, SWEEP_SPAN, SWEEP_READ_ONLY, SWEEP_WRITE_ONLY,
	SWEEP_CSV, SWEEP_PROFILE_OUT, SWEEP_COMPARE, SWEEP_FLOOR,
};
static const struct tool_opt sweep_opts[] = {
	[SWEEP_MIN] = { "min", 0, TOOL_SIZE, .min = 1, .def = "512" },
	[SWEEP_MAX] = { "max", 0, TOOL_SIZE, .min = 1, .def = "8M" },
	[SWEEP_QD] = { "qd", 0, TOOL_UINT, 1, 256, .def = "1" },
	[SWEEP_TIME] = { "time", 0, TOOL_SECONDS, .def = "1" },
	[SWEEP_SPAN] = { "span", 0, TOOL_SIZE, .min = 1 },
	[SWEEP_READ_ONLY] = { "read-only", 0, TOOL_FLAG },
	[SWEEP_WRITE_ONLY] = { "write-only", 0, TOOL_FLAG },
	[SWEEP_CSV] = { "csv", 0, TOOL_FLAG },
	[SWEEP_PROFILE_OUT] = { "profile-out", 0, TOOL_STRING },
	[SWEEP_COMPARE] = { "compare", 0, TOOL_STRING },
	[SWEEP_FLOOR] = { "floor", 0, TOOL_STRING },
	{ NULL },
};

/* The parameters of the sweep, in item->data (struct sweep; span: as given, 0 for the whole
 * disk). */
static int check_sweep(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct sweep_result *p = &((struct sweep *)item->data)->res;

	p->min = o[SWEEP_MIN].n;
	p->max = o[SWEEP_MAX].n;
	p->qd = (unsigned)o[SWEEP_QD].n;
	p->seconds = o[SWEEP_TIME].secs;
	p->span = o[SWEEP_SPAN].n;
	if (o[SWEEP_READ_ONLY].set && o[SWEEP_WRITE_ONLY].set)
		return tool_usage_error(self, "--read-only and --write-only exclude each other");
	if (tool_opt_set(item, "json") && o[SWEEP_CSV].set)
		return tool_usage_error(self, "--json and --csv exclude each other");
	if (!sfs_is_pow2(p->min) || !sfs_is_pow2(p->max) || p->min < 512 || p->max > MAX_XFER ||
	    p->min > p->max)
		return tool_usage_error(self, "--min and --max must be powers of two, 512 <= min <= max <= 64M");
	if (o[SWEEP_PROFILE_OUT].set && p->qd != 1)
		return tool_usage_error(self, "--profile-out measures the size curve at QD1: no --qd");
	if (o[SWEEP_COMPARE].set && (tool_opt_set(item, "json") || o[SWEEP_CSV].set))
		return tool_usage_error(self, "--compare prints a table: not with --json or --csv");
	if (o[SWEEP_FLOOR].set && !o[SWEEP_COMPARE].set)
		return tool_usage_error(self, "--floor goes with --compare");
	return 0;
}

/* The tests (write then read of each size, as asked) and a buffer per worker; -1 (printed). */
static int plan(struct sweep *s, bool ronly, bool wonly)
{
	struct sweep_result *res = &s->res;

	s->nw = res->qd > s->want_w ? res->qd : s->want_w;
	s->w = calloc(s->nw, sizeof(*s->w));
	for (uint64_t x = res->min; x <= res->max; x *= 2)
		res->ntests += (ronly || wonly) ? 1 : 2;
	res->tests = calloc(res->ntests, sizeof(*res->tests));
	if (!s->w || !res->tests) {
		tool_error("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < s->nw; i++)
		if (!(s->w[i].buf = bench_buf_alloc(res->max > SWEEP_CHAN_XFER ? res->max : SWEEP_CHAN_XFER, res->d->logical)))
			return -1;
	res->ntests = 0;
	for (uint64_t x = res->min; x <= res->max; x *= 2) {
		if (!ronly)
			res->tests[res->ntests++] = (struct sweep_test){ .xfer = x, .write = true };
		if (!wonly)
			res->tests[res->ntests++] = (struct sweep_test){ .xfer = x, .write = false };
	}
	return 0;
}

/* The fdatasync time after a 4 KiB write at 0, 32 times or for --time at most: its mean into
 * s->res.flush_us, its median into flush_med_us (both 0 when a write or fdatasync fails), nflush. */
static void measure_flush(struct sweep *s)
{
	uint64_t t_end = sfs_now_ns() + (uint64_t)(s->res.seconds * 1e9), t0;
	double us[32], sum = 0;
	unsigned n = 0;

	s->res.flush_us = s->res.flush_med_us = 0;
	s->res.nflush = 0;
	while (n < 32 && sfs_now_ns() < t_end && !s->res.interrupted) {
		if (pwrite(s->fd, s->w[0].buf, SWEEP_CHAN_XFER, 0) != (ssize_t)SWEEP_CHAN_XFER)
			return;
		t0 = sfs_now_ns();
		if (fdatasync(s->fd) < 0)
			return;
		us[n] = (double)(sfs_now_ns() - t0) / 1e3;
		sum += us[n++];
	}
	s->res.flush_us = n ? sum / n : 0;
	s->res.flush_med_us = n ? bench_median(us, n) : 0;
	s->res.nflush = n;
}

/* --profile-out: 4 KiB IOPS at QD 1 .. 32 in each direction asked, the profile (with the flush the
 * sweep measured). */
static int profile_out(struct sweep *s, const char *file, bool ronly, bool wonly)
{
	struct sweep_chan ch[8];
	unsigned nch = 0, qd = s->res.qd;
	int rc = 0;

	for (unsigned q = 1; q <= CHAN_MAX_QD && !s->res.interrupted && rc == 0; q *= 2) {
		ch[nch] = (struct sweep_chan){ .qd = q };
		s->res.qd = q;
		for (int dir = 0; dir < 2 && rc == 0; dir++) {
			struct sweep_test t = { .xfer = SWEEP_CHAN_XFER, .write = dir == 0 };

			if ((t.write && ronly) || (!t.write && wonly))
				continue;
			if (run_test(s, &t) < 0)
				rc = 1;
			else if (t.st == ST_OK && t.secs > 0)
				*(t.write ? &ch[nch].write_iops : &ch[nch].read_iops) = (double)t.ios / t.secs;
		}
		nch++;
	}
	s->res.qd = qd;
	if (rc == 0 && !s->res.interrupted)
		rc = sweep_profile_write(&s->res, ch, nch, s->res.flush_med_us, file);
	return rc;
}

/* Print the results as asked, then what failed; the exit status given rc so far. */
static int report(const struct sweep *s, const struct tool_item *item, int rc)
{
	const struct sweep_result *res = &s->res;
	char a[32];

	if (tool_opt_set(item, "json"))
		rc |= sweep_print_json(res);
	else if (item->opt[SWEEP_CSV].set)
		sweep_print_csv(res);
	else
		sweep_print_text(res);
	fflush(stdout);
	if (tool_opt_set(item, "svg"))
		rc |= bench_chart(sweep_chart, res, tool_opt_arg(item, "svg"));
	for (unsigned i = 0; i < res->ntests; i++) {
		const struct sweep_test *t = &res->tests[i];

		if (t->st != ST_ERROR)
			continue;
		tool_error("%s: %s %s failed: %s", res->d->path,
			   tool_fmt_size(t->xfer, TOOL_SIZE_IEC, a, sizeof(a)), t->write ? "write" : "read",
			   strerror(t->err));
		rc = 1;
	}
	if (res->interrupted)
		rc = bench_interrupted(rc, ": the results cover the tests run so far");
	return rc;
}

static int exec_sweep(const struct tool_cmd *self, struct tool_item *item)
{
	struct bench_disk *d = &((struct bench_target *)item->target)->disk;
	struct sweep *s = item->data;
	int rc = 1;

	(void)self;
	bench_begin(&s->prog);
	s->res.d = d;
	s->fd = d->fd;
	if (!s->res.span || s->res.span > d->size)
		s->res.span = d->size;
	if (item->opt[SWEEP_PROFILE_OUT].set)
		s->want_w = CHAN_MAX_QD;
	if (plan(s, item->opt[SWEEP_READ_ONLY].set, item->opt[SWEEP_WRITE_ONLY].set) == 0) {
		rc = 0;
		for (s->index = 0; s->index < s->res.ntests && !s->res.interrupted; s->index++) {
			if (run_test(s, &s->res.tests[s->index]) < 0) {
				rc = 1;
				break;
			}
		}
		if (rc == 0 && !item->opt[SWEEP_READ_ONLY].set && !s->res.interrupted)
			measure_flush(s);
		if (rc == 0 && item->opt[SWEEP_PROFILE_OUT].set && !s->res.interrupted)
			rc = profile_out(s, item->opt[SWEEP_PROFILE_OUT].arg, item->opt[SWEEP_READ_ONLY].set,
					 item->opt[SWEEP_WRITE_ONLY].set);
		tool_progress_clear(&s->prog);
		rc = report(s, item, rc);
		if (item->opt[SWEEP_COMPARE].set && !s->res.interrupted)
			rc |= sweep_compare(&s->res, item->opt[SWEEP_COMPARE].arg,
					    item->opt[SWEEP_FLOOR].set ? item->opt[SWEEP_FLOOR].arg : NULL, 0.10);
	}
	if (s->w)
		for (unsigned i = 0; i < s->nw; i++)
			free(s->w[i].buf);
	free(s->w);
	free(s->res.tests);
	return rc;
}

TOOL_CMD(bench_cmd_sweep, "sweep", "[options] IMAGE",
	 "read and write throughput for transfer sizes 512 B .. 8 MiB (ATTO-style)",
	 .help = sweep_help, .opts = sweep_opts, .shared = { bench_opts_json, bench_opts_svg }, .args = { "IMAGE" },
	 .target = BENCH_TARGET_DISK, .data_size = sizeof(struct sweep), .check = check_sweep, .exec = exec_sweep);
