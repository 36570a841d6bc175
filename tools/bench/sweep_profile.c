/* SPDX-License-Identifier: MIT */
/*
 * sweep_profile.c - a device profile from a sweep (--profile-out) and the
 * replay check that compares a sweep with another one (--compare).
 *
 * The profile (model.h, sectorfs.json(5)) takes:
 *   read / write curve   the QD1 median latency of each size the disk took
 *                        (refused sizes have no point); the median, not the
 *                        mean, so that a few stalls of a busy host do not
 *                        become the drive's service time
 *   channels             the best 4 KiB IOPS of queue depths 1, 2, 4 .. 32
 *                        times the curve's 4 KiB time (sfs_profile_channels_for):
 *                        the channels at which the model, serving each
 *                        request for that time, reaches that best; reads
 *                        when they were measured, else writes
 *   flush_us             the median fdatasync after a 4 KiB write
 *   zero_offload_mb_s    the write rate at the largest size: a WRITE SAME
 *                        is not measured, it is taken to zero at media rate
 *   rotational           /sys/dev/block/M:m/queue/rotational of a block device
 *
 * The replay check: this run (an image with the profile) against the
 * source's sweep (--json), size by size and direction by direction.  Where
 * the source's mean latency is above the floor (the same sweep of an image
 * without a profile, through the same mount: what the FUSE round trip and
 * the backing store cost by themselves) the two must agree within the
 * tolerance; where it is below, the replay cannot be as fast as the
 * source, and it says so rather than failing.  The model holds a request
 * from the moment the daemon has it, so the replay's latency is the
 * profile's plus what the floor costs outside the daemon (the FUSE round
 * trip, copying the data through /dev/fuse): a replay within the
 * tolerance of the source plus the floor agrees too, and says so.  (A
 * source that is itself a sectorfs image carries the floor already.)
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "sweep.h"
#include "util/units.h"

static bool rotational(const struct bench_disk *d)
{
	char path[128];
	struct stat st;
	FILE *f;
	int c = '0';

	if (!d->blockdev || fstat(d->fd, &st) < 0)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational", major(st.st_rdev),
		 minor(st.st_rdev));
	if ((f = fopen(path, "r"))) {
		c = fgetc(f);
		fclose(f);
	}
	return c == '1';
}

/* The name a profile file goes by (its base name without ".json"), "measured" for none. */
static void file_name(const char *file, char *out, size_t len)
{
	sfs_profile_file_name(file, out, len);
	if (!out[0])
		snprintf(out, len, "measured");
}

int sweep_profile_write(const struct sweep_result *s, const struct sweep_chan *ch, unsigned nch,
			double flush_us, const char *file)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1, .flush_us = flush_us };
	double big_w = 0, best = 0;
	bool use_read = false;
	char source[512], when[32], host[64] = "";
	time_t now = time(NULL);
	char *text;
	FILE *f;

	for (unsigned i = 0; i < s->ntests; i++) {
		const struct sweep_test *t = &s->tests[i];
		struct sfs_profile_point *pts = t->write ? p.write : p.read;
		unsigned *n = t->write ? &p.nwrite : &p.nread;

		if (t->st != ST_OK || !t->ios || *n == SFS_PROFILE_MAX_POINTS)
			continue;
		pts[(*n)++] = (struct sfs_profile_point){ t->xfer, bench_hist_pct_us(&t->lat, 50) };
		if (t->write && t->secs > 0)
			big_w = (double)t->bytes / t->secs / 1e6;
	}
	/* a direction not measured takes the other's curve: the profile needs both */
	if (!p.nread && p.nwrite) {
		memcpy(p.read, p.write, sizeof(p.read));
		p.nread = p.nwrite;
	}
	if (!p.nwrite && p.nread) {
		memcpy(p.write, p.read, sizeof(p.write));
		p.nwrite = p.nread;
	}
	if (!p.nread) {
		tool_error("%s: no size was measured: no profile written", s->d->path);
		return 1;
	}
	for (unsigned i = 0; i < nch; i++)
		use_read |= ch[i].read_iops > 0;
	for (unsigned i = 0; i < nch; i++) {
		double v = use_read ? ch[i].read_iops : ch[i].write_iops;

		if (v > best)
			best = v;
	}
	p.channels = sfs_profile_channels_for(&p, !use_read, SWEEP_CHAN_XFER, best, nch ? ch[nch - 1].qd : 1);
	p.zero_offload_mb_s = big_w;
	p.rotational = rotational(s->d);
	file_name(file, p.name, sizeof(p.name));
	gethostname(host, sizeof(host) - 1);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(source, sizeof(source),
		 "Measured by sectorfs-bench sweep --profile-out on %s (host %s, %s): QD1 median latency "
		 "per size, channels from 4 KiB %s IOPS at QD 1..32, flush from fdatasync; zeroing "
		 "offload not measured (taken at the largest write's rate).",
		 s->d->path, host, when, use_read ? "read" : "write");
	text = sfs_profile_dump(&p, source);
	if (!text) {
		tool_error("out of memory");
		return 1;
	}
	f = fopen(file, "w");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
		tool_error("%s: %s", file, strerror(errno));
		free(text);
		return 1;
	}
	free(text);
	fprintf(stderr, "%s: profile '%s' written to %s (%u channel%s)\n", BENCH_PROG, p.name, file,
		p.channels, p.channels == 1 ? "" : "s");
	return 0;
}

