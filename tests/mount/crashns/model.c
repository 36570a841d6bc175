/* SPDX-License-Identifier: MIT */
/*
 * model.c - the operations as steps, the states they allow after a crash,
 * and how states, candidates and operations are printed (crashns.h).
 *
 * apply(st, op, k) is the state of a thread's names after the first k
 * steps of op returned: a write that returned but no fsync has covered
 * yet leaves its sectors "old or new" (a and b), an fsync makes them new.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crashns.h"

#define STATE_MAGIC 0x53464e31u

const char *const kind_name[K_N] = {
	[K_PRESENCE] = "name present or absent against the model",
	[K_SIZE] = "size not allowed",
	[K_CONTENT] = "contents not allowed (fsynced data lost, junk, or data at the wrong place)",
	[K_DUP] = "same data under two names",
	[K_TMPFILE] = "temporary file left in the store",
	[K_STRAYFILE] = "unexpected file in the store",
	[K_CHECK_AFTER] = "sectorfs-img check not clean after restart",
	[K_EEXIST] = "create refused with EEXIST, name absent from the listing",
	[K_PROBE] = "create or unlink of a free name failed otherwise",
	[K_UNOPENABLE] = "name in the listing fails to open",
	[K_LISTING] = "listing and lookup disagree",
	[K_OPERR] = "operation failed while the daemon was alive",
	[K_DAEMON] = "daemon exit status",
	[K_CHECK_BEFORE] = "sectorfs-img check STORE not clean right after the kill -9, before the restart",
};

const char *const kind_id[K_N] = {
	[K_PRESENCE] = "presence", [K_SIZE] = "size", [K_CONTENT] = "content", [K_DUP] = "duplicate",
	[K_TMPFILE] = "tmpfile", [K_STRAYFILE] = "strayfile",
	[K_CHECK_AFTER] = "check-after-restart", [K_EEXIST] = "eexist-unlisted", [K_PROBE] = "probe",
	[K_UNOPENABLE] = "unopenable", [K_LISTING] = "listing", [K_OPERR] = "operation-error",
	[K_DAEMON] = "daemon", [K_CHECK_BEFORE] = "check-before-restart",
};

const char *const op_name[OP_N] = {
	[OP_NONE] = "none", [OP_CREATE] = "create", [OP_OVERWRITE] = "overwrite", [OP_GROW] = "grow",
	[OP_RENAME] = "rename", [OP_REPLACE] = "rename-replace", [OP_NOREPLACE] = "rename-noreplace",
	[OP_UNLINK] = "unlink",
};

void name_of(int t, int i, char *buf, size_t len)
{
	snprintf(buf, len, "t%d-%c", t, 'a' + i);
}

static const char *const create_steps[] = { "open O_CREAT|O_EXCL", "ftruncate 64K", "pwrite 64K", "fsync", "close" };
static const char *const overwrite_steps[] = { "open", "pwrite", "fsync", "close" };
static const char *const grow_steps[] = { "open", "ftruncate", "close" };
static const char *const rename_steps[] = { "rename" };
static const char *const noreplace_steps[] = { "renameat2 RENAME_NOREPLACE" };
static const char *const unlink_steps[] = { "unlink" };

static const char *const *steps_of(const struct op *op, int *n)
{
	switch (op->kind) {
	case OP_CREATE: *n = 5; return create_steps;
	case OP_OVERWRITE: *n = 4; return overwrite_steps;
	case OP_GROW: *n = 3; return grow_steps;
	case OP_RENAME: case OP_REPLACE: *n = 1; return rename_steps;
	case OP_NOREPLACE: *n = 1; return noreplace_steps;
	case OP_UNLINK: *n = 1; return unlink_steps;
	default: *n = 0; return NULL;
	}
}

int op_steps(const struct op *op)
{
	int n;

	steps_of(op, &n);
	return n;
}

const char *step_name(const struct op *op, int step)
{
	int n;
	const char *const *s = steps_of(op, &n);

	return step < n ? s[step] : "-";
}

static void from_state(const struct nstate st[NN], struct cand *c)
{
	for (int i = 0; i < NN; i++) {
		c->exists[i] = st[i].exists;
		c->nsect[i] = st[i].exists ? st[i].nsect : 0;
		for (uint32_t s = 0; s < c->nsect[i]; s++)
			c->a[i][s] = c->b[i][s] = st[i].tag[s];
	}
}

static void move_name(struct cand *c, int from, int to)
{
	c->exists[to] = true;
	c->nsect[to] = c->nsect[from];
	memcpy(c->a[to], c->a[from], sizeof(c->a[to]));
	memcpy(c->b[to], c->b[from], sizeof(c->b[to]));
	c->exists[from] = false;
	c->nsect[from] = 0;
}

void apply(const struct nstate st[NN], const struct op *op, int steps, struct cand *c)
{
	int a = op->a;

	from_state(st, c);
	for (int k = 1; k <= steps; k++) {
		switch (op->kind) {
		case OP_CREATE:
			if (k == 1) {
				c->exists[a] = true;
				c->nsect[a] = 0;
			} else if (k == 2) {
				c->nsect[a] = CREATE_S;
				for (int s = 0; s < CREATE_S; s++)
					c->a[a][s] = c->b[a][s] = TAG_ZERO;
			} else if (k == 3) {
				for (int s = 0; s < CREATE_S; s++)
					c->b[a][s] = op->w << 20 | (uint64_t)s;
			} else if (k == 4) {
				for (int s = 0; s < CREATE_S; s++)
					c->a[a][s] = c->b[a][s];
			}
			break;
		case OP_OVERWRITE:
			if (k == 2)
				for (uint32_t s = op->off; s < op->off + op->len; s++)
					c->b[a][s] = op->w << 20 | s;
			else if (k == 3)
				for (uint32_t s = op->off; s < op->off + op->len; s++)
					c->a[a][s] = c->b[a][s];
			break;
		case OP_GROW:
			if (k == 2) {
				for (uint32_t s = c->nsect[a]; s < op->newsize; s++)
					c->a[a][s] = c->b[a][s] = TAG_ZERO;
				c->nsect[a] = op->newsize;
			}
			break;
		case OP_RENAME:
		case OP_REPLACE:
			move_name(c, a, op->b);
			break;
		case OP_NOREPLACE:
			if (!op->target_existed)
				move_name(c, a, op->b);
			break;
		case OP_UNLINK:
			c->exists[a] = false;
			c->nsect[a] = 0;
			break;
		default:
			break;
		}
	}
}

/* Only for a candidate without doubt (all steps of every write fsynced). */
void cand_to_state(const struct cand *c, struct nstate st[NN])
{
	for (int i = 0; i < NN; i++) {
		st[i].exists = c->exists[i];
		st[i].nsect = c->nsect[i];
		for (uint32_t s = 0; s < c->nsect[i]; s++)
			st[i].tag[s] = c->a[i][s];
	}
}

