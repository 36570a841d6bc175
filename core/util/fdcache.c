/* SPDX-License-Identifier: MIT */
/*
 * fdcache.c - a bounded cache of open descriptors (see fdcache.h).
 *
 * The idle list is doubly linked, most recently used at the head; an
 * eviction walks from the tail.  A slot's state moves under the cache's
 * mutex:
 *
 *   CLOSED --(open, under the slot's mutex)--> OPEN
 *   OPEN (idle, listed) --(evictor took the slot's mutex)--> CLOSING
 *   CLOSING --(close done)--> CLOSED, or back to OPEN when close refused
 *
 * A pin that finds the slot OPEN only counts itself and unlists it (no
 * slot mutex, no system call): the cost on every use of an open slot is
 * one uncontended mutex of the cache.  A pin that finds it CLOSED or
 * CLOSING takes the slot's mutex (waiting for the evictor, which holds it
 * while it closes) and opens it.  An evictor picks only listed slots,
 * which have no pin, and only those whose mutex it gets with a try-lock;
 * a pin taken meanwhile sees CLOSING and waits for the mutex.  So a
 * descriptor is never closed while pinned.
 */
#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "dlist.h"
#include "fdcache.h"

enum { CLOSED, OPEN, CLOSING };

struct sfs_fdcache {
	pthread_mutex_t mu;
	unsigned budget, used, peak, open, pinned;
	uint64_t evictions;
	struct sfs_fdslot *head, *tail;   /* idle slots, most recently used first */
};

int sfs_fdcache_new(unsigned budget, struct sfs_fdcache **out)
{
	struct sfs_fdcache *c;

	if (budget == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->mu, NULL);
	c->budget = budget;
	*out = c;
	return 0;
}