/* The median QD1 latency (us) of size x, direction dir, in a sweep's JSON; < 0 when not there. */
static double json_lat(json_t *root, uint64_t x, const char *dir)
{
	json_t *res = json_object_get(root, "results"), *row;
	size_t i;

	json_array_foreach(res, i, row) {
		json_t *t;

		if (json_integer_value(json_object_get(row, "size")) != (json_int_t)x)
			continue;
		t = json_object_get(row, dir);
		if (!t || strcmp(json_string_value(json_object_get(t, "status")) ?: "", "ok"))
			return -1;
		return json_number_value(json_object_get(json_object_get(t, "latency"), "p50_us"));
	}
	return -1;
}

/* A sweep's --json output, loaded; NULL (printed) when it cannot be read or is not one. */
static json_t *sweep_json_load(const char *file)
{
	json_error_t je;
	json_t *o = json_load_file(file, 0, &je);

	if (!o)
		tool_error("%s: line %d: %s", file, je.line, je.text);
	else if (!json_is_array(json_object_get(o, "results"))) {
		tool_error("%s: not the --json output of sectorfs-bench sweep", file);
		json_decref(o);
		o = NULL;
	}
	return o;
}

int sweep_compare(const struct sweep_result *s, const char *src_file, const char *floor_file, double tol)
{
	json_t *src = sweep_json_load(src_file), *flo = floor_file ? sweep_json_load(floor_file) : NULL;
	unsigned checked = 0, off = 0, below = 0;
	char a[32];

	if (!src || (floor_file && !flo)) {
		json_decref(src);
		json_decref(flo);
		return 1;
	}
	printf("\nreplay check against %s (median latency per I/O; tolerance %.0f%%%s%s)\n", src_file, tol * 100,
	       flo ? ", floor: " : "", flo ? floor_file : "");
	printf("%9s %6s %12s %12s %12s %8s  %s\n", "transfer", "dir", "source us", "replay us", "floor us",
	       "ratio", "verdict");
	for (unsigned i = 0; i < s->ntests; i++) {
		const struct sweep_test *t = &s->tests[i];
		const char *dir = t->write ? "write" : "read", *verdict;
		double ls = json_lat(src, t->xfer, dir), lf = flo ? json_lat(flo, t->xfer, dir) : 0;
		double lr = bench_hist_pct_us(&t->lat, 50), ratio;

		if (t->st != ST_OK || ls <= 0)
			continue;
		ratio = lr / ls;
		if (lf > 0 && ls <= lf) {
			verdict = "source faster than the floor: cannot be replayed";
			below++;
		} else if (fabs(ratio - 1) <= tol) {
			verdict = "ok";
			checked++;
		} else if (lf > 0 && fabs(lr / (ls + lf) - 1) <= tol) {
			verdict = "ok: the source plus the floor";
			checked++;
		} else {
			verdict = "OFF";
			checked++;
			off++;
		}
		printf("%9s %6s %12.1f %12.1f %12.1f %8.3f  %s\n", tool_fmt_size(t->xfer, TOOL_SIZE_IEC, a, sizeof(a)),
		       dir, ls, lr, lf, ratio, verdict);
	}
	printf("%u compared: %u within %.0f%%, %u off; %u below the floor\n", checked + 0, checked - off,
	       tol * 100, off, below);
	json_decref(src);
	json_decref(flo);
	return off ? 1 : 0;
}
