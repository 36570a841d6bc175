/* SPDX-License-Identifier: MIT */
/*
 * zeroing.c - sectorfs-bench zeroing: the zero-on-new-write experiment.
 *
 * VMware's question: what does a thin or lazily zeroed thick disk cost on
 * the first write to each block, against an eagerly zeroed one?  Six
 * images of --size bytes are declared, one per provisioning mode and
 * zero_offload setting:
 *
 *               zero_offload on          zero_offload off
 *   thin          bench-thin-on            bench-thin-off
 *   zeroedthick   bench-zeroedthick-on     bench-zeroedthick-off
 *   eagerzeroed   bench-eagerzeroedthick-on  ...-off   (the baselines)
 *
 * Pass 1 writes each image once from start to end with sequential
 * O_DIRECT writes of --xfer bytes, one at a time (QD 1): every block's
 * first write makes the daemon zero the rest of the block.  Pass 2 does
 * the same again over the now-written space: no zeroing left, and the
 * difference vanishes.  For each image and pass: IOPS, MB/s, mean and
 * p99 write latency, the overhead against eagerzeroedthick with the same
 * offload setting (extra time per write, in %), and the daemon's own
 * count of first writes and zeroed bytes (the change in
 * MNT/.stats/NAME.json over the pass).
 *
 * The daemon zeroes an eagerzeroedthick image in the background once it
 * is first looked up; its passes start only when the image's stats say
 * "zeroing": "done", so that they measure an eagerly zeroed disk.
 *
 * The store, mount and daemon come from testbed.c; the images are removed
 * at the end whatever happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "testbed.h"
#include "units.h"

static int exec_zeroing(int argc, char **argv);

const struct tool_cmd bench_cmd_zeroing = {
	"zeroing", "[--store DIR | --mount MNT] [options]",
	"first-write cost of thin / zeroedthick / eagerzeroedthick, zero offload on and off",
	exec_zeroing,
};

static const char help[] =
	"Declare six images (thin, zeroedthick, eagerzeroedthick, each with zero_offload\n"
	"true and false), write each once with sequential O_DIRECT writes over fresh\n"
	"space, then once more over the written space, and show IOPS, MB/s, latency,\n"
	"the overhead against eagerzeroedthick and the daemon's first_writes and\n"
	"zeroed_bytes.  The images are removed at the end.\n\n"
	"  --store DIR        make the images in DIR and serve it with a daemon of our own\n"
	"                     (default: a temporary store, removed at the end)\n"
	"  --mount MNT        use the running sectorfs mounted at MNT (its store gets the\n"
	"                     images; the daemon is left running)\n"
	"  --xfer SIZE        write size (default 32K)\n"
	"  --block-size SIZE  the images' allocation and zeroing unit (default 1M)\n"
	"  --size SIZE        size of each image (default 256M)\n"
	"  --sector FMT       sector format of the images: 512n, 512e or 4kn (default 512n)\n"
	"  --daemon PATH      the sectorfs daemon (default: ../fs/sectorfs next to this\n"
	"                     program, else sectorfs in PATH)\n"
	"  --json             one JSON object with every figure\n"
	"  -h, --help         this help\n";

#define NIMG 6
static const char *const provs[3] = { "thin", "zeroedthick", "eagerzeroedthick" };

struct result {
	bool ran, done;                 /* done: the whole image was written */
	uint64_t writes, bytes;
	double secs;
	struct bench_hist lat;
	struct bench_hist lat_new;      /* the writes that start in a new block */
	json_int_t st_writes, st_bytes, st_first, st_over, st_zeroed, st_alloc, st_total;
};

struct zexp {
	struct testbed tb;
	int store_fd;                   /* the store directory, for syncfs() */
	uint64_t xfer, block, size;
	const char *sector;
	char names[NIMG][64];
	struct result res[2][NIMG];
	/* the image being written */
	int fd, pass, img, err;
	_Atomic uint64_t done;           /* bytes written of it, for the progress line */
	void *buf;
	struct bench_progress prog;
};

static const char *prov_of(int i) { return provs[i / 2]; }
static bool offload_of(int i) { return i % 2 == 0; }

static void worker_fn(struct bench_run *r, unsigned idx, void *arg)
{
	struct zexp *z = arg;
	struct result *res = &z->res[z->pass][z->img];
	uint64_t off = 0, t0;
	ssize_t n;

	while (off < z->size && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		t0 = tool_now_ns();
		n = pwrite(z->fd, z->buf, z->xfer, (off_t)off);
		if (n != (ssize_t)z->xfer) {
			z->err = n < 0 ? errno : EIO;
			if (n > 0)
				res->bytes += (uint64_t)n;
			return;
		}
		t0 = tool_now_ns() - t0;
		bench_hist_add(&res->lat, t0);
		if (off % z->block == 0 || off / z->block != (off + z->xfer - 1) / z->block)
			bench_hist_add(&res->lat_new, t0);
		res->writes++;
		res->bytes += z->xfer;
		off += z->xfer;
		atomic_store_explicit(&z->done, off, memory_order_relaxed);
	}
	res->done = off >= z->size;
}

