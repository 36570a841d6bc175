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
 * difference vanishes.
 *
 * The whole experiment runs --repeat times (5 by default), each repeat on
 * six new images, the six configurations interleaved (one after the
 * other, in an order that turns by one each repeat), so that a drift of
 * the host touches every configuration alike.  For each image and pass:
 * the medians of IOPS, MB/s, mean and p99 write latency; the overhead
 * against the one baseline (extra time per write, in %, and the change
 * of IOPS); the spread; the daemon's own count of first writes and
 * zeroed bytes (the change in MNT/.stats/NAME.json over the pass).
 *
 * The overhead is not taken from the mean time per write, which a few
 * stalls of a busy host move, but from the typical time per write of a
 * block of k = block/xfer writes: one write that starts the block (the
 * one that zeroes the rest of it) and k-1 others,
 *
 *     typical = (median(block-starting writes) + (k-1) median(others)) / k
 *
 * each median over every repeat, against the same figure of every
 * eagerzeroedthick run of the pass, offload on and off together.  One
 * baseline, so that two runs on the same host tell the same story.  The
 * spread is the range, over the repeats, of each repeat's typical time
 * per write, against their median.  (The latencies kept are those of the
 * first 65536 writes of each image.)  With --profile the images are timed
 * by a device profile and the figures are the modelled drive's.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "util/units.h"
#include "zeroing.h"

static const char zeroing_help[] =
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
	"  --repeat N         run everything N times, interleaved, and report medians and\n"
	"                     spread (default 5, at most 20)\n"
	"  --profile P        the images' device profile (a shipped name or a path):\n"
	"                     the figures of that drive rather than of the host\n"
	"  --svg FILE         also draw the figures as an SVG chart (IOPS per configuration\n"
	"                     and pass, labelled with the overhead)\n"
	"  --daemon PATH      the sectorfs daemon (default: ../fs/sectorfs next to this\n"
	"                     program, else sectorfs in PATH)\n"
	"  --json             one JSON object with every figure\n"
	"  -h, --help         this help\n";

/* The experiment; res.tb is the target's testbed. */
struct zexp {
	struct zeroing_result res;
	int store_fd;                   /* the store directory, for syncfs() */
	/* the image being written */
	int fd, rep, pass, img, err;
	_Atomic uint64_t done;          /* bytes written of it, for the progress line */
	void *buf;
	struct tool_progress prog;
};

static void zeroing_worker(struct bench_run *r, unsigned idx, void *arg)
{
	struct zexp *z = arg;
	struct zeroing_image *res = &z->res.img[z->rep][z->pass][z->img];
	uint64_t off = 0, t0;
	ssize_t n;

	while (off < z->res.size && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		t0 = sfs_now_ns();
		n = pwrite(z->fd, z->buf, z->res.xfer, (off_t)off);
		if (n != (ssize_t)z->res.xfer) {
			z->err = n < 0 ? errno : EIO;
			if (n > 0)
				res->bytes += (uint64_t)n;
			return;
		}
		t0 = sfs_now_ns() - t0;
		bench_hist_add(&res->lat, t0);
		if (off % z->res.block == 0 || off / z->res.block != (off + z->res.xfer - 1) / z->res.block) {
			bench_hist_add(&res->lat_new, t0);
			if (res->nnew + res->nover < ZEROING_MAX_WRITES)
				res->new_us[res->nnew++] = (float)((double)t0 / 1e3);
		} else if (res->nnew + res->nover < ZEROING_MAX_WRITES) {
			res->over_us[res->nover++] = (float)((double)t0 / 1e3);
		}
		res->writes++;
		res->bytes += z->res.xfer;
		off += z->res.xfer;
		atomic_store_explicit(&z->done, off, memory_order_relaxed);
	}
	res->done = off >= z->res.size;
}

static void zeroing_tick(struct bench_run *r, void *arg)
{
	struct zexp *z = arg;
	uint64_t done = atomic_load_explicit(&z->done, memory_order_relaxed);

	tool_progress_draw(&z->prog, "zeroing: repeat %d of %u, pass %d, %s, offload %s: %3.0f %%",
			   z->rep + 1, z->res.repeat, z->pass + 1,
			   zeroing_prov(z->img), zeroing_offload(z->img) ? "on" : "off",
			   100.0 * (double)done / (double)z->res.size);
}

/* A top-level integer of MNT/.stats/NAME.json (json loaded), 0 when missing. */
static json_int_t key(json_t *j, const char *k)
{
	return json_integer_value(json_object_get(j, k));
}

