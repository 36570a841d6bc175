/* SPDX-License-Identifier: MIT */
/*
 * fdcache.h - a bounded cache of open descriptors, closed least recently
 * used first.
 *
 * Each owner of descriptors (an image: backing file, its O_DIRECT twin,
 * its map) embeds a struct sfs_fdslot and says how to open and close
 * what it holds.  The cache counts the descriptors of every open slot
 * against a budget (derived by the daemon from RLIMIT_NOFILE).  A user of
 * the descriptors pins the slot for as long as it uses them: a pinned
 * slot is never closed.  A slot nobody pins is idle: it stays open, at the
 * head of a list in order of last use, until room is needed; then the
 * idle slot used longest ago is closed (evicted).  Slots idle for a while
 * are closed too, when the daemon's idle thread asks
 * (sfs_fdcache_close_idle), so that what images nobody uses hold is given
 * back.  Opening a slot makes
 * room first, and when its open fails with EMFILE or ENFILE anyway (other
 * descriptors of the process) evicts one more idle slot and tries again.
 *
 *   pins > 0            pins == 0, open          closed
 *   [in use] --unpin--> [idle, in LRU list] --evict--> [closed]
 *       ^                    |                           |
 *       +------- pin --------+<------- pin (open) -------+
 *
 * Locks: each slot has a mutex held while its descriptors are opened or
 * closed (and by sfs_fdslot_lock); the cache has one mutex for the list,
 * the pins and the counts.  Order: a slot's mutex, then the cache's; an
 * evictor holding its own slot's mutex only try-locks the victim's, and
 * skips a victim that is busy, so two evictors never wait for each other.
 *
 * Functions that can fail return 0 or a negative errno.
 */
#ifndef SFS_FDCACHE_H
#define SFS_FDCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct sfs_fdcache;

struct sfs_fdslot {
	/* Open the owner's descriptors: how many were opened (>= 0), or -errno with none left
	 * open.  Called with the slot's mutex held, never while pinned by anyone but the
	 * caller of sfs_fdslot_pin. */
	int (*open)(struct sfs_fdslot *s);
	/* Close them: 0, or -errno to keep them open (the slot stays open and idle); with
	 * force, close whatever happens and return the first error.  Called with the slot's
	 * mutex held and no pin (except by sfs_fdslot_detach's caller). */
	int (*close)(struct sfs_fdslot *s, bool force);
	/* private to fdcache.c */
	struct sfs_fdcache *cache;
	pthread_mutex_t lk;
	struct sfs_fdslot *prev, *next;  /* in the idle list, most recently used first */
	unsigned pins;
	unsigned nfds;                   /* counted against the budget while open */
	unsigned want;                   /* descriptors an open is expected to take */
	int state;
	bool listed;
	uint64_t idle_since;             /* when the last pin went (sfs_now_ns), while listed */
};

/* What a cache holds, for reports and tests. */
struct sfs_fdcache_usage {
	unsigned budget;        /* descriptors the slots may hold at once */
	unsigned used;          /* held now by open slots */
	unsigned peak;          /* the most held at once */
	unsigned open;          /* open slots */
	unsigned pinned;        /* slots pinned now */
	uint64_t evictions;     /* idle slots closed to make room */
};

/* A cache of at most budget (>= 1) descriptors.  0 or -EINVAL, -ENOMEM. */
int sfs_fdcache_new(unsigned budget, struct sfs_fdcache **out);

/* Free c (NULL is fine).  Precondition: every slot detached. */
void sfs_fdcache_free(struct sfs_fdcache *c);

/* Counts of c into *u. */
void sfs_fdcache_usage(struct sfs_fdcache *c, struct sfs_fdcache_usage *u);

/* Close idle slots, least recently used first, until n more descriptors fit in the budget
 * or no idle slot can be closed.  0 when they fit, -EMFILE when they do not. */
int sfs_fdcache_make_room(struct sfs_fdcache *c, unsigned n);

/* Close the least recently used idle slot (after an EMFILE or ENFILE elsewhere): true when
 * one was closed. */
bool sfs_fdcache_evict_one(struct sfs_fdcache *c);

/* Close the idle slots whose last pin went before before_ns (sfs_now_ns), least recently used
 * first, skipping those whose mutex is busy or whose close refuses: what images nobody has used
 * for a while hold is given back (the daemon's idle thread).  How many were closed. */
unsigned sfs_fdcache_close_idle(struct sfs_fdcache *c, uint64_t before_ns);

/* Make s a closed, unpinned slot of c with the owner's open and close; want: descriptors
 * an open takes (room made for that many before opening). */
void sfs_fdslot_init(struct sfs_fdslot *s, struct sfs_fdcache *c, int (*open)(struct sfs_fdslot *),
		     int (*close)(struct sfs_fdslot *, bool), unsigned want);

/* A closed slot whose owner opened nfds descriptors itself (its first open, which may create
 * files): counted, open, and pinned once.  Precondition: no one else uses s yet. */
void sfs_fdslot_adopt(struct sfs_fdslot *s, unsigned nfds);

/* Pin s, opening it first if closed (room made, EMFILE/ENFILE answered by evicting an idle
 * slot and trying again).  0 (the descriptors stay open until the matching unpin), or the
 * open's -errno (not pinned). */
int sfs_fdslot_pin(struct sfs_fdslot *s);

/* Drop a pin of s (precondition: pinned).  The last one leaves s idle and open, at the head
 * of the list; with close_now it is closed at once instead (unless its close refuses). */
void sfs_fdslot_unpin(struct sfs_fdslot *s, bool close_now);

/* Keep s open or closed as it is until sfs_fdslot_unlock (no pin, no eviction changes it):
 * true when open.  Precondition: the caller holds no other slot's lock. */
bool sfs_fdslot_lock(struct sfs_fdslot *s);

/* End a sfs_fdslot_lock. */
void sfs_fdslot_unlock(struct sfs_fdslot *s);

/* Is s open now (a hint: only a pin or a lock keeps it so)? */
bool sfs_fdslot_is_open(struct sfs_fdslot *s);

/* Take s out of its cache for good, closing it (force) if open: the close's result, or 0.
 * Precondition: no other call on s is running or can start (its pins are dropped). */
int sfs_fdslot_detach(struct sfs_fdslot *s);

#endif