static void tick(struct bench_run *r, void *arg)
{
	struct zexp *z = arg;
	uint64_t done = atomic_load_explicit(&z->done, memory_order_relaxed);

	bench_progress_draw(&z->prog, "zeroing: pass %d, %s, offload %s: %3.0f %%", z->pass + 1,
			    prov_of(z->img), offload_of(z->img) ? "on" : "off",
			    100.0 * (double)done / (double)z->size);
}

/* A top-level integer of MNT/.stats/NAME.json (json loaded), 0 when missing. */
static json_int_t key(json_t *j, const char *k)
{
	return json_integer_value(json_object_get(j, k));
}

/* Wait until the daemon has zeroed image i (eagerzeroedthick, in the background): 0, -1 on
 * errors (printed).  A daemon whose stats have no "zeroing" key zeroed it at the lookup. */
static int wait_zeroed(struct zexp *z, int i)
{
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	json_t *j;
	bool running;

	do {
		if (!(j = testbed_stats(&z->tb, z->names[i])))
			return -1;
		running = strcmp(json_string_value(json_object_get(j, "zeroing")) ?: "", "running") == 0;
		json_decref(j);
	} while (running && !tool_interrupted && nanosleep(&tick, NULL) == 0);
	return 0;
}

/* Write image i once; 0, 1 when interrupted, -1 on errors (printed). */
static int run_one(struct zexp *z, int pass, int i)
{
	struct result *res = &z->res[pass][i];
	struct bench_run r = { .nthreads = 1, .worker = worker_fn, .arg = z, .tick = tick };
	struct bench_disk d;
	char path[PATH_MAX + 80];
	json_t *before, *after;

	testbed_path(&z->tb, z->names[i], path, sizeof(path));
	if (bench_disk_open(&d, path, O_RDWR) < 0)      /* an eager image starts zeroing here */
		return -1;
	if (pass == 0 && wait_zeroed(z, i) < 0) {
		bench_disk_close(&d);
		return -1;
	}
	if (!(before = testbed_stats(&z->tb, z->names[i]))) {
		bench_disk_close(&d);
		return -1;
	}
	z->fd = d.fd;
	z->pass = pass;
	z->img = i;
	z->err = 0;
	atomic_store(&z->done, 0);
	bench_hist_init(&res->lat);
	bench_hist_init(&res->lat_new);
	res->ran = true;
	/* Writeback of earlier images (an eager one's zeroes) must not land in this one's figures. */
	syncfs(z->store_fd);
	if (bench_run(&r) < 0) {
		json_decref(before);
		bench_disk_close(&d);
		return -1;
	}
	res->secs = bench_run_seconds(&r);
	bench_disk_close(&d);
	if (!(after = testbed_stats(&z->tb, z->names[i]))) {
		json_decref(before);
		return -1;
	}
	res->st_writes = key(after, "writes") - key(before, "writes");
	res->st_bytes = key(after, "bytes_written") - key(before, "bytes_written");
	res->st_first = key(after, "first_writes") - key(before, "first_writes");
	res->st_over = key(after, "overwrites") - key(before, "overwrites");
	res->st_zeroed = key(after, "zeroed_bytes") - key(before, "zeroed_bytes");
	res->st_alloc = key(after, "allocated_blocks");
	res->st_total = key(after, "total_blocks");
	json_decref(before);
	json_decref(after);
	if (z->err) {
		bench_progress_clear(&z->prog);
		bench_error("%s: write failed: %s", path, strerror(z->err));
		return -1;
	}
	return r.interrupted ? 1 : 0;
}

static double iops(const struct result *r) { return r->secs > 0 ? (double)r->writes / r->secs : 0; }
static double mbps(const struct result *r) { return r->secs > 0 ? (double)r->bytes / r->secs / 1e6 : 0; }

/* Extra time per write against eagerzeroedthick with the same offload, in %; NAN if unknown. */
static double overhead(const struct zexp *z, int pass, int i)
{
	const struct result *r = &z->res[pass][i], *base = &z->res[pass][4 + i % 2];

	if (!r->writes || !base->writes || base->secs <= 0)
		return NAN;
	return ((r->secs / (double)r->writes) / (base->secs / (double)base->writes) - 1) * 100;
}