/* The daemon's counters of the pass into res (before and after are dropped). */
static void take_stats(struct zeroing_image *res, json_t *before, json_t *after)
{
	res->st_writes = key(after, "writes") - key(before, "writes");
	res->st_bytes = key(after, "bytes_written") - key(before, "bytes_written");
	res->st_first = key(after, "first_writes") - key(before, "first_writes");
	res->st_over = key(after, "overwrites") - key(before, "overwrites");
	res->st_zeroed = key(after, "zeroed_bytes") - key(before, "zeroed_bytes");
	res->st_alloc = key(after, "allocated_blocks");
	res->st_total = key(after, "total_blocks");
	json_decref(before);
	json_decref(after);
}

/* Wait until the daemon has zeroed image i (eagerzeroedthick, in the background): 0, -1 on
 * errors (printed).  A daemon whose stats have no "zeroing" key zeroed it at the lookup. */
static int wait_zeroed(struct zexp *z, int i)
{
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	json_t *j;
	bool running;

	do {
		if (!(j = testbed_stats(z->res.tb, z->res.names[z->rep][i])))
			return -1;
		running = strcmp(json_string_value(json_object_get(j, "zeroing")) ?: "", "running") == 0;
		json_decref(j);
	} while (running && !tool_interrupted && nanosleep(&tick, NULL) == 0);
	return 0;
}

/* Write image i of repeat rep once; 0, 1 when interrupted, -1 on errors (printed). */
static int run_one(struct zexp *z, int rep, int pass, int i)
{
	struct zeroing_image *res = &z->res.img[rep][pass][i];
	const char *name = z->res.names[rep][i];
	struct bench_run r = { .nthreads = 1, .worker = zeroing_worker, .arg = z, .tick = zeroing_tick };
	struct bench_disk d;
	char path[PATH_MAX + 80];
	json_t *before, *after;

	testbed_path(z->res.tb, name, path, sizeof(path));
	if (bench_disk_open(&d, path, O_RDWR) < 0)      /* an eager image starts zeroing here */
		return -1;
	z->rep = rep;
	if (pass == 0 && wait_zeroed(z, i) < 0) {
		bench_disk_close(&d);
		return -1;
	}
	if (!(before = testbed_stats(z->res.tb, name))) {
		bench_disk_close(&d);
		return -1;
	}
	z->fd = d.fd;
	z->rep = rep;
	z->pass = pass;
	z->img = i;
	z->err = 0;
	atomic_store(&z->done, 0);
	bench_hist_init(&res->lat);
	bench_hist_init(&res->lat_new);
	free(res->new_us);
	free(res->over_us);
	res->nnew = res->nover = 0;
	res->new_us = malloc(ZEROING_MAX_WRITES * sizeof(*res->new_us));
	res->over_us = malloc(ZEROING_MAX_WRITES * sizeof(*res->over_us));
	if (!res->new_us || !res->over_us) {
		bench_disk_close(&d);
		tool_error("out of memory");
		return -1;
	}
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
	if (!(after = testbed_stats(z->res.tb, name))) {
		json_decref(before);
		return -1;
	}
	take_stats(res, before, after);
	if (z->err) {
		tool_progress_clear(&z->prog);
		tool_error("%s: write failed: %s", path, strerror(z->err));
		return -1;
	}
	return r.interrupted ? 1 : 0;
}

enum {
	ZEROING_XFER, ZEROING_BLOCK, ZEROING_SIZE, ZEROING_SECTOR, ZEROING_REPEAT, ZEROING_PROFILE,
};
static const struct tool_opt zeroing_opts[] = {
	[ZEROING_XFER] = { "xfer", 0, TOOL_SIZE, .min = 1, .def = "32K" },
	[ZEROING_BLOCK] = { "block-size", 0, TOOL_SIZE, .min = 1, .def = "1M" },
	[ZEROING_SIZE] = { "size", 0, TOOL_SIZE, .min = 1, .def = "256M" },
	[ZEROING_SECTOR] = { "sector", 0, TOOL_STRING, .def = "512n" },
	[ZEROING_REPEAT] = { "repeat", 0, TOOL_UINT, 1, ZEROING_MAX_REPEAT, .def = "5" },
	[ZEROING_PROFILE] = { "profile", 0, TOOL_STRING },
	{ NULL },
};

/* The parameters of the experiment, in item->data (struct zexp). */
static int check_zeroing(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct zeroing_result *z = &((struct zexp *)item->data)->res;
	int rc;

	z->xfer = o[ZEROING_XFER].n;
	z->block = o[ZEROING_BLOCK].n;
	z->size = o[ZEROING_SIZE].n;
	z->sector = o[ZEROING_SECTOR].arg;
	z->repeat = (unsigned)o[ZEROING_REPEAT].n;
	z->profile = o[ZEROING_PROFILE].set ? o[ZEROING_PROFILE].arg : NULL;
	if (z->profile && (strchr(z->profile, '"') || strchr(z->profile, '\\') || strlen(z->profile) > 200))
		return tool_usage_error(self, "--profile: a profile name or a path without quotes");
	if ((rc = bench_check_testbed(self, item)))
		return rc;
	if (strcmp(z->sector, "512n") && strcmp(z->sector, "512e") && strcmp(z->sector, "4kn"))
		return tool_usage_error(self, "--sector must be 512n, 512e or 4kn");
	if (z->xfer % 512 || (strcmp(z->sector, "4kn") == 0 && z->xfer % 4096))
		return tool_usage_error(self, "--xfer must be a multiple of the logical sector (%s)", z->sector);
	if (!sfs_is_pow2(z->block) || z->block < 4096 || z->block > (64u << 20))
		return tool_usage_error(self, "--block-size must be a power of two from 4K to 64M");
	if (z->size % z->xfer || z->size % z->block)
		return tool_usage_error(self, "--size must be a multiple of --xfer and of --block-size");
	return 0;
}

