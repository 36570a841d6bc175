/* SPDX-License-Identifier: MIT */
/*
 * recent.c - rings of the last refused and read-modify-write I/Os, and
 * the requester of the calling thread (see recent.h for the protocol).
 *
 *   head ──► numbers ever claimed: n = head++ is the newest entry's
 *   slot[n % 64].seq   2n+1 while entry n is written, 2n+2 published
 *
 *   list:  for n = head-1 down to max(floor, head-64):
 *            seq == 2n+2 before and after copying slot[n % 64]  → keep
 *            anything else (being written, or overwritten by n+64) → skip
 *
 * A writer that finds its slot published for an older number claims it
 * with a CAS from that even value to 2n+1; finding it published for a
 * newer number (it was overtaken by 64 others while it read the comm) it
 * drops its own, older entry; finding it odd it yields until the holder
 * publishes.  So two writers never store into one slot at once and a
 * reader never keeps a torn entry.  Fields are moved as relaxed atomic
 * words, ordered by the release store and acquire load of seq.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recent.h"

#define NWORD (sizeof(((struct sfs_recent_slot *)0)->w) / sizeof(uint64_t))

_Static_assert((SFS_RECENT_MAX & (SFS_RECENT_MAX - 1)) == 0, "SFS_RECENT_MAX must be a power of two");

static __thread int32_t requester;

void sfs_requester_set(int32_t pid)
{
	requester = pid > 0 ? pid : 0;
}

/* ---- the command name, through a descriptor cached per thread ---- */

struct comm_cache {
	int32_t pid;
	int fd;
};

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;

static void cache_drop(void *p)
{
	struct comm_cache *c = p;

	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static void cache_init(void)
{
	cache_key_ok = pthread_key_create(&cache_key, cache_drop) == 0;
}

/* This thread's cache (NULL when it cannot have one: then every read opens the file). */
static struct comm_cache *my_cache(void)
{
	struct comm_cache *c;

	pthread_once(&cache_once, cache_init);
	if (!cache_key_ok)
		return NULL;
	c = pthread_getspecific(cache_key);
	if (c)
		return c;
	c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	c->pid = 0;
	c->fd = -1;
	if (pthread_setspecific(cache_key, c) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

static int open_comm(int32_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int sfs_comm_of(int32_t pid, char *comm)
{
	struct comm_cache *c = my_cache();
	char buf[SFS_COMM_LEN + 1];
	ssize_t n = -1;
	int fd, tries;

	comm[0] = '\0';
	if (pid <= 0)
		return -ESRCH;
	/* the cached descriptor first; a failed read (the task is gone) opens the path again */
	for (tries = 0; tries < 2; tries++) {
		if (c && c->pid == pid && c->fd >= 0) {
			fd = c->fd;
		} else {
			fd = open_comm(pid);
			if (fd < 0)
				return errno == ENOENT ? -ESRCH : -errno;
			if (c) {
				if (c->fd >= 0)
					close(c->fd);
				c->pid = pid;
				c->fd = fd;
			}
		}
		n = pread(fd, buf, SFS_COMM_LEN, 0);
		if (!c)
			close(fd);
		if (n >= 0 || !c)
			break;
		close(c->fd);             /* a dead task behind the cached descriptor */
		c->fd = -1;
		c->pid = 0;
	}
	if (n < 0)
		return -ESRCH;
	buf[n] = '\0';
	n = (ssize_t)strcspn(buf, "\n");       /* the kernel ends the name with a newline */
	if (n > SFS_COMM_LEN - 1)
		n = SFS_COMM_LEN - 1;
	memcpy(comm, buf, (size_t)n);
	comm[n] = '\0';
	return 0;
}

/* ---- the ring ---- */

void sfs_recent_add(struct sfs_recent *r, enum sfs_io_op op, uint64_t off, uint64_t len, int err)
{
	struct sfs_recent_io e = { 0 };
	uint64_t w[NWORD] = { 0 }, n, cur, want;
	struct sfs_recent_slot *s;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	e.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	e.off = off;
	e.len = len;
	e.pid = requester;
	e.err = err;
	e.op = (uint32_t)op;
	sfs_comm_of(e.pid, e.comm);
	memcpy(w, &e, sizeof(e));

	n = __atomic_fetch_add(&r->head, 1, __ATOMIC_RELAXED);
	s = &r->slot[n & (SFS_RECENT_MAX - 1)];
	want = 2 * n + 1;
	cur = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	for (;;) {
		if (cur >= want)                 /* a newer entry has this slot: ours is older, drop it */
			return;
		if (cur & 1) {                   /* an older writer is still storing: let it finish */
			sched_yield();
			cur = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(&s->seq, &cur, want, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);   /* seq odd before any word changes */
	for (size_t i = 0; i < NWORD; i++)
		__atomic_store_n(&s->w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, want + 1, __ATOMIC_RELEASE);
}

size_t sfs_recent_list(const struct sfs_recent *r, struct sfs_recent_io *out)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t floor = __atomic_load_n(&r->floor, __ATOMIC_ACQUIRE), w[NWORD];
	size_t k = 0;

	for (uint64_t n = head; n > floor && head - n < SFS_RECENT_MAX;) {
		const struct sfs_recent_slot *s = &r->slot[--n & (SFS_RECENT_MAX - 1)];

		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != 2 * n + 2)
			continue;
		for (size_t i = 0; i < NWORD; i++)
			w[i] = __atomic_load_n(&s->w[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);   /* the words before seq again */
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != 2 * n + 2)
			continue;
		memcpy(&out[k], w, sizeof(out[k]));
		out[k].comm[SFS_COMM_LEN - 1] = '\0';
		k++;
	}
	return k;
}

void sfs_recent_load(struct sfs_recent *r, const struct sfs_recent_io *entries, size_t n)
{
	assert(n <= SFS_RECENT_MAX && r->head == 0);
	/* entry k (oldest first) is number k, published */
	for (size_t k = 0; k < n; k++) {
		struct sfs_recent_slot *s = &r->slot[k];

		memcpy(s->w, &entries[n - 1 - k], sizeof(entries[0]));
		s->seq = 2 * k + 2;
	}
	__atomic_store_n(&r->head, (uint64_t)n, __ATOMIC_RELEASE);
}

void sfs_recent_clear(struct sfs_recent *r)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), floor;

	/* the floor only rises (two clears at once: the later head wins) */
	floor = __atomic_load_n(&r->floor, __ATOMIC_RELAXED);
	while (floor < head &&
	       !__atomic_compare_exchange_n(&r->floor, &floor, head, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

const char *sfs_io_op_name(unsigned op)
{
	static const char *const names[SFS_OP_NCLASS] = { "read", "write", "discard", "write_zeroes" };

	return op < SFS_OP_NCLASS ? names[op] : "?";
}
