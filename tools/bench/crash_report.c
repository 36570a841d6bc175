/* SPDX-License-Identifier: MIT */
/*
 * crash_report.c - what the crash explorer found, for people and for
 * programs (crash.h).
 *
 * Text: the image and the dry run, the sample, then one row per crash
 * point whose check failed (its SEED:TRIGGER for --replay, what the cut
 * did: unflushed writes lost, torn, sectors damaged, and the check's last
 * line of output), and last the one-line summary.  JSON: the same, and
 * every point with the end of its check's output when it failed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crash.h"
#include "median.h"

/* The median length of the rounds that ran, in seconds; NAN when none. */
static double round_secs(const struct crash *c)
{
	double v[CRASH_MAX_POINTS];
	unsigned n = 0;

	for (unsigned i = 0; i < c->npts; i++)
		if (c->pts[i].ran)
			v[n++] = c->pts[i].secs;
	return bench_median(v, n);
}

static unsigned count_kind(const struct crash *c, enum crash_kind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->npts; i++)
		n += c->pts[i].kind == k;
	return n;
}

const char *crash_summary(const struct crash *c, char *buf, size_t len)
{
	char t[64] = "";
	double rs = round_secs(c);

	if (rs == rs)
		snprintf(t, sizeof(t), "; %.2f s a round", rs);
	if (c->replay) {
		char trig[64];

		snprintf(buf, len, "crash: replay of %" PRIu64 ":%s: the check %s (policy %s%s)", c->pts[0].seed,
			 crash_trigger(&c->pts[0], trig, sizeof(trig)),
			 !c->nran ? "did not run" : c->nfailed ? "failed" : "passed",
			 c->policy ? c->policy : c->img.policy, t);
	} else {
		char part[96] = "";

		if (c->nran < c->npts)
			snprintf(part, sizeof(part), "; %u of the %u sampled ran (%s)", c->nran, c->npts,
				 c->interrupted ? "interrupted" : "the time limit");
		snprintf(buf, len, "crash: %u of %u crash point%s failed the check%s (seed %" PRIu64 ", policy %s; "
			 "dry run %lld writes, %lld flushes, %.2f s%s)", c->nfailed, c->nran, c->nran == 1 ? "" : "s",
			 part, c->seed, c->policy ? c->policy : c->img.policy, c->dry.writes, c->dry.flushes,
			 c->dry.workload_secs, t);
	}
	return buf;
}

