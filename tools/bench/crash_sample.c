/* SPDX-License-Identifier: MIT */
/*
 * crash_sample.c - the crash explorer's points (crash.h): which ones a
 * run is sampled at, and their names.
 *
 * The sample.  A dry run made W writes and F flushes in S seconds.  The
 * --points asked go one to the end (when --on has it), the rest to the
 * kinds of count, the kind with the fewest possible points first, each
 * taking its share or all it has, so that what a small kind cannot take
 * goes to the others.  A kind of n points over 1..D is cut into n equal
 * strata, one point drawn in each:
 *
 *     D = 10, n = 3:   [1 2 3][4 5 6][7 8 9 10]   one K from each
 *
 * so the points spread over the whole run, in order, never twice the
 * same, and n >= D takes every K.  Times are drawn the same way over
 * (0, S).  Every draw is sfs_draw(seed, kind, j) (prng.h): the same seed
 * and counts give the same points; point i's own seed, the cut's, is
 * sfs_draw(seed, 0, i), kept to 32 bits to be short to type.
 *
 * The names: "cut-after-writes:K", "cut-after-flushes:K",
 * "cut-after-seconds:T" (to the millisecond) and "cut-at-end", after a
 * seed and a colon: what --replay takes and a report prints.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "util/prng.h"

const char *const crash_kind_names[CRASH_NKINDS] = {
	[CRASH_NONE] = "none", [CRASH_WRITES] = "writes", [CRASH_FLUSHES] = "flushes", [CRASH_SECONDS] = "seconds",
	[CRASH_END] = "end",
};

const char *crash_trigger(const struct crash_point *p, char *buf, size_t len)
{
	switch (p->kind) {
	case CRASH_WRITES: snprintf(buf, len, "cut-after-writes:%" PRIu64, p->k); break;
	case CRASH_FLUSHES: snprintf(buf, len, "cut-after-flushes:%" PRIu64, p->k); break;
	case CRASH_SECONDS: snprintf(buf, len, "cut-after-seconds:%.3f", p->at); break;
	case CRASH_END: snprintf(buf, len, "cut-at-end"); break;
	default: snprintf(buf, len, "none"); break;
	}
	return buf;
}

int crash_parse_point(const char *s, struct crash_point *p)
{
	char *end;
	double t;

	memset(p, 0, sizeof(*p));
	if (*s < '0' || *s > '9')          /* strtoull takes blanks and a sign first */
		return -1;
	errno = 0;
	p->seed = strtoull(s, &end, 0);
	if (errno || *end != ':')
		return -1;
	s = end + 1;
	if (strncmp(s, "cut-after-writes:", 17) == 0 || strncmp(s, "cut-after-flushes:", 18) == 0) {
		p->kind = s[10] == 'w' ? CRASH_WRITES : CRASH_FLUSHES;
		s = strchr(s + 10, ':') + 1;
		if (*s < '1' || *s > '9')
			return -1;
		p->k = strtoull(s, &end, 10);
		return errno || *end ? -1 : 0;
	}
	if (strncmp(s, "cut-after-seconds:", 18) == 0) {
		p->kind = CRASH_SECONDS;
		t = strtod(s + 18, &end);
		if (end == s + 18 || *end || !isfinite(t) || t < 0 || t > 1e6)
			return -1;
		p->at = t;
		return 0;
	}
	if (strcmp(s, "cut-at-end") == 0) {
		p->kind = CRASH_END;
		return 0;
	}
	return -1;
}

/* How many points each kind of count gets: ask[k] in, got[k] out, fewest domain first so that
 * what a small domain cannot take goes to the others. */
static void share(const uint64_t dom[CRASH_NKINDS], const bool on[CRASH_NKINDS], unsigned total,
		  unsigned got[CRASH_NKINDS])
{
	unsigned left = 0;
	bool done[CRASH_NKINDS] = { false };

	for (int k = CRASH_WRITES; k <= CRASH_SECONDS; k++)
		left += on[k] && dom[k] > 0;
	for (unsigned n = left; n > 0; n--) {
		int best = -1;

		for (int k = CRASH_WRITES; k <= CRASH_SECONDS; k++)
			if (on[k] && dom[k] > 0 && !done[k] && (best < 0 || dom[k] < dom[best]))
				best = k;
		got[best] = total / n < dom[best] ? total / n : (unsigned)dom[best];
		total -= got[best];
		done[best] = true;
	}
}

unsigned crash_sample(const bool kinds[CRASH_NKINDS], long long writes, long long flushes, double secs,
		      unsigned npoints, uint64_t seed, struct crash_point *pts)
{
	uint64_t dom[CRASH_NKINDS] = { 0 };
	unsigned got[CRASH_NKINDS] = { 0 }, n = 0, total = npoints;

	assert(npoints > 0);
	dom[CRASH_WRITES] = writes > 0 ? (uint64_t)writes : 0;
	dom[CRASH_FLUSHES] = flushes > 0 ? (uint64_t)flushes : 0;
	dom[CRASH_SECONDS] = secs >= 0.001 ? UINT64_MAX : 0;
	if (kinds[CRASH_END])
		total--;
	share(dom, kinds, total, got);
	for (int k = CRASH_WRITES; k <= CRASH_SECONDS; k++) {
		for (unsigned j = 0; j < got[k]; j++) {
			struct crash_point *p = &pts[n++];
			uint64_t x = sfs_draw(seed, (uint64_t)k, j);

			p->kind = (enum crash_kind)k;
			if (k == CRASH_SECONDS) {
				p->at = ((double)j + sfs_draw_unit(x)) * secs / got[k];
			} else {
				uint64_t lo = 1 + j * dom[k] / got[k], hi = (j + 1) * dom[k] / got[k];

				p->k = lo + (hi > lo ? x % (hi - lo + 1) : 0);
			}
		}
	}
	if (kinds[CRASH_END])
		pts[n++].kind = CRASH_END;
	for (unsigned i = 0; i < n; i++)
		pts[i].seed = sfs_draw(seed, 0, i) >> 32;       /* short to type */
	return n;
}