void describe_tag(char *buf, size_t len, uint64_t tag)
{
	uint64_t w = tag >> 20;

	if (tag == TAG_ZERO)
		snprintf(buf, len, "zeros");
	else if (tag == TAG_ANY)
		snprintf(buf, len, "anything");
	else if (tag == TAG_JUNK)
		snprintf(buf, len, "JUNK");
	else
		snprintf(buf, len, "r%llut%llu#%llu", (unsigned long long)(w >> 24),
			 (unsigned long long)((w >> 20) & 15), (unsigned long long)(w & 0xfffff));
}

/* Sector s continues the run of sector s-1: both the same kind of value
 * and, for data, the same write at the next sector. */
static bool continues(uint64_t prev, uint64_t cur)
{
	if (prev >= TAG_JUNK || cur >= TAG_JUNK || prev == TAG_ZERO || cur == TAG_ZERO)
		return prev == cur;
	return cur == prev + 1;
}

static void describe_value(char *buf, size_t len, uint64_t tag)
{
	char t[64];

	describe_tag(t, sizeof(t), tag);
	if (tag == TAG_ZERO || tag >= TAG_JUNK)
		snprintf(buf, len, "%s", t);
	else
		snprintf(buf, len, "%s sector %llu..", t, (unsigned long long)(tag & 0xfffff));
}