static void print_text(const struct zexp *z)
{
	static const char *const title[2] = {
		"pass 1: fresh space (each block's first write zeroes the rest of the block)",
		"pass 2: the same space again (every write is an overwrite)",
	};
	char a[32], b[32], c[32];
	double o;

	printf("zero-on-new-write: 6 images of %s (%s, block %s), ", bench_fmt_size(z->size, a, sizeof(a)),
	       z->sector, bench_fmt_size(z->block, b, sizeof(b)));
	printf("sequential O_DIRECT writes of %s, QD 1\n", bench_fmt_size(z->xfer, c, sizeof(c)));
	printf("store %s%s, mount %s\n", z->tb.store, z->tb.temporary_store ? " (temporary)" : "", z->tb.mnt);
	for (int p = 0; p < 2 && z->res[p][4].ran; p++) {
		printf("\n%s\n%-16s %-7s %8s %8s %9s %9s %9s %9s %7s %10s\n", title[p], "provisioning",
		       "offload", "IOPS", "MB/s", "mean", "p99", "new-block", "overhead", "1st_wr", "zeroed");
		for (int i = 0; i < NIMG; i++) {
			const struct result *r = &z->res[p][i];

			if (!r->ran || (!r->writes && !r->done))
				continue;
			printf("%-16s %-7s %8.0f %8.1f ", prov_of(i), offload_of(i) ? "on" : "off", iops(r), mbps(r));
			printf("%9s ", bench_fmt_us(bench_hist_mean_us(&r->lat), a, sizeof(a)));
			printf("%9s ", bench_fmt_us(bench_hist_pct_us(&r->lat, 99), a, sizeof(a)));
			printf("%9s ", bench_fmt_us(bench_hist_mean_us(&r->lat_new), a, sizeof(a)));
			o = overhead(z, p, i);
			if (i >= 4)
				printf("%9s", "baseline");
			else if (o == o)
				printf("%+8.1f%%", o);
			else
				printf("%9s", "-");
			sfs_format_human((uint64_t)r->st_zeroed, a, sizeof(a));
			printf(" %7lld %10s%s\n", (long long)r->st_first, a, r->done ? "" : "  (interrupted)");
		}
	}
	printf("\nmean, p99: write latency; new-block: mean latency of the writes that start a block\n"
	       "overhead: extra time per write against eagerzeroedthick with the same offload\n"
	       "1st_wr, zeroed: first_writes and zeroed_bytes counted by the daemon during the pass\n");
}

static json_t *result_json(const struct zexp *z, int p, int i)
{
	const struct result *r = &z->res[p][i];
	json_t *o = json_object(), *st = json_object();

	json_object_set_new(o, "name", json_string(z->names[i]));
	json_object_set_new(o, "provisioning", json_string(prov_of(i)));
	json_object_set_new(o, "zero_offload", json_boolean(offload_of(i)));
	json_object_set_new(o, "complete", json_boolean(r->done));
	json_object_set_new(o, "writes", json_integer((json_int_t)r->writes));
	json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(o, "seconds", bench_jreal(r->secs));
	json_object_set_new(o, "iops", bench_jreal(iops(r)));
	json_object_set_new(o, "mb_per_s", bench_jreal(mbps(r)));
	json_object_set_new(o, "latency", bench_hist_json(&r->lat));
	json_object_set_new(o, "new_block_latency", bench_hist_json(&r->lat_new));
	json_object_set_new(o, "overhead_pct", i >= 4 ? json_real(0) : bench_jreal(overhead(z, p, i)));
	json_object_set_new(st, "writes", json_integer(r->st_writes));
	json_object_set_new(st, "bytes_written", json_integer(r->st_bytes));
	json_object_set_new(st, "first_writes", json_integer(r->st_first));
	json_object_set_new(st, "overwrites", json_integer(r->st_over));
	json_object_set_new(st, "zeroed_bytes", json_integer(r->st_zeroed));
	json_object_set_new(st, "allocated_blocks", json_integer(r->st_alloc));
	json_object_set_new(st, "total_blocks", json_integer(r->st_total));
	json_object_set_new(o, "stats", st);
	return o;
}

static int print_json(const struct zexp *z, bool interrupted)
{
	json_t *o = json_object(), *passes = json_array();

	json_object_set_new(o, "command", json_string("zeroing"));
	json_object_set_new(o, "store", json_string(z->tb.store));
	json_object_set_new(o, "mount", json_string(z->tb.mnt));
	json_object_set_new(o, "temporary_store", json_boolean(z->tb.temporary_store));
	json_object_set_new(o, "size", json_integer((json_int_t)z->size));
	json_object_set_new(o, "sector", json_string(z->sector));
	json_object_set_new(o, "block_size", json_integer((json_int_t)z->block));
	json_object_set_new(o, "xfer", json_integer((json_int_t)z->xfer));
	json_object_set_new(o, "qd", json_integer(1));
	json_object_set_new(o, "interrupted", json_boolean(interrupted));
	for (int p = 0; p < 2 && z->res[p][0].ran; p++) {
		json_t *po = json_object(), *imgs = json_array();

		json_object_set_new(po, "pass", json_integer(p + 1));
		json_object_set_new(po, "space", json_string(p == 0 ? "fresh" : "written"));
		for (int i = 0; i < NIMG; i++)
			if (z->res[p][i].ran)
				json_array_append_new(imgs, result_json(z, p, i));
		json_object_set_new(po, "images", imgs);
		json_array_append_new(passes, po);
	}
	json_object_set_new(o, "passes", passes);
	return bench_json_print(o);
}

