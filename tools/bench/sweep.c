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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"
#include "units.h"

static int exec_sweep(int argc, char **argv);

const struct tool_cmd bench_cmd_sweep = {
	"sweep", "[options] IMAGE",
	"read and write throughput for transfer sizes 512 B .. 8 MiB (ATTO-style)",
	exec_sweep,
};

static const char help[] =
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
	"  -h, --help      this help\n";

#define MAX_XFER (64ull << 20)

static void worker_fn(struct bench_run *r, unsigned idx, void *arg)
{
	struct sweep *s = arg;
	struct test *t = s->cur;
	struct worker *w = &s->w[idx];
	uint64_t stripe = s->span / t->threads / t->xfer * t->xfer;
	uint64_t base = stripe * idx, off = base, t0, t1;
	ssize_t n;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		t0 = tool_now_ns();
		if (t->write)
			n = pwrite(s->d.fd, w->buf, t->xfer, (off_t)off);
		else
			n = pread(s->d.fd, w->buf, t->xfer, (off_t)off);
		t1 = tool_now_ns();
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

static void tick(struct bench_run *r, void *arg)
{
	struct sweep *s = arg;
	uint64_t bytes = 0;
	double secs = (double)(tool_now_ns() - r->t0) / 1e9;
	char sz[32];

	for (unsigned i = 0; i < s->cur->threads; i++)
		bytes += atomic_load_explicit(&s->w[i].bytes, memory_order_relaxed);
	bench_progress_draw(&s->prog, "sweep: %s %s  [test %u of %u]  %.1f MB/s",
			    bench_fmt_size(s->cur->xfer, sz, sizeof(sz)), s->cur->write ? "write" : "read",
			    s->index + 1, s->ntests, secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
}

/* Run one test; -1 only when threads cannot be started. */
static int run_test(struct sweep *s, struct test *t)
{
	struct bench_run r = { 0 };
	uint64_t n = s->span / t->xfer;

	if (n == 0) {
		t->st = ST_SKIPPED;
		return 0;
	}
	t->threads = n < s->qd ? (unsigned)n : s->qd;
	for (unsigned i = 0; i < t->threads; i++) {
		atomic_store(&s->w[i].bytes, 0);
		s->w[i].ios = 0;
		s->w[i].err = 0;
		bench_hist_init(&s->w[i].lat);
	}
	s->cur = t;
	r.nthreads = t->threads;
	r.worker = worker_fn;
	r.arg = s;
	r.seconds = s->seconds;
	r.tick = tick;
	if (bench_run(&r) < 0)
		return -1;
	t->secs = bench_run_seconds(&r);
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
	s->interrupted = r.interrupted;
	t->cut = r.interrupted && t->st == ST_OK;
	return 0;
}

static int exec_sweep(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "min", required_argument, NULL, 'm' }, { "max", required_argument, NULL, 'M' },
		{ "qd", required_argument, NULL, 'q' }, { "time", required_argument, NULL, 't' },
		{ "span", required_argument, NULL, 's' }, { "read-only", no_argument, NULL, 'r' },
		{ "write-only", no_argument, NULL, 'w' }, { "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct tool_cmd *cmd = &bench_cmd_sweep;
	struct sweep s = { .min = 512, .max = 8ull << 20, .seconds = 1 };
	bool ronly = false, wonly = false, json = false, csv = false;
	uint64_t span = 0;
	unsigned long qd = 1;
	char a[32];
	int c, rc = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': if (bench_parse_size(cmd, "--min", optarg, &s.min) < 0) return 1; break;
		case 'M': if (bench_parse_size(cmd, "--max", optarg, &s.max) < 0) return 1; break;
		case 's': if (bench_parse_size(cmd, "--span", optarg, &span) < 0) return 1; break;
		case 'q': if (bench_parse_uint(cmd, "--qd", optarg, 1, 256, &qd) < 0) return 1; break;
		case 't': if (bench_parse_seconds(cmd, "--time", optarg, &s.seconds) < 0) return 1; break;
		case 'r': ronly = true; break;
		case 'w': wonly = true; break;
		case 'j': json = true; break;
		case 'c': csv = true; break;
		case 'h':
			printf("usage: " BENCH_PROG " sweep %s\n\n%s", cmd->usage, help);
			return 0;
		default:
			return bench_bad_option(cmd, c, argv);
		}
	}
	if (optind != argc - 1)
		return bench_usage_error(cmd, optind == argc ? "missing IMAGE" : "too many arguments");
	if (ronly && wonly)
		return bench_usage_error(cmd, "--read-only and --write-only exclude each other");
	if (json && csv)
		return bench_usage_error(cmd, "--json and --csv exclude each other");
	if (!sfs_is_pow2(s.min) || !sfs_is_pow2(s.max) || s.min < 512 || s.max > MAX_XFER || s.min > s.max)
		return bench_usage_error(cmd, "--min and --max must be powers of two, 512 <= min <= max <= 64M");

	tool_catch_signals();
	bench_progress_init(&s.prog);
	if (bench_disk_open(&s.d, argv[optind], ronly ? O_RDONLY : O_RDWR) < 0)
		return 1;
	s.span = span && span < s.d.size ? span : s.d.size;
	s.qd = (unsigned)qd;
	s.w = calloc(s.qd, sizeof(*s.w));
	for (uint64_t x = s.min; x <= s.max; x *= 2)
		s.ntests += (ronly || wonly) ? 1 : 2;
	s.tests = calloc(s.ntests, sizeof(*s.tests));
	if (!s.w || !s.tests) {
		bench_error("out of memory");
		goto out;
	}
	for (unsigned i = 0; i < s.qd; i++)
		if (!(s.w[i].buf = bench_buf_alloc(s.max, s.d.logical)))
			goto out;
	s.ntests = 0;
	for (uint64_t x = s.min; x <= s.max; x *= 2) {
		if (!ronly)
			s.tests[s.ntests++] = (struct test){ .xfer = x, .write = true };
		if (!wonly)
			s.tests[s.ntests++] = (struct test){ .xfer = x, .write = false };
	}
	rc = 0;
	for (s.index = 0; s.index < s.ntests && !s.interrupted; s.index++) {
		if (run_test(&s, &s.tests[s.index]) < 0) {
			rc = 1;
			break;
		}
	}
	bench_progress_clear(&s.prog);
	if (json)
		rc |= sweep_print_json(&s);
	else if (csv)
		sweep_print_csv(&s);
	else
		sweep_print_text(&s);
	fflush(stdout);
	for (unsigned i = 0; i < s.ntests; i++) {
		if (s.tests[i].st != ST_ERROR)
			continue;
		bench_error("%s: %s %s failed: %s", s.d.path, bench_fmt_size(s.tests[i].xfer, a, sizeof(a)),
			    s.tests[i].write ? "write" : "read", strerror(s.tests[i].err));
		rc = 1;
	}
	if (s.interrupted) {
		bench_error("interrupted: the results cover the tests run so far");
		rc = rc ? rc : BENCH_EXIT_INTERRUPTED;
	}
out:
	if (s.w)
		for (unsigned i = 0; i < s.qd; i++)
			free(s.w[i].buf);
	free(s.w);
	free(s.tests);
	bench_disk_close(&s.d);
	return rc;
}
