/* SPDX-License-Identifier: MIT */
/*
 * run.c - the workload of one round: four threads, each doing random
 * operations on its own names through the mount, until the daemon is
 * killed with SIGKILL after a random 20-300 ms.
 *
 * A thread runs one operation at a time and counts its steps as they
 * return; the kill flag is raised before the signal is sent, so a step
 * that fails after it is taken for the crash, and one that fails before
 * it is a failure of the daemon (K_OPERR).  A thread stops at its first
 * failed step; its operation stays in flight in the state, with the state
 * of its names from before it (apply() makes the rest).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crashns.h"

#define BUF (MAXS * SECT)

struct thr {
	int t;
	uint64_t rng;
	const char *mnt;
	struct state *s;
	struct cand *c;
	unsigned char *buf;
	uint32_t writes, ops;
	pthread_t tid;
};

static int killed;

static bool is_killed(void)
{
	return __atomic_load_n(&killed, __ATOMIC_ACQUIRE);
}

static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint64_t *x, uint32_t n)
{
	return (uint32_t)(next(x) % n);
}

/* A random index among the names for which ok[] holds, other than not; -1 if none. */
static int pick_name(uint64_t *x, const bool ok[NN], int not)
{
	int idx[NN], n = 0;

	for (int i = 0; i < NN; i++)
		if (ok[i] && i != not)
			idx[n++] = i;
	return n ? idx[below(x, (uint32_t)n)] : -1;
}

/* Choose the next operation among those the names allow. */
static void choose(struct thr *th, struct op *op)
{
	const struct nstate *st = th->s->st[th->t];
	bool present[NN], free_[NN], writable[NN], growable[NN], other[NN];
	int npresent = 0, nfree = 0, nwritable = 0, ngrowable = 0;
	static const int weight[OP_N] = { 0, 3, 3, 2, 2, 2, 2, 2 };
	int w[OP_N] = { 0 }, total = 0, r;

	for (int i = 0; i < NN; i++) {
		present[i] = st[i].exists;
		free_[i] = !st[i].exists && !th->s->blocked[th->t][i];
		writable[i] = st[i].exists && st[i].nsect > 0;
		growable[i] = st[i].exists && st[i].nsect < MAXS;
		other[i] = present[i] || free_[i];
		npresent += present[i];
		nfree += free_[i];
		nwritable += writable[i];
		ngrowable += growable[i];
	}
	w[OP_CREATE] = nfree ? weight[OP_CREATE] : 0;
	w[OP_OVERWRITE] = nwritable ? weight[OP_OVERWRITE] : 0;
	w[OP_GROW] = ngrowable ? weight[OP_GROW] : 0;
	w[OP_RENAME] = npresent && nfree ? weight[OP_RENAME] : 0;
	w[OP_REPLACE] = npresent >= 2 ? weight[OP_REPLACE] : 0;
	w[OP_NOREPLACE] = npresent && (npresent >= 2 || nfree) ? weight[OP_NOREPLACE] : 0;
	w[OP_UNLINK] = npresent ? weight[OP_UNLINK] : 0;
	for (int k = 0; k < OP_N; k++)
		total += w[k];
	memset(op, 0, sizeof(*op));
	if (total == 0)
		return;            /* every name absent and blocked: nothing to do */
	r = (int)below(&th->rng, (uint32_t)total);
	for (op->kind = OP_CREATE; r >= w[op->kind]; op->kind++)
		r -= w[op->kind];
	switch (op->kind) {
	case OP_CREATE:
		op->a = pick_name(&th->rng, free_, -1);
		break;
	case OP_OVERWRITE: {
		uint32_t n;

		op->a = pick_name(&th->rng, writable, -1);
		n = st[op->a].nsect;
		op->len = 1 + below(&th->rng, n < 64 ? n : 64);
		op->off = below(&th->rng, n - op->len + 1);
		break;
	}
	case OP_GROW:
		op->a = pick_name(&th->rng, growable, -1);
		op->newsize = st[op->a].nsect + 1 + below(&th->rng, 64);
		if (op->newsize > MAXS)
			op->newsize = MAXS;
		break;
	case OP_RENAME:
		op->a = pick_name(&th->rng, present, -1);
		op->b = pick_name(&th->rng, free_, op->a);
		break;
	case OP_REPLACE:
		op->a = pick_name(&th->rng, present, -1);
		op->b = pick_name(&th->rng, present, op->a);
		break;
	case OP_NOREPLACE:
		op->a = pick_name(&th->rng, present, -1);
		op->b = pick_name(&th->rng, other, op->a);
		op->target_existed = st[op->b].exists;
		break;
	case OP_UNLINK:
		op->a = pick_name(&th->rng, present, -1);
		break;
	default:
		break;
	}
	if (op->kind == OP_CREATE || op->kind == OP_OVERWRITE) {
		op->w = make_w(th->s->round, th->t, th->writes++);
		op->gen = ++th->s->gen[th->t][op->a];
	}
}

static void fill(struct thr *th, const struct op *op, uint32_t off, uint32_t len)
{
	char name[16];

	name_of(th->t, op->a, name, sizeof(name));
	for (uint32_t s = 0; s < len; s++)
		fill_sector(th->buf + (size_t)s * SECT, op->w << 20 | (off + s), name, op->gen);
}

static int sys(long rc)
{
	return rc < 0 ? errno : 0;
}

static int full_write(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);

	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;   /* a short write: the rules say all or nothing */
}

