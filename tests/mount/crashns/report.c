/* SPDX-License-Identifier: MIT */
/*
 * report.c - failures: printed with the round's context, counted by kind,
 * and lasting ones (a leftover file, a check that stays unclean) counted
 * once rather than in every round they are still there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "crashns.h"

void report_init(struct report *r, struct state *s, const char *phase, const enum kind *owned, int nowned)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->phase = phase;
	r->owned = owned;
	r->nowned = nowned;
}

static void header(struct report *r)
{
	if (r->header_done)
		return;
	r->header_done = true;
	printf("FAIL: round %u (SEED=%llu), %s; in flight when the daemon was killed:\n", r->s->round,
	       (unsigned long long)r->s->seed, r->phase);
	for (int t = 0; t < NT; t++) {
		printf("    ");
		describe_op(stdout, t, &r->s->inflight[t]);
	}
}

static bool known(const struct state *s, const char *key)
{
	for (uint32_t i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i], key) == 0)
			return true;
	return false;
}

bool problem(struct report *r, enum kind k, const char *key, const char *fmt, ...)
{
	char full[KEYLEN];
	va_list ap;

	if (key) {
		snprintf(full, sizeof(full), "%02d|%s", (int)k, key);
		if (r->nkeys < MAXKEYS)
			snprintf(r->keys[r->nkeys++], KEYLEN, "%s", full);
		if (known(r->s, full)) {
			r->still++;
			return false;
		}
	}
	header(r);
	printf("  FAIL [%s]: ", kind_name[k]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	r->s->fails[k]++;
	r->found++;
	if (r->s->round_found++ == 0)
		r->s->bad_rounds++;
	return true;
}

static bool owned(const struct report *r, const char *key)
{
	int k = (key[0] - '0') * 10 + (key[1] - '0');

	for (int i = 0; i < r->nowned; i++)
		if ((int)r->owned[i] == k)
			return true;
	return false;
}

/* The state keeps the lasting problems of other phases, and this phase's as found now. */
void report_finish(struct report *r)
{
	struct state *s = r->s;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nkeys; i++)
		if (!owned(r, s->keys[i]))
			memmove(s->keys[n++], s->keys[i], KEYLEN);
	for (uint32_t i = 0; i < r->nkeys && n < MAXKEYS; i++)
		memcpy(s->keys[n++], r->keys[i], KEYLEN);
	s->nkeys = n;
	if (r->still)
		printf("# round %u, %s: %u problem%s reported in an earlier round still there\n", s->round, r->phase,
		       r->still, r->still == 1 ? "" : "s");
	fflush(stdout);
}