/* Declare the six images of repeat rep in the store (testbed_repeats; a path profile made
 * absolute: the daemon reads it from the store); -1 (printed). */
static int declare(struct testbed *tb, void *arg, unsigned rep)
{
	struct zexp *z = arg;
	char sc[600], size[32], block[32], prof[400] = "";

	sfs_format_size(z->res.size, size, sizeof(size));
	sfs_format_size(z->res.block, block, sizeof(block));
	if (z->res.profile) {
		char *abs = strchr(z->res.profile, '/') ? realpath(z->res.profile, NULL) : NULL;

		snprintf(prof, sizeof(prof), ", \"profile\": \"%s\"", abs ? abs : z->res.profile);
		free(abs);
	}
	for (int i = 0; i < ZEROING_NIMG; i++) {
		char *name = z->res.names[rep][i];

		if (z->res.repeat == 1)
			snprintf(name, 64, "bench-%s-%s", zeroing_prov(i), zeroing_offload(i) ? "on" : "off");
		else
			snprintf(name, 64, "bench-%s-%s-%u", zeroing_prov(i), zeroing_offload(i) ? "on" : "off",
				 rep + 1);
		snprintf(sc, sizeof(sc), "{ \"size\": \"%s\", \"sector\": \"%s\", \"provisioning\": \"%s\", "
			 "\"block_size\": \"%s\", \"zero_offload\": %s%s }\n", size, z->res.sector,
			 zeroing_prov(i), block, zeroing_offload(i) ? "true" : "false", prof);
		if (testbed_declare(tb, name, sc) < 0)
			return -1;
	}
	return 0;
}

/* Both passes over every image of repeat rep (testbed_repeats): the baselines first in the first
 * repeat (cut short, what ran compares with them), then the order turns by one each repeat;
 * 0, 1 when interrupted, -1 (printed). */
static int run_repeat(void *arg, unsigned rep)
{
	int r = 0;

	for (int p = 0; p < 2 && !r; p++)
		for (int k = 0; k < ZEROING_NIMG && !r; k++)
			r = run_one(arg, (int)rep, p, (k + 4 + (int)rep) % ZEROING_NIMG);
	return r;
}

/* Every repeat, then the figures; the exit status. */
static int run_passes(struct zexp *z, struct testbed *tb, const struct tool_item *item)
{
	int r = testbed_repeats(tb, z->res.repeat, &z->res.nrep, declare, run_repeat, z);

	return bench_end(&z->prog, r, &z->res.interrupted, &zeroing_figures, &z->res, item);
}

static int exec_zeroing(const struct tool_cmd *self, struct tool_item *item)
{
	struct testbed *tb = &((struct bench_target *)item->target)->tb;
	struct zexp *z = item->data;
	int rc = 1;

	(void)self;
	z->res.tb = tb;
	z->fd = -1;
	bench_begin(&z->prog);
	if (!(z->buf = bench_buf_alloc(z->res.xfer, 4096)))
		return 1;
	if ((z->store_fd = open(tb->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		tool_error("%s: %s", tb->store, strerror(errno));
	else
		rc = run_passes(z, tb, item);
	if (z->store_fd >= 0)
		close(z->store_fd);
	for (unsigned r = 0; r < ZEROING_MAX_REPEAT; r++)
		for (int p = 0; p < 2; p++)
			for (int i = 0; i < ZEROING_NIMG; i++)
			{
				free(z->res.img[r][p][i].new_us);
				free(z->res.img[r][p][i].over_us);
			}
	free(z->buf);
	return rc;
}

TOOL_CMD(bench_cmd_zeroing, "zeroing", "[--store DIR | --mount MNT] [options]",
	 "first-write cost of thin / zeroedthick / eagerzeroedthick, zero offload on and off",
	 .help = zeroing_help, .opts = zeroing_opts, .target = BENCH_TARGET_TESTBED,
	 .shared = { bench_opts_testbed, bench_opts_daemon, bench_opts_json, bench_opts_svg },
	 .data_size = sizeof(struct zexp), .check = check_zeroing, .exec = exec_zeroing);
