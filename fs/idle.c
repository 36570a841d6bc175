/* SPDX-License-Identifier: MIT */
/*
 * idle.c - give memory back once the mount has been quiet a while.
 *
 * Under load the daemon's memory grows with the requests in flight:
 * libfuse's request buffer of each worker thread (1 MiB + 4 KiB, its pages
 * touched by the largest request the worker read; over io_uring each ring
 * entry's payload buffer, 1 MiB, likewise), a bounce or
 * read-modify-write buffer per worker from the shared pool, and the read
 * replies, which libfuse frees itself (so they are heap memory: the
 * allocator keeps freed pages for reuse).  All of that is bounded by the
 * number of worker threads.  When the load ends it would stay resident;
 * this thread looks at the count of requests read every TICK_MS and, once
 * it has not moved for quiet_ms after it moved, gives it back:
 *
 *   workers' request buffers   sfs_xport_trim_buffers (xport.c; over
 *   and ring entries' payloads io_uring sfs_uring_trim, uring/worker.c)
 *   free pool buffers          sfs_bufpool_trim (unmapped)
 *   the allocator's free pages malloc_trim(0) (every arena)
 *
 * then waits for requests again.  It does nothing while requests come, so
 * it costs the I/O path nothing; a trim takes a few milliseconds.
 *
 * Every quiet_ms, whatever the load, it also looks at every image
 * (sfs_store_idle): an image with no I/O since the previous look has its
 * live statistics (tens of KiB once touched) packed into a few hundred
 * bytes, unpacked by its next I/O (core/stats/cell.h), and an image that
 * nobody has held open for quiet_ms has its files, bitmap and locks
 * closed (some 15 KiB; its next open opens them again); then
 * malloc_trim(0) when either gave something back.  So an image read once,
 * by a backup say, gives its memory back 2 to 4 s later, even while other
 * images are busy.  A look costs a load or two per image (10,000 images:
 * about a millisecond), a pack or a close some microseconds.
 *
 * For tests only: SFS_XP_TRIM_EVERY_MS=N in the environment asks the
 * workers to drop their buffers' pages every N milliseconds whatever the
 * load (tests/mount/trim.sh: no request's bytes are lost to it).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "util/bufpool.h"
#include "util/clock.h"
#include "idle.h"
#include "store/store.h"
#include "xport.h"
#include "util/thread.h"

#define TICK_MS 250u

struct sfs_idle {
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	unsigned quiet_ms;
	unsigned every_ms;           /* SFS_XP_TRIM_EVERY_MS; 0: only when quiet */
	struct sfs_store *store;     /* whose idle images give their memory back */
	unsigned since_look;         /* ms since the last look at them */
};

/* Every quiet_ms: the look at every image (top of file). */
static void look_at_images(struct sfs_idle *id, unsigned ms)
{
	struct sfs_store_idle gave;

	id->since_look += ms;
	if (!id->store || id->since_look < id->quiet_ms)
		return;
	id->since_look = 0;
	pthread_mutex_unlock(&id->mu);
	sfs_store_idle(id->store, (uint64_t)id->quiet_ms * 1000000u, &gave);
	if (gave.packed || gave.closed)
		malloc_trim(0);              /* the locks and bitmaps freed: pages amid the heap */
	pthread_mutex_lock(&id->mu);
}

static void *idle_thread(void *arg)
{
	struct sfs_idle *id = arg;
	uint64_t last = sfs_xport_requests();
	unsigned quiet = 0;
	bool moved = true;           /* the start-up's requests: trim once after them too */

	pthread_mutex_lock(&id->mu);
	while (!id->stop) {
		unsigned ms = id->every_ms ? id->every_ms : TICK_MS;
		struct timespec ts = sfs_deadline_ts((uint64_t)ms * 1000000u);
		uint64_t now;

		pthread_cond_timedwait(&id->cv, &id->mu, &ts);
		if (id->stop)
			break;
		look_at_images(id, ms);
		if (id->every_ms) {
			pthread_mutex_unlock(&id->mu);
			sfs_xport_trim_buffers();
			pthread_mutex_lock(&id->mu);
			continue;
		}
		now = sfs_xport_requests();
		if (now != last) {
			last = now;
			moved = true;
			quiet = 0;
			continue;
		}
		quiet += TICK_MS;
		if (!moved || quiet < id->quiet_ms)
			continue;
		moved = false;
		pthread_mutex_unlock(&id->mu);
		sfs_xport_trim_buffers();
		if (sfs_bufpool_shared())
			sfs_bufpool_trim(sfs_bufpool_shared());
		malloc_trim(0);
		pthread_mutex_lock(&id->mu);
	}
	pthread_mutex_unlock(&id->mu);
	return NULL;
}

int sfs_idle_start(unsigned quiet_ms, struct sfs_store *store, struct sfs_idle **out)
{
	struct sfs_idle *id = calloc(1, sizeof(*id));
	pthread_condattr_t ca;
	int rc;

	if (!id)
		return -ENOMEM;
	pthread_mutex_init(&id->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&id->cv, &ca);
	pthread_condattr_destroy(&ca);
	id->quiet_ms = quiet_ms;
	id->store = store;
	if (getenv("SFS_XP_TRIM_EVERY_MS")) {
		unsigned long ms = strtoul(getenv("SFS_XP_TRIM_EVERY_MS"), NULL, 10);

		id->every_ms = ms > 999 ? 999 : (unsigned)ms;    /* a test's period: under a second */
	}
	rc = sfs_thread_start(&id->thr, NULL, idle_thread, id);   /* signals are the main thread's */
	if (rc < 0) {
		pthread_cond_destroy(&id->cv);
		pthread_mutex_destroy(&id->mu);
		free(id);
		return rc;
	}
	*out = id;
	return 0;
}

void sfs_idle_stop(struct sfs_idle *id)
{
	if (!id)
		return;
	pthread_mutex_lock(&id->mu);
	id->stop = true;
	pthread_cond_signal(&id->cv);
	pthread_mutex_unlock(&id->mu);
	pthread_join(id->thr, NULL);
	pthread_cond_destroy(&id->cv);
	pthread_mutex_destroy(&id->mu);
	free(id);
}