/* "12/0/0 of 12": lost, torn, damaged of the unflushed writes; "-" for unknown. */
static const char *cut_figures(const struct crash_point *p, char *buf, size_t len)
{
	if (p->lost < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld/%lld/%lld of %lld", p->lost, p->torn, p->damaged, p->unflushed);
	return buf;
}

/* What the check said of p, for the table. */
static const char *verdict(const struct crash_point *p, char *buf, size_t len)
{
	if (p->check_timeout)
		snprintf(buf, len, "timed out: %s", p->why);
	else
		snprintf(buf, len, "exit %d%s%.100s", p->check_status, p->why[0] ? ": " : "", p->why);
	return buf;
}

void crash_print_text(const struct crash *c)
{
	char a[64], b[64], d[256], e[400];

	printf("crash explorer on %s: logical sector %u, physical %u, write cache %s, policy %s%s\n",
	       c->img.path, c->img.logical, c->img.physical, c->img.write_cache,
	       c->policy ? c->policy : c->img.policy, c->loop ? "; through a loop device" : "");
	printf("snapshot: %s of data; each round's image %s\n",
	       tool_fmt_size(c->img.snap_bytes, TOOL_SIZE_IEC, a, sizeof(a)),
	       c->img.cloned ? "a reflink of it" : "a copy of that data");
	if (c->replay && c->nran) {
		const struct crash_point *p = &c->pts[0];

		printf("the cut (%s%s): %lld of %lld unflushed writes lost, %lld torn, %lld kept; %lld sectors "
		       "damaged\n", crash_trigger(p, a, sizeof(a)),
		       p->reached || p->kind == CRASH_END ? "" : ", not reached: made as the workload ended",
		       p->lost, p->unflushed, p->torn, p->kept, p->damaged);
		printf("the check: %s\n%s%s", verdict(p, d, sizeof(d)), p->failed ? p->tail : "",
		       p->failed && p->tail[0] && p->tail[strlen(p->tail) - 1] != '\n' ? "\n" : "");
		if (p->kept_image[0])
			printf("kept: %s/%s\n", c->img.mnt, p->kept_image);
		printf("%s\n", crash_summary(c, e, sizeof(e)));
		return;
	}
	if (!c->replay) {
		printf("dry run: %lld writes, %lld flushes in %.2f s; the check passes without a cut\n",
		       c->dry.writes, c->dry.flushes, c->dry.workload_secs);
		printf("%u crash point%s from seed %" PRIu64 ": %u after writes, %u after flushes, %u at times, "
		       "%u at the end\n", c->npts, c->npts == 1 ? "" : "s", c->seed, count_kind(c, CRASH_WRITES),
		       count_kind(c, CRASH_FLUSHES), count_kind(c, CRASH_SECONDS), count_kind(c, CRASH_END));
	}
	if (c->nfailed) {
		printf("\n%u crash point%s failed the check (lost/torn/damaged of the unflushed writes):\n",
		       c->nfailed, c->nfailed == 1 ? "" : "s");
		printf("%5s  %-40s %-18s %s\n", "round", "--replay SEED:TRIGGER", "lost/torn/dam.", "check");
		for (unsigned i = 0; i < c->npts; i++) {
			const struct crash_point *p = &c->pts[i];

			if (!p->failed)
				continue;
			snprintf(e, sizeof(e), "%" PRIu64 ":%s%s", p->seed, crash_trigger(p, a, sizeof(a)),
				 p->reached || p->kind == CRASH_END ? "" : " (not reached)");
			printf("%5u  %-40s %-18s %s\n", i + 1, e, cut_figures(p, b, sizeof(b)),
			       verdict(p, d, sizeof(d)));
			if (p->kept_image[0])
				printf("%5s  kept: %s/%s\n", "", c->img.mnt, p->kept_image);
		}
		printf("\n");
	} else if (c->nran) {
		printf("\nno crash point failed the check\n");
	}
	printf("%s\n", crash_summary(c, e, sizeof(e)));
}

static json_t *jcount(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *jseed(uint64_t s)
{
	char buf[32];

	if (s <= INT64_MAX)
		return json_integer((json_int_t)s);
	snprintf(buf, sizeof(buf), "%" PRIu64, s);
	return json_string(buf);
}

static json_t *point_json(const struct crash_point *p, unsigned round)
{
	json_t *o = json_object();
	char t[64], r[96];

	crash_trigger(p, t, sizeof(t));
	snprintf(r, sizeof(r), "%" PRIu64 ":%s", p->seed, t);
	json_object_set_new(o, "round", json_integer(round));
	json_object_set_new(o, "trigger", json_string(t));
	json_object_set_new(o, "seed", jseed(p->seed));
	json_object_set_new(o, "replay", json_string(r));
	json_object_set_new(o, "ran", json_boolean(p->ran));
	json_object_set_new(o, "reached", json_boolean(p->reached));
	json_object_set_new(o, "failed", json_boolean(p->failed));
	json_object_set_new(o, "check_status", json_integer(p->check_status));
	json_object_set_new(o, "check_timed_out", json_boolean(p->check_timeout));
	json_object_set_new(o, "workload_timed_out", json_boolean(p->workload_timeout));
	json_object_set_new(o, "seconds", bench_jreal(p->secs));
	json_object_set_new(o, "workload_seconds", bench_jreal(p->workload_secs));
	json_object_set_new(o, "writes", jcount(p->writes));
	json_object_set_new(o, "flushes", jcount(p->flushes));
	json_object_set_new(o, "unflushed_writes", jcount(p->unflushed));
	json_object_set_new(o, "kept_writes", jcount(p->kept));
	json_object_set_new(o, "lost_writes", jcount(p->lost));
	json_object_set_new(o, "torn_writes", jcount(p->torn));
	json_object_set_new(o, "damaged_sectors", jcount(p->damaged));
	json_object_set_new(o, "check_says", json_string(p->why));
	if (p->lba)
		json_object_update(o, p->lba);
	if (p->kept_image[0])
		json_object_set_new(o, "kept_image", json_string(p->kept_image));
	if (p->failed)
		json_object_set_new(o, "check_output", json_string(p->tail));
	return o;
}

int crash_print_json(const struct crash *c)
{
	json_t *o = json_object(), *pts = json_array(), *dry = json_object();
	char s[400];

	json_object_set_new(o, "command", json_string("crash"));
	json_object_set_new(o, "image", json_string(c->img.path));
	json_object_set_new(o, "logical_sector", json_integer(c->img.logical));
	json_object_set_new(o, "physical_sector", json_integer(c->img.physical));
	json_object_set_new(o, "write_cache", json_string(c->img.write_cache));
	json_object_set_new(o, "policy", json_string(c->policy ? c->policy : c->img.policy));
	json_object_set_new(o, "loop", json_boolean(c->loop));
	json_object_set_new(o, "workload", json_string(c->workload));
	json_object_set_new(o, "check", json_string(c->check));
	json_object_set_new(o, "seed", jseed(c->seed));
	json_object_set_new(o, "replay", json_boolean(c->replay));
	json_object_set_new(o, "snapshot_bytes", json_integer((json_int_t)c->img.snap_bytes));
	json_object_set_new(o, "reflink", json_boolean(c->img.cloned));
	if (!c->replay) {
		json_object_set_new(dry, "writes", jcount(c->dry.writes));
		json_object_set_new(dry, "flushes", jcount(c->dry.flushes));
		json_object_set_new(dry, "workload_seconds", bench_jreal(c->dry.workload_secs));
		json_object_set_new(dry, "seconds", bench_jreal(c->dry.secs));
		json_object_set_new(o, "dry_run", dry);
	} else {
		json_decref(dry);
	}
	json_object_set_new(o, "points", json_integer(c->npts));
	json_object_set_new(o, "points_ran", json_integer(c->nran));
	json_object_set_new(o, "points_failed", json_integer(c->nfailed));
	json_object_set_new(o, "seconds_per_round", bench_jreal(round_secs(c)));
	json_object_set_new(o, "time_limit_reached", json_boolean(c->time_up));
	json_object_set_new(o, "interrupted", json_boolean(c->interrupted));
	for (unsigned i = 0; i < c->npts; i++)
		if (c->pts[i].ran)
			json_array_append_new(pts, point_json(&c->pts[i], i + 1));
	json_object_set_new(o, "results", pts);
	json_object_set_new(o, "summary", json_string(crash_summary(c, s, sizeof(s))));
	return bench_json_print(o);
}
