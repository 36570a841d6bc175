/* SPDX-License-Identifier: MIT */
/*
 * crash.c - sectorfs-bench crash: the crash explorer.
 *
 * What CrashMonkey and ALICE do for file systems and system calls, here
 * for any program over a real disk format.  The user gives a workload
 * (a command that writes to the disk: a database, a file system over a
 * loop device, a script) and a check (a command that says whether what
 * is on the disk after a crash is acceptable: fsck, a database's
 * integrity check, a script that compares the disk with the workload's
 * log of what it was told is durable).  The explorer
 *
 *   1. reads the image into a snapshot (crash_image.c);
 *   2. dry run: runs the workload on a fresh copy without a cut, counts
 *      its writes and flushes and times it, and runs the check, which
 *      must pass;
 *   3. samples --points crash points from --seed (crash_sample.c): K-th
 *      writes and flushes spread over the run, times within the dry
 *      run's length, and the end;
 *   4. runs a round for each (crash_round.c): a fresh copy, the workload
 *      cut at the point, power on, the check;
 *   5. reports every point whose check failed, with the SEED:TRIGGER that
 *      runs it alone (--replay), and a summary line (crash_report.c).
 *
 * Why a command of sectorfs-bench and not a program of its own: it is one
 * more workload driver over a served image, with what the bench's table
 * gives every command (typed options, --help, the progress line,
 * Ctrl-C, --json); a program of its own would repeat that, and add a
 * manual page and a package entry, for no gain to the user.
 *
 * Exit status: 0 when every point's check passed, 2 when some failed
 * (for a script: "the explorer found something"), 1 on errors, 130 when
 * interrupted (after printing what ran).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crash.h"
#include "testbed.h"

static const char crash_help[] =
	"Run WORKLOAD over a copy of IMAGE (a file of a sectorfs mount: MNT/NAME) again and\n"
	"again, cut the disk's power at sampled points, power it on and run CHECK; report\n"
	"every crash point whose check failed, with the SEED:TRIGGER that replays it alone.\n"
	"IMAGE itself is never written: each round gets a fresh copy, declared beside it in\n"
	"its store (NAME.crash-XXXXXX-ROUND) and removed when the round ends.\n\n"
	"  --workload CMD      what writes to the disk (run by sh -c); it finds the disk in\n"
	"                      $SECTORFS_CRASH_DISK and a scratch directory outside it, shared\n"
	"                      with the check of its round, in $SECTORFS_CRASH_DIR\n"
	"  --check CMD         exit 0 when the disk is acceptable after the crash (sh -c)\n"
	"  --loop              give both a loop device over the copy (the image's logical\n"
	"                      sector, direct I/O), for a file system; needs root.  The file\n"
	"                      systems the workload mounted on it are unmounted at the cut\n"
	"  --points N          crash points to try (default 20)\n"
	"  --on KINDS          where to cut, comma-separated (default writes,flushes,end):\n"
	"                      writes (after the K-th write), flushes (after the K-th\n"
	"                      flush), seconds (at a time into the workload), end (once it\n"
	"                      has exited)\n"
	"  --seed N            the seed of the sample and of each cut (default 1)\n"
	"  --policy P          the cuts' policy: lose-all, keep-all, random, random:P\n"
	"                      (default: the image's power_cut_policy)\n"
	"  --replay SEED:TRIGGER  run that one crash point, e.g. 42:cut-after-writes:17\n"
	"  --timeout SECONDS   longest a workload or check may run (default 300)\n"
	"  --time-limit SECONDS  start no round after this long; report what ran\n"
	"  --keep-failing      leave the image of each failing round served, powered on,\n"
	"                      as the check saw it, for a look (remove it with rm MNT/NAME)\n"
	"  --json              one JSON object with every point\n"
	"  -h, --help          this help\n\n"
	"Exit status: 0 every check passed, 2 some crash point failed, 1 an error, 130\n"
	"interrupted.  The image needs \"write_cache\": \"volatile\" in its sidecar, or a cut\n"
	"loses nothing.\n";

enum {
	CR_WORKLOAD, CR_CHECK, CR_LOOP, CR_POINTS, CR_ON, CR_SEED, CR_POLICY, CR_REPLAY, CR_TIMEOUT,
	CR_TIME_LIMIT, CR_KEEP,
};
static const struct tool_opt crash_opts[] = {
	[CR_WORKLOAD] = { "workload", 0, TOOL_STRING },
	[CR_CHECK] = { "check", 0, TOOL_STRING },
	[CR_LOOP] = { "loop", 0, TOOL_FLAG },
	[CR_POINTS] = { "points", 0, TOOL_UINT, 1, CRASH_MAX_POINTS, .def = "20" },
	[CR_ON] = { "on", 0, TOOL_STRING, .def = "writes,flushes,end" },
	[CR_SEED] = { "seed", 0, TOOL_STRING, .def = "1" },
	[CR_POLICY] = { "policy", 0, TOOL_STRING },
	[CR_REPLAY] = { "replay", 0, TOOL_STRING },
	[CR_TIMEOUT] = { "timeout", 0, TOOL_SECONDS, .def = "300" },
	[CR_TIME_LIMIT] = { "time-limit", 0, TOOL_SECONDS },
	[CR_KEEP] = { "keep-failing", 0, TOOL_FLAG },
	{ NULL },
};

/* The options, in item->data (struct crash). */
static int check_crash(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct crash *c = item->data;
	char list[128], *tok, *save = NULL;
	int rc;

	if (!o[CR_WORKLOAD].set || !o[CR_CHECK].set)
		return tool_usage_error(self, "--workload CMD and --check CMD are both required");
	if (!*o[CR_WORKLOAD].arg || !*o[CR_CHECK].arg)
		return tool_usage_error(self, "--workload and --check must not be empty");
	c->workload = o[CR_WORKLOAD].arg;
	c->check = o[CR_CHECK].arg;
	c->loop = o[CR_LOOP].set;
	c->json = tool_opt_set(item, "json");
	c->keep_failing = o[CR_KEEP].set;
	c->npoints = (unsigned)o[CR_POINTS].n;
	c->timeout = o[CR_TIMEOUT].secs;
	c->time_limit = o[CR_TIME_LIMIT].set ? o[CR_TIME_LIMIT].secs : 0;
	c->policy = o[CR_POLICY].set ? o[CR_POLICY].arg : NULL;
	if ((rc = bench_parse_seed(self, o[CR_SEED].arg, &c->seed)) ||
	    (c->policy && (rc = bench_check_policy(self, c->policy))))
		return rc;
	if (strlen(o[CR_ON].arg) >= sizeof(list))
		return tool_usage_error(self, "--on: too long");
	snprintf(list, sizeof(list), "%s", o[CR_ON].arg);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 1; k < CRASH_NKINDS && strcmp(tok, crash_kind_names[k]); k++)
			;
		if (k == CRASH_NKINDS)
			return tool_usage_error(self, "--on: '%s' is not writes, flushes, seconds or end", tok);
		c->kinds[k] = true;
	}
	if (!c->kinds[CRASH_WRITES] && !c->kinds[CRASH_FLUSHES] && !c->kinds[CRASH_SECONDS] && !c->kinds[CRASH_END])
		return tool_usage_error(self, "--on: name at least one of writes, flushes, seconds, end");
	if (o[CR_REPLAY].set) {
		struct crash_point p;

		if (crash_parse_point(o[CR_REPLAY].arg, &p) < 0)
			return tool_usage_error(self, "--replay wants SEED:TRIGGER as a report gives it (42:cut-after-writes:17, "
						"42:cut-after-flushes:3, 42:cut-after-seconds:1.500, 42:cut-at-end), not '%s'",
						o[CR_REPLAY].arg);
		c->replay = true;
		if (!(c->pts = calloc(1, sizeof(*c->pts)))) {
			tool_error("out of memory");
			return 1;
		}
		*c->pts = p;
	}
	return 0;
}