/* Run-length: "[0-127] r3t0#2 sector 0.. | zeros, [128-255] zeros". */
static void describe_runs(FILE *f, uint32_t n, const uint64_t *a, const uint64_t *b)
{
	uint32_t start = 0;
	char x[96], y[96];

	for (uint32_t s = 1; s <= n; s++) {
		if (s < n && continues(a[s - 1], a[s]) && continues(b[s - 1], b[s]))
			continue;
		describe_value(x, sizeof(x), a[start]);
		if (a[start] != b[start]) {
			describe_value(y, sizeof(y), b[start]);
			fprintf(f, "%s[%u-%u] %s or %s", start ? ", " : "", start, s - 1, x, y);
		} else {
			fprintf(f, "%s[%u-%u] %s", start ? ", " : "", start, s - 1, x);
		}
		start = s;
	}
}

void describe_cand(FILE *f, const struct cand *c, int i)
{
	if (!c->exists[i]) {
		fprintf(f, "absent");
		return;
	}
	fprintf(f, "%u bytes", c->nsect[i] * SECT);
	if (c->nsect[i]) {
		fprintf(f, ": ");
		describe_runs(f, c->nsect[i], c->a[i], c->b[i]);
	}
}

void describe_found(FILE *f, const struct found *fd)
{
	if (!fd->exists) {
		fprintf(f, "absent");
		return;
	}
	if (fd->unreadable) {
		fprintf(f, "listed, %llu bytes, unreadable", (unsigned long long)fd->bytes);
		return;
	}
	fprintf(f, "%llu bytes", (unsigned long long)fd->bytes);
	if (fd->nsect) {
		fprintf(f, ": ");
		describe_runs(f, fd->nsect, fd->tag, fd->tag);
	}
}

void describe_op(FILE *f, int t, const struct op *op)
{
	char a[16], b[16];
	int n = op_steps(op);

	fprintf(f, "t%d: ", t);
	if (op->kind == OP_NONE) {
		fprintf(f, "nothing in flight\n");
		return;
	}
	name_of(t, op->a, a, sizeof(a));
	name_of(t, op->b, b, sizeof(b));
	switch (op->kind) {
	case OP_CREATE:
		fprintf(f, "create %s (data r%llut%d#%llu, generation %u)", a,
			(unsigned long long)(op->w >> 24), t, (unsigned long long)(op->w & 0xfffff), op->gen);
		break;
	case OP_OVERWRITE:
		fprintf(f, "overwrite %s sectors %u-%u (data r%llut%d#%llu, generation %u) + fsync", a, op->off,
			op->off + op->len - 1, (unsigned long long)(op->w >> 24), t,
			(unsigned long long)(op->w & 0xfffff), op->gen);
		break;
	case OP_GROW:
		fprintf(f, "grow %s to %u bytes", a, op->newsize * SECT);
		break;
	case OP_RENAME:
		fprintf(f, "rename %s -> %s (free)", a, b);
		break;
	case OP_REPLACE:
		fprintf(f, "rename %s -> %s (replacing it)", a, b);
		break;
	case OP_NOREPLACE:
		fprintf(f, "rename %s -> %s with RENAME_NOREPLACE (%s)", a, b,
			op->target_existed ? "target exists: EEXIST expected" : "target free");
		break;
	case OP_UNLINK:
		fprintf(f, "unlink %s", a);
		break;
	default:
		break;
	}
	if (op->done >= n)
		fprintf(f, ": all %d steps returned\n", n);
	else if (op->err < 0)
		fprintf(f, ": %d/%d steps returned, then %s succeeded where it should have failed\n", op->done,
			n, step_name(op, op->done));
	else if (op->err)
		fprintf(f, ": %d/%d steps returned, then %s failed: %s\n", op->done, n, step_name(op, op->done),
			strerror(op->err));
	else if (op->idle)
		fprintf(f, ": %d/%d steps returned, none in flight (%s not started)\n", op->done, n,
			step_name(op, op->done));
	else
		fprintf(f, ": %d/%d steps returned, in flight: %s\n", op->done, n, step_name(op, op->done));
}

int state_load(const char *path, struct state *s)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "crashns: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(s, sizeof(*s), 1, f);
	fclose(f);
	if (n != 1 || s->magic != STATE_MAGIC) {
		fprintf(stderr, "crashns: %s: not a state file of this crashns\n", path);
		return -1;
	}
	return 0;
}

int state_save(const char *path, const struct state *s)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "wb");
	if (!f || fwrite(s, sizeof(*s), 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "crashns: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

void state_init(struct state *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->magic = STATE_MAGIC;
	s->seed = seed;
}
