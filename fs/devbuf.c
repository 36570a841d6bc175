/* SPDX-License-Identifier: MIT */
/*
 * devbuf.c - the request buffers of the /dev/fuse loop (devloop.c).
 *
 * Each buffer is laid out as the workers' are (xport.c): a request is read
 * SFS_DEVBUF_HDR bytes before a page boundary, so the two headers of a
 * write end there and its data starts on a page, and a read's data goes
 * to the pages after its headers:
 *
 *   [ page ... | in | write_in ][ data: up to the largest payload ][ page ]
 *              ^ read here      ^ page-aligned
 *
 * The kernel takes buffers from a ring of provided buffers
 * (IORING_REGISTER_PBUF_RING), which holds only a few free ones, topped up
 * from a stack of the others as requests take them: a light load keeps
 * using the same few warm buffers, where a ring of all of them would
 * cycle through every one, a megabyte each (1 MiB writes at QD1: 332 us
 * of daemon CPU each with 8 buffers in the ring, 250 with 2, 246 for the
 * workers).  A burst that finds the ring empty ends the loop's multishot
 * read (-ENOBUFS): the ring then gets twice as many (up to SPARE_MAX);
 * after SPARE_DECAY requests without a shortage, half as many (down to
 * SPARE_MIN).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "devbuf.h"

#define SPARE_MIN 2
#define SPARE_MAX 32
#define SPARE_DECAY 1024

static size_t mem_len(const struct sfs_devbufs *p)
{
	return p->page + p->max_payload + p->page;
}

/* Keep p->want buffers in the kernel's ring, the most recently freed first. */
static void top_up(struct sfs_devbufs *p)
{
	unsigned added = 0;

	while (p->br && p->in_ring + added < p->want && p->nspare) {
		struct sfs_devbuf *b = p->spare[--p->nspare];

		io_uring_buf_ring_add(p->br, b->mem + p->page - SFS_DEVBUF_HDR,
				      (unsigned)(p->max_payload + p->page + SFS_DEVBUF_HDR), (unsigned short)b->bid,
				      io_uring_buf_ring_mask(p->br_entries), (int)added);
		added++;
	}
	if (added) {
		io_uring_buf_ring_advance(p->br, (int)added);
		p->in_ring += added;
	}
}

int sfs_devbufs_make(struct sfs_devbufs *p, unsigned n, size_t page, size_t max_payload)
{
	memset(p, 0, sizeof(*p));
	p->page = page;
	p->max_payload = max_payload;
	p->bufs = calloc(n, sizeof(*p->bufs));
	p->spare = calloc(n, sizeof(*p->spare));
	if (!p->bufs || !p->spare)
		goto fail;
	for (; p->n < n; p->n++) {
		struct sfs_devbuf *b = &p->bufs[p->n];

		b->bid = p->n;
		b->mem = mmap(NULL, mem_len(p), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->mem == MAP_FAILED) {
			b->mem = NULL;
			goto fail;
		}
	}
	/* the lowest ids on top of the stack */
	for (unsigned i = n; i-- > 0;)
		p->spare[p->nspare++] = &p->bufs[i];
	p->want = SPARE_MIN;
	return 0;
fail:
	sfs_devbufs_free(p);
	return -ENOMEM;
}

int sfs_devbufs_register(struct sfs_devbufs *p, struct io_uring *ring, unsigned bgid)
{
	struct io_uring_buf_reg reg = { 0 };
	int rc;

	for (p->br_entries = 1; p->br_entries < SPARE_MAX; p->br_entries *= 2)
		;
	p->br_len = (p->br_entries * sizeof(struct io_uring_buf) + p->page - 1) / p->page * p->page;
	p->br = mmap(NULL, p->br_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->br == MAP_FAILED) {
		p->br = NULL;
		return -ENOMEM;
	}
	reg.ring_addr = (uint64_t)(uintptr_t)p->br;
	reg.ring_entries = p->br_entries;
	reg.bgid = (uint16_t)bgid;
	if ((rc = io_uring_register_buf_ring(ring, &reg, 0)) < 0)
		return rc;
	p->bgid = bgid;
	io_uring_buf_ring_init(p->br);
	top_up(p);
	return 0;
}

struct sfs_devbuf *sfs_devbufs_taken(struct sfs_devbufs *p, unsigned bid, size_t n)
{
	struct sfs_devbuf *b;

	if (bid >= p->n)
		return NULL;
	b = &p->bufs[bid];
	b->st = SFS_DB_LOOP;
	b->at = b->mem + p->page - SFS_DEVBUF_HDR;
	b->n = n;
	if (n > b->touched)
		b->touched = n;
	p->in_ring--;
	if (++p->calm >= SPARE_DECAY && p->want > SPARE_MIN) {
		p->want /= 2;
		p->calm = 0;
	}
	top_up(p);
	return b;
}

void sfs_devbufs_put(struct sfs_devbufs *p, struct sfs_devbuf *b)
{
	b->st = SFS_DB_FREE;
	p->spare[p->nspare++] = b;
	top_up(p);
}

void sfs_devbufs_short(struct sfs_devbufs *p)
{
	p->calm = 0;
	if (p->want < SPARE_MAX)
		p->want *= 2;
	top_up(p);
}

void sfs_devbufs_trim(struct sfs_devbufs *p, size_t min)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct sfs_devbuf *b = &p->bufs[i];

		if (b->st != SFS_DB_FREE || b->touched < min)
			continue;
		if (madvise(b->mem, mem_len(p), MADV_DONTNEED) == 0)
			b->touched = 0;
	}
}

void sfs_devbufs_free(struct sfs_devbufs *p)
{
	for (unsigned i = 0; p->bufs && i < p->n; i++)
		if (p->bufs[i].mem)
			munmap(p->bufs[i].mem, mem_len(p));
	free(p->bufs);
	free(p->spare);
	if (p->br)
		munmap(p->br, p->br_len);
	memset(p, 0, sizeof(*p));
}