/* The crash points, from the dry run's counts and the seed, into c->pts; -1 (printed). */
static int sample(struct crash *c)
{
	if (!(c->pts = calloc(c->npoints, sizeof(*c->pts)))) {
		tool_error("out of memory");
		return -1;
	}
	c->npts = crash_sample(c->kinds, c->dry.writes, c->dry.flushes, c->dry.workload_secs, c->npoints,
			       c->seed, c->pts);
	if (!c->npts) {
		tool_error("no crash point to try: the workload made %lld writes and %lld flushes in its dry "
			   "run (--on %s%s%s%s)", c->dry.writes, c->dry.flushes,
			   c->kinds[CRASH_WRITES] ? "writes," : "", c->kinds[CRASH_FLUSHES] ? "flushes," : "",
			   c->kinds[CRASH_SECONDS] ? "seconds," : "", c->kinds[CRASH_END] ? "end" : "");
		return -1;
	}
	return 0;
}

/* The dry run, which must run clean; 0, 1 interrupted, -1 (printed). */
static int dry_run(struct crash *c)
{
	struct crash_point *p = &c->dry;
	int r;

	c->round = 0;
	if ((r = crash_round(c, p)) != 0)
		return r;
	tool_progress_clear(&c->prog);
	if (p->workload_status || p->workload_timeout) {
		char out[PATH_MAX + 32], tail[CRASH_TAIL_LEN];
		size_t n = 0;
		FILE *f;

		snprintf(out, sizeof(out), "%s/workload.out", c->tmp);
		if ((f = fopen(out, "re"))) {
			if (fseek(f, -(long)sizeof(tail) + 1, SEEK_END) < 0)
				rewind(f);
			n = fread(tail, 1, sizeof(tail) - 1, f);
			fclose(f);
		}
		tail[n] = '\0';
		if (p->workload_timeout)
			tool_error("the workload fails without a power cut: it ran longer than %.0f s (--timeout) "
				   "and was killed%s", c->timeout, n ? "; its output ends:" : ", saying nothing");
		else
			tool_error("the workload fails without a power cut (exit status %d)%s", p->workload_status,
				   n ? "; its output ends:" : ", saying nothing");
		if (n)
			fprintf(stderr, "%s%s", tail, tail[n - 1] != '\n' ? "\n" : "");
		return -1;
	}
	if (p->failed) {
		if (p->check_timeout)
			tool_error("the check fails without a power cut: %s", p->why);
		else
			tool_error("the check fails without a power cut (exit status %d)%s", p->check_status,
				   p->tail[0] ? "; its output ends:" : ", saying nothing");
		if (p->tail[0])
			fprintf(stderr, "%s%s", p->tail, p->tail[strlen(p->tail) - 1] != '\n' ? "\n" : "");
		return -1;
	}
	return 0;
}