static int exec_zeroing(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 's' }, { "mount", required_argument, NULL, 'm' },
		{ "xfer", required_argument, NULL, 'x' }, { "block-size", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 'z' }, { "sector", required_argument, NULL, 'f' },
		{ "daemon", required_argument, NULL, 'd' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const struct tool_cmd *cmd = &bench_cmd_zeroing;
	struct zexp z = { .xfer = 32768, .block = 1 << 20, .size = 256 << 20, .sector = "512n", .fd = -1,
			 .store_fd = -1 };
	const char *store = NULL, *mnt = NULL, *daemon = NULL;
	bool json = false, interrupted = false;
	char sc[256], sz[32], bs[32];
	int c, rc = 1, r = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': store = optarg; break;
		case 'm': mnt = optarg; break;
		case 'd': daemon = optarg; break;
		case 'f': z.sector = optarg; break;
		case 'x': if (bench_parse_size(cmd, "--xfer", optarg, &z.xfer) < 0) return 1; break;
		case 'b': if (bench_parse_size(cmd, "--block-size", optarg, &z.block) < 0) return 1; break;
		case 'z': if (bench_parse_size(cmd, "--size", optarg, &z.size) < 0) return 1; break;
		case 'j': json = true; break;
		case 'h':
			printf("usage: " BENCH_PROG " zeroing %s\n\n%s", cmd->usage, help);
			return 0;
		default:
			return bench_bad_option(cmd, c, argv);
		}
	}
	if (optind != argc)
		return bench_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (store && mnt)
		return bench_usage_error(cmd, "--store and --mount exclude each other");
	if (strcmp(z.sector, "512n") && strcmp(z.sector, "512e") && strcmp(z.sector, "4kn"))
		return bench_usage_error(cmd, "--sector must be 512n, 512e or 4kn");
	if (z.xfer % 512 || (strcmp(z.sector, "4kn") == 0 && z.xfer % 4096))
		return bench_usage_error(cmd, "--xfer must be a multiple of the logical sector (%s)", z.sector);
	if (!sfs_is_pow2(z.block) || z.block < 4096 || z.block > (64u << 20))
		return bench_usage_error(cmd, "--block-size must be a power of two from 4K to 64M");
	if (z.size % z.xfer || z.size % z.block)
		return bench_usage_error(cmd, "--size must be a multiple of --xfer and of --block-size");

	tool_catch_signals();
	bench_progress_init(&z.prog);
	if (!(z.buf = bench_buf_alloc(z.xfer, 4096)))
		return 1;
	if (testbed_open(&z.tb, store, mnt, daemon) < 0)
		goto out;
	if ((z.store_fd = open(z.tb.store, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		bench_error("%s: %s", z.tb.store, strerror(errno));
		goto out;
	}
	sfs_format_size(z.size, sz, sizeof(sz));
	sfs_format_size(z.block, bs, sizeof(bs));
	for (int i = 0; i < NIMG; i++) {
		snprintf(z.names[i], sizeof(z.names[i]), "bench-%s-%s", prov_of(i), offload_of(i) ? "on" : "off");
		snprintf(sc, sizeof(sc), "{ \"size\": \"%s\", \"sector\": \"%s\", \"provisioning\": \"%s\", "
			 "\"block_size\": \"%s\", \"zero_offload\": %s }\n", sz, z.sector, prov_of(i), bs,
			 offload_of(i) ? "true" : "false");
		if (testbed_declare(&z.tb, z.names[i], sc) < 0)
			goto out;
	}
	/* The baselines first: cut short by Ctrl-C, what ran can still be compared with them. */
	for (int p = 0; p < 2 && !r; p++)
		for (int k = 0; k < NIMG && !r; k++)
			r = run_one(&z, p, (k + 4) % NIMG);
	bench_progress_clear(&z.prog);
	interrupted = r == 1;
	if (r >= 0)
		rc = 0;
	if (z.res[0][4].ran)
		rc |= json ? print_json(&z, interrupted) : (print_text(&z), 0);
	fflush(stdout);
	if (interrupted) {
		bench_error("interrupted: the figures cover the writes done so far");
		rc = rc ? rc : BENCH_EXIT_INTERRUPTED;
	}
out:
	if (z.store_fd >= 0)
		close(z.store_fd);
	if (testbed_close(&z.tb) < 0)
		rc = 1;
	free(z.buf);
	return rc;
}