void sfs_fdcache_free(struct sfs_fdcache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void sfs_fdcache_usage(struct sfs_fdcache *c, struct sfs_fdcache_usage *u)
{
	pthread_mutex_lock(&c->mu);
	u->budget = c->budget;
	u->used = c->used;
	u->peak = c->peak;
	u->open = c->open;
	u->pinned = c->pinned;
	u->evictions = c->evictions;
	pthread_mutex_unlock(&c->mu);
}

/* ---- the idle list (cache mutex held) ---- */

static void unlist(struct sfs_fdcache *c, struct sfs_fdslot *s)
{
	if (!s->listed)
		return;
	SFS_DLIST_REMOVE(c->head, c->tail, s);
	s->prev = s->next = NULL;
	s->listed = false;
}

static void list_head(struct sfs_fdcache *c, struct sfs_fdslot *s)
{
	SFS_DLIST_PUSH_FRONT(c->head, c->tail, s);
	s->listed = true;
}

static void count_open(struct sfs_fdcache *c, struct sfs_fdslot *s, unsigned nfds)
{
	s->nfds = nfds;
	s->state = OPEN;
	c->used += nfds;
	c->open++;
	if (c->used > c->peak)
		c->peak = c->used;
}

/* Close idle slot v, whose mutex the caller holds, taken out of the list (cache mutex held
 * on entry and on return, dropped while closing).  True when closed. */
static bool close_idle(struct sfs_fdcache *c, struct sfs_fdslot *v)
{
	int rc;

	unlist(c, v);
	v->state = CLOSING;
	pthread_mutex_unlock(&c->mu);
	rc = v->close(v, false);
	pthread_mutex_lock(&c->mu);
	if (rc == 0) {
		c->used -= v->nfds;
		c->open--;
		v->nfds = 0;
		v->state = CLOSED;
		return true;
	}
	v->state = OPEN;             /* it could not be closed (a failed flush): still usable */
	if (v->pins == 0) {
		v->idle_since = sfs_now_ns();   /* idle from now: not tried again at once */
		list_head(c, v);
	}
	return false;
}

/* Evict the least recently used idle slot whose mutex is free (cache mutex held; dropped and
 * taken again).  True when one was closed. */
static bool evict_locked(struct sfs_fdcache *c)
{
	for (struct sfs_fdslot *v = c->tail; v; v = v->prev) {
		if (pthread_mutex_trylock(&v->lk) != 0)
			continue;
		if (close_idle(c, v)) {
			c->evictions++;
			pthread_mutex_unlock(&v->lk);
			return true;
		}
		pthread_mutex_unlock(&v->lk);
		return false;        /* the list changed under us; the caller may try again */
	}
	return false;
}

int sfs_fdcache_make_room(struct sfs_fdcache *c, unsigned n)
{
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	while (c->used + n > c->budget) {
		if (!evict_locked(c)) {
			rc = c->used + n > c->budget ? -EMFILE : 0;
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

unsigned sfs_fdcache_close_idle(struct sfs_fdcache *c, uint64_t before_ns)
{
	unsigned n = 0;

	pthread_mutex_lock(&c->mu);
	/* from the tail, the longest idle; after a close (the cache mutex was let go) from the
	 * tail again, as the list may have changed */
	for (struct sfs_fdslot *v = c->tail; v && v->idle_since < before_ns;) {
		if (pthread_mutex_trylock(&v->lk) != 0) {
			v = v->prev;
			continue;
		}
		if (close_idle(c, v)) {
			n++;
			pthread_mutex_unlock(&v->lk);
			v = c->tail;
			continue;
		}
		pthread_mutex_unlock(&v->lk);     /* refused (a failed flush): listed at the head again */
		v = c->tail;
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

bool sfs_fdcache_evict_one(struct sfs_fdcache *c)
{
	bool done;

	pthread_mutex_lock(&c->mu);
	done = evict_locked(c);
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* ---- slots ---- */

void sfs_fdslot_init(struct sfs_fdslot *s, struct sfs_fdcache *c, int (*open)(struct sfs_fdslot *),
		     int (*close)(struct sfs_fdslot *, bool), unsigned want)
{
	s->open = open;
	s->close = close;
	s->cache = c;
	pthread_mutex_init(&s->lk, NULL);
	s->prev = s->next = NULL;
	s->pins = s->nfds = 0;
	s->want = want;
	s->state = CLOSED;
	s->listed = false;
}

void sfs_fdslot_adopt(struct sfs_fdslot *s, unsigned nfds)
{
	struct sfs_fdcache *c = s->cache;

	pthread_mutex_lock(&c->mu);
	count_open(c, s, nfds);
	s->pins = 1;
	c->pinned++;
	pthread_mutex_unlock(&c->mu);
}

/* Open s (its mutex held, pinned by the caller). */
static int open_slot(struct sfs_fdslot *s)
{
	struct sfs_fdcache *c = s->cache;
	int rc;

	sfs_fdcache_make_room(c, s->want);   /* over the budget when every slot is pinned */
	for (;;) {
		rc = s->open(s);
		if ((rc == -EMFILE || rc == -ENFILE) && sfs_fdcache_evict_one(c))
			continue;
		return rc;
	}
}

int sfs_fdslot_pin(struct sfs_fdslot *s)
{
	struct sfs_fdcache *c = s->cache;
	bool open;
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	if (s->pins++ == 0)
		c->pinned++;
	unlist(c, s);
	open = s->state == OPEN;
	pthread_mutex_unlock(&c->mu);
	if (open)
		return 0;
	pthread_mutex_lock(&s->lk);              /* an evictor closing s holds it */
	if (!sfs_fdslot_is_open(s)) {            /* another pin may have opened it */
		rc = open_slot(s);
		pthread_mutex_lock(&c->mu);
		if (rc >= 0) {
			count_open(c, s, (unsigned)rc);
			rc = 0;
		} else if (--s->pins == 0) {
			c->pinned--;
		}
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&s->lk);
	return rc;
}

void sfs_fdslot_unpin(struct sfs_fdslot *s, bool close_now)
{
	struct sfs_fdcache *c = s->cache;
	bool idle;

	pthread_mutex_lock(&c->mu);
	idle = --s->pins == 0;
	if (idle)
		c->pinned--;
	if (idle && s->state == OPEN && !close_now) {
		s->idle_since = sfs_now_ns();
		list_head(c, s);
	}
	/* an open made while every slot was pinned may have passed the budget */
	while (c->used > c->budget && evict_locked(c))
		;
	pthread_mutex_unlock(&c->mu);
	if (!idle || !close_now)
		return;
	pthread_mutex_lock(&s->lk);
	pthread_mutex_lock(&c->mu);
	if (s->pins == 0 && s->state == OPEN)
		close_idle(c, s);
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&s->lk);
}

bool sfs_fdslot_lock(struct sfs_fdslot *s)
{
	pthread_mutex_lock(&s->lk);
	return sfs_fdslot_is_open(s);
}

void sfs_fdslot_unlock(struct sfs_fdslot *s)
{
	pthread_mutex_unlock(&s->lk);
}

bool sfs_fdslot_is_open(struct sfs_fdslot *s)
{
	bool open;

	pthread_mutex_lock(&s->cache->mu);
	open = s->state == OPEN;
	pthread_mutex_unlock(&s->cache->mu);
	return open;
}

int sfs_fdslot_detach(struct sfs_fdslot *s)
{
	struct sfs_fdcache *c = s->cache;
	bool open;
	int rc = 0;

	pthread_mutex_lock(&s->lk);
	pthread_mutex_lock(&c->mu);
	unlist(c, s);
	if (s->pins)
		c->pinned--;
	s->pins = 0;
	open = s->state == OPEN;
	pthread_mutex_unlock(&c->mu);
	if (open)
		rc = s->close(s, true);
	pthread_mutex_lock(&c->mu);
	if (open) {
		c->used -= s->nfds;
		c->open--;
	}
	s->nfds = 0;
	s->state = CLOSED;
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&s->lk);
	pthread_mutex_destroy(&s->lk);
	return rc;
}