/* Every point's round, the time limit permitting; 0, 1 interrupted, -1 (printed). */
static int explore(struct crash *c)
{
	for (unsigned i = 0; i < c->npts; i++) {
		int r;

		if (c->time_limit && (double)(sfs_now_ns() - c->t0) / 1e9 >= c->time_limit) {
			c->time_up = true;
			break;
		}
		c->round = i + 1;
		if ((r = crash_round(c, &c->pts[i])) != 0)
			return r;
		c->nran++;
		c->nfailed += c->pts[i].failed;
	}
	return 0;
}

static int run(struct crash *c, const char *image)
{
	const char *tmpdir = getenv("TMPDIR");
	int r;

	if (crash_image_find(c, image) < 0)
		return -1;
	if (strcmp(c->img.write_cache, "volatile") != 0)
		tool_cmd_error(&bench_cmd_crash, "note: %s has no volatile write cache (write_cache %s): every "
			       "completed write is durable, a cut only stops the disk", image, c->img.write_cache);
	snprintf(c->tmp, sizeof(c->tmp), "%s/sectorfs-crash.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(c->tmp)) {
		tool_error("cannot make a temporary directory %s: %s", c->tmp, strerror(errno));
		c->tmp[0] = '\0';
		return -1;
	}
	if (crash_image_snapshot(c) < 0)
		return tool_interrupted ? 1 : -1;
	if (c->replay) {
		c->round = 1;
		c->npts = 1;
		if ((r = crash_round(c, &c->pts[0])) == 0) {
			c->nran = 1;
			c->nfailed = c->pts[0].failed;
		}
		return r;
	}
	if ((r = dry_run(c)) != 0)
		return r;
	if (sample(c) < 0)
		return -1;
	return explore(c);
}

static int exec_crash(const struct tool_cmd *self, struct tool_item *item)
{
	struct crash *c = item->data;
	int r, rc;

	(void)self;
	c->lo.fd = -1;
	c->img.snap = -1;
	c->t0 = sfs_now_ns();
	/* what the commands leave running is reparented to us, to be waited for */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	bench_begin(&c->prog);
	r = run(c, item->args[0]);
	c->interrupted = r == 1 || tool_interrupted;
	if (crash_round_end(c, false) < 0)
		r = -1;
	tool_progress_clear(&c->prog);
	rc = r < 0 ? 1 : 0;
	if (c->nran || c->npts) {               /* not after a dry run that failed */
		if (c->json)
			rc |= crash_print_json(c);
		else
			crash_print_text(c);
		fflush(stdout);
	}
	crash_image_close(c);
	if (c->tmp[0] && testbed_rm_tree(c->tmp) < 0)
		tool_error("cannot remove %s: %s", c->tmp, strerror(errno));
	for (unsigned i = 0; i < c->npts; i++)
		json_decref(c->pts[i].lba);
	json_decref(c->dry.lba);
	free(c->pts);
	if (c->interrupted && !c->npts && !c->replay)
		return bench_interrupted(rc, " in the dry run; everything it made is undone");
	if (c->interrupted)
		return bench_interrupted(rc, ": %u of %u crash points ran", c->nran, c->npts);
	if (rc)
		return rc;
	return c->nfailed ? 2 : 0;
}

TOOL_CMD(bench_cmd_crash, "crash", "--workload CMD --check CMD [options] IMAGE",
	 "crash explorer: cut the power at sampled points of a workload, check the disk after each",
	 .help = crash_help, .opts = crash_opts, .shared = { bench_opts_json }, .args = { "IMAGE" },
	 .data_size = sizeof(struct crash), .check = check_crash, .exec = exec_crash);
