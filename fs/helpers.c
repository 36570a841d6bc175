/* SPDX-License-Identifier: MIT */
/*
 * helpers.c - the helper threads of the event loops.
 *
 * An event loop (uring/loop.c, devloop.c) never blocks on anything but its
 * ring: what it cannot complete with an asynchronous transfer (namespace
 * operations, opens, flushes, first writes that zero their block, the
 * page cache's read-modify-writes, a device profile's wait) it queues
 * here, and a helper runs today's handler for it (libfuse's high-level
 * API, the blocking core calls) and gives it back to the loop.
 *
 * The pool grows as the /dev/fuse workers of xport.c do: a job queued
 * while no helper waits starts one more, up to max; a helper that finds
 * max_idle others waiting once its job is done ends (its stack and
 * glibc's per-thread cache of small chunks go with it).  Helpers run
 * with every signal blocked: signals are the main thread's.
 *
 * Back to the loop (struct sfs_back): a helper queues the job it is done
 * with and writes the loop's eventfd, which the loop reads on its ring;
 * the first give after the loop took the queue writes it, the others
 * find the loop woken already.  The loop clears "woken" before it takes
 * the queue, so a give after that wakes it again.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "helpers.h"
#include "util/thread.h"

struct helper {
	struct helper *next;
	pthread_t thr;
};

static struct {
	pthread_mutex_t lock;          /* guards all below */
	pthread_cond_t cond;           /* a job queued, or the stop */
	struct sfs_job *head, **tail;
	struct helper *helpers;
	unsigned n, idle, max, max_idle;
	unsigned queued;               /* jobs in the queue */
	bool running, stopping;
	const struct sfs_log *log;
} H = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Leave the list of helpers; caller holds H.lock. */
static void unlist(struct helper *h)
{
	for (struct helper **p = &H.helpers; *p; p = &(*p)->next) {
		if (*p == h) {
			*p = h->next;
			break;
		}
	}
	H.n--;
}

static void *helper_main(void *arg)
{
	struct helper *self = arg;

	pthread_mutex_lock(&H.lock);
	for (;;) {
		struct sfs_job *j;

		while (!H.head && !H.stopping)
			pthread_cond_wait(&H.cond, &H.lock);
		if (H.stopping)
			break;
		j = H.head;
		H.head = j->next;
		if (!H.head)
			H.tail = &H.head;
		H.queued--;
		H.idle--;
		pthread_mutex_unlock(&H.lock);
		j->fn(j);
		pthread_mutex_lock(&H.lock);
		H.idle++;
		if (H.idle > H.max_idle && !H.stopping) {
			unlist(self);
			H.idle--;
			pthread_mutex_unlock(&H.lock);
			pthread_detach(pthread_self());
			free(self);
			return NULL;
		}
	}
	pthread_mutex_unlock(&H.lock);
	return NULL;
}

/* One more helper; caller holds H.lock.  0 or -errno (logged). */
static int start_one(void)
{
	struct helper *h = calloc(1, sizeof(*h));
	int rc;

	if (!h)
		return -ENOMEM;
	rc = sfs_thread_start(&h->thr, NULL, helper_main, h);
	if (rc < 0) {
		free(h);
		sfs_logf(H.log, SFS_LOG_ERR, "cannot start a helper thread: %s", strerror(-rc));
		return rc;
	}
	h->next = H.helpers;
	H.helpers = h;
	H.n++;
	H.idle++;
	return 0;
}

int sfs_helpers_start(unsigned max, unsigned max_idle, const struct sfs_log *log)
{
	pthread_mutex_lock(&H.lock);
	if (H.running) {
		pthread_mutex_unlock(&H.lock);
		return -EBUSY;
	}
	H.max = max ? max : 1;
	H.max_idle = max_idle ? max_idle : 1;
	H.log = log;
	H.head = NULL;
	H.tail = &H.head;
	H.queued = 0;
	H.running = true;
	H.stopping = false;
	pthread_mutex_unlock(&H.lock);
	return 0;
}

int sfs_helpers_submit(struct sfs_job *j)
{
	int rc = 0;

	pthread_mutex_lock(&H.lock);
	if (!H.running || H.stopping) {
		pthread_mutex_unlock(&H.lock);
		return -ESHUTDOWN;
	}
	/* every waiting helper is spoken for by a job queued before this one */
	if (H.idle <= H.queued) {
		if (H.n < H.max)
			rc = start_one();
		if (rc < 0 && H.n > 0)
			rc = 0;                /* the ones there take it in turn */
	}
	if (rc == 0) {
		j->next = NULL;
		*H.tail = j;
		H.tail = &j->next;
		H.queued++;
		pthread_cond_signal(&H.cond);
	}
	pthread_mutex_unlock(&H.lock);
	return rc;
}

unsigned sfs_helpers_count(void)
{
	unsigned n;

	pthread_mutex_lock(&H.lock);
	n = H.n;
	pthread_mutex_unlock(&H.lock);
	return n;
}

void sfs_helpers_stop(void)
{
	struct helper *h, *next;

	pthread_mutex_lock(&H.lock);
	if (!H.running) {
		pthread_mutex_unlock(&H.lock);
		return;
	}
	H.stopping = true;
	H.head = NULL;
	H.tail = &H.head;
	H.queued = 0;
	pthread_cond_broadcast(&H.cond);
	h = H.helpers;
	H.helpers = NULL;
	pthread_mutex_unlock(&H.lock);
	for (; h; h = next) {
		next = h->next;
		pthread_join(h->thr, NULL);
		free(h);
	}
	pthread_mutex_lock(&H.lock);
	H.n = H.idle = 0;
	H.running = false;
	pthread_mutex_unlock(&H.lock);
}

int sfs_back_init(struct sfs_back *b)
{
	b->efd = eventfd(0, EFD_CLOEXEC);
	if (b->efd < 0)
		return -errno;
	pthread_mutex_init(&b->lock, NULL);
	atomic_store(&b->woken, false);
	b->done = NULL;
	return 0;
}

void sfs_back_destroy(struct sfs_back *b)
{
	if (b->efd < 0)
		return;
	close(b->efd);
	pthread_mutex_destroy(&b->lock);
	b->efd = -1;
	b->done = NULL;
}

void sfs_back_poke(struct sfs_back *b)
{
	uint64_t one = 1;

	if (!atomic_exchange(&b->woken, true) && write(b->efd, &one, sizeof(one)) != sizeof(one))
		sfs_logf(H.log, SFS_LOG_ERR, "cannot wake an event loop: %s", strerror(errno));
}

void sfs_back_give(struct sfs_back *b, struct sfs_job *j)
{
	pthread_mutex_lock(&b->lock);
	j->next = b->done;
	b->done = j;
	pthread_mutex_unlock(&b->lock);
	sfs_back_poke(b);
}

struct sfs_job *sfs_back_take(struct sfs_back *b)
{
	struct sfs_job *j;

	atomic_store(&b->woken, false);
	pthread_mutex_lock(&b->lock);
	j = b->done;
	b->done = NULL;
	pthread_mutex_unlock(&b->lock);
	return j;
}
