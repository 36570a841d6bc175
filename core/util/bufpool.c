/* SPDX-License-Identifier: MIT */
/*
 * bufpool.c - page-aligned I/O buffers of one size (see bufpool.h).
 *
 * Free buffers form a stack linked through their first bytes, under one
 * mutex; each buffer is its own mmap, so unmapping one gives its memory
 * back at once, whatever else the process has allocated around it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bufpool_test.h"

#define PAGE 4096u

struct sfs_bufpool {
	pthread_mutex_t mu;
	size_t size;
	unsigned keep, in_use, nfree, peak;
	void *free;                      /* free buffers, linked through their first bytes */
};

int sfs_bufpool_new(size_t size, unsigned keep, struct sfs_bufpool **out)
{
	struct sfs_bufpool *p;

	if (size == 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	p->size = (size + PAGE - 1) / PAGE * PAGE;
	p->keep = keep;
	*out = p;
	return 0;
}

/* Unmap the free buffers beyond keep (mutex held): the bytes given back. */
static size_t shrink_to(struct sfs_bufpool *p, unsigned keep)
{
	size_t bytes = 0;

	while (p->nfree > keep) {
		void *b = p->free;

		p->free = *(void **)b;
		p->nfree--;
		munmap(b, p->size);
		bytes += p->size;
	}
	return bytes;
}

void sfs_bufpool_free(struct sfs_bufpool *p)
{
	if (!p)
		return;
	shrink_to(p, 0);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void *sfs_bufpool_get(struct sfs_bufpool *p)
{
	void *b;

	pthread_mutex_lock(&p->mu);
	b = p->free;
	if (b) {
		p->free = *(void **)b;
		p->nfree--;
	}
	if (++p->in_use > p->peak)
		p->peak = p->in_use;
	pthread_mutex_unlock(&p->mu);
	if (b)
		return b;
	b = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b != MAP_FAILED)
		return b;
	pthread_mutex_lock(&p->mu);
	p->in_use--;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void sfs_bufpool_put(struct sfs_bufpool *p, void *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&p->mu);
	p->in_use--;
	if (p->nfree < p->keep) {
		*(void **)b = p->free;
		p->free = b;
		p->nfree++;
		b = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (b)
		munmap(b, p->size);
}

void sfs_bufpool_set_keep(struct sfs_bufpool *p, unsigned keep)
{
	pthread_mutex_lock(&p->mu);
	p->keep = keep;
	shrink_to(p, keep);
	pthread_mutex_unlock(&p->mu);
}

size_t sfs_bufpool_trim(struct sfs_bufpool *p)
{
	size_t bytes;

	pthread_mutex_lock(&p->mu);
	bytes = shrink_to(p, 0);
	pthread_mutex_unlock(&p->mu);
	return bytes;
}

size_t sfs_bufpool_size(const struct sfs_bufpool *p)
{
	return p->size;
}

void sfs_bufpool_usage(struct sfs_bufpool *p, struct sfs_bufpool_usage *u)
{
	pthread_mutex_lock(&p->mu);
	u->size = p->size;
	u->keep = p->keep;
	u->in_use = p->in_use;
	u->free = p->nfree;
	u->peak = p->peak;
	pthread_mutex_unlock(&p->mu);
}

static pthread_once_t shared_once = PTHREAD_ONCE_INIT;
static struct sfs_bufpool *shared;

static void shared_init(void)
{
	if (sfs_bufpool_new(SFS_BUFPOOL_SIZE, 4, &shared) < 0)
		shared = NULL;
}

struct sfs_bufpool *sfs_bufpool_shared(void)
{
	pthread_once(&shared_once, shared_init);
	return shared;
}