/* Step k of op; 0, an errno, or -1 for a success where a failure was due. */
static int step(struct thr *th, struct op *op, int k, int *fd)
{
	char pa[4096], pb[4096], a[16], b[16];

	name_of(th->t, op->a, a, sizeof(a));
	name_of(th->t, op->b, b, sizeof(b));
	snprintf(pa, sizeof(pa), "%s/%s", th->mnt, a);
	snprintf(pb, sizeof(pb), "%s/%s", th->mnt, b);
	switch (op->kind) {
	case OP_CREATE:
		switch (k) {
		case 0: return (*fd = open(pa, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0644)) < 0 ? errno : 0;
		case 1: return sys(ftruncate(*fd, CREATE_S * SECT));
		case 2: fill(th, op, 0, CREATE_S); return full_write(*fd, th->buf, CREATE_S * SECT, 0);
		case 3: return sys(fsync(*fd));
		default: k = close(*fd); *fd = -1; return sys(k);
		}
	case OP_OVERWRITE:
		switch (k) {
		case 0: return (*fd = open(pa, O_RDWR | O_DIRECT | O_CLOEXEC)) < 0 ? errno : 0;
		case 1:
			fill(th, op, op->off, op->len);
			return full_write(*fd, th->buf, (size_t)op->len * SECT, (off_t)op->off * SECT);
		case 2: return sys(fsync(*fd));
		default: k = close(*fd); *fd = -1; return sys(k);
		}
	case OP_GROW:
		switch (k) {
		case 0: return (*fd = open(pa, O_RDWR | O_CLOEXEC)) < 0 ? errno : 0;
		case 1: return sys(ftruncate(*fd, (off_t)op->newsize * SECT));
		default: k = close(*fd); *fd = -1; return sys(k);
		}
	case OP_RENAME:
	case OP_REPLACE:
		return sys(rename(pa, pb));
	case OP_NOREPLACE:
		if (renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_NOREPLACE) == 0)
			return op->target_existed ? -1 : 0;
		return op->target_existed && errno == EEXIST ? 0 : errno;
	case OP_UNLINK:
		return sys(unlink(pa));
	default:
		return 0;
	}
}

static void *worker(void *arg)
{
	struct thr *th = arg;
	struct state *s = th->s;
	struct op *op = &s->inflight[th->t];

	while (!is_killed()) {
		int fd = -1, n, rc = 0;

		choose(th, op);
		if (op->kind == OP_NONE)
			break;
		n = op_steps(op);
		while (op->done < n && !is_killed()) {
			rc = step(th, op, op->done, &fd);
			if (rc)
				break;
			op->done++;
		}
		if (fd >= 0)
			close(fd);
		if (op->done < n) {
			/* the crash, or a failure of the daemon: the operation stays in flight */
			if (rc && !is_killed())
				op->err = rc;
			op->idle = rc == 0;
			if (op->idle && op->done == 0)
				op->kind = OP_NONE;
			break;
		}
		apply(s->st[th->t], op, n, th->c);
		cand_to_state(th->c, s->st[th->t]);
		op->kind = OP_NONE;
		th->ops++;
	}
	return NULL;
}

int cmd_run(struct state *s, const char *mnt, int pid, uint32_t round)
{
	struct thr th[NT];
	struct timespec d;
	struct report r;
	uint64_t x;
	uint32_t ms, ops = 0;
	int rc = 0;

	s->round = round;
	s->round_found = 0;
	x = s->seed ^ (uint64_t)round * 0xd1b54a32d192ed03ull;
	ms = 20 + below(&x, 281);
	memset(th, 0, sizeof(th));
	for (int t = 0; t < NT; t++) {
		th[t].t = t;
		th[t].rng = x ^ (uint64_t)(t + 1) * 0x8cb92ba72f3d8dd7ull;
		th[t].mnt = mnt;
		th[t].s = s;
		th[t].c = malloc(sizeof(*th[t].c));
		if (!th[t].c || posix_memalign((void **)&th[t].buf, 4096, BUF) != 0) {
			fprintf(stderr, "crashns: out of memory\n");
			return 2;
		}
		memset(&s->inflight[t], 0, sizeof(s->inflight[t]));
	}
	__atomic_store_n(&killed, 0, __ATOMIC_RELEASE);
	for (int t = 0; t < NT; t++) {
		if (pthread_create(&th[t].tid, NULL, worker, &th[t]) != 0) {
			fprintf(stderr, "crashns: cannot start a thread\n");
			return 2;
		}
	}
	d.tv_sec = ms / 1000;
	d.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&d, NULL);
	__atomic_store_n(&killed, 1, __ATOMIC_RELEASE);
	if (kill(pid, SIGKILL) < 0) {
		if (errno == ESRCH) {
			/* it died before and was reaped: the script reports its exit status */
			printf("# round %u: the daemon (pid %d) was gone before the kill -9\n", round, pid);
		} else {
			fprintf(stderr, "crashns: kill -9 %d: %s\n", pid, strerror(errno));
			rc = 2;
		}
	}
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t].tid, NULL);
		ops += th[t].ops;
		free(th[t].c);
		free(th[t].buf);
	}
	s->run_ms = ms;
	s->run_ops = ops;
	report_init(&r, s, "workload, before the kill", NULL, 0);
	for (int t = 0; t < NT; t++) {
		const struct op *op = &s->inflight[t];

		if (op->err)
			problem(&r, K_OPERR, NULL, "t%d: step '%s' of its %s %s (see its line above)", t,
				step_name(op, op->done), op_name[op->kind],
				op->err < 0 ? "succeeded where it should have failed" : "failed");
	}
	report_finish(&r);
	return rc ? rc : r.found ? 1 : 0;
}
