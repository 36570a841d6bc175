/* SPDX-License-Identifier: MIT */
/*
 * devbuf.h - the request buffers of the /dev/fuse loop (see devbuf.c) and
 * what the loop keeps in each about its request.
 */
#ifndef SFS_DEVBUF_H
#define SFS_DEVBUF_H

#include <linux/fuse.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fast.h"
#include "helpers.h"

/* A request's two headers before a write's data: 80 bytes, so the data starts on a page. */
#define SFS_DEVBUF_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))

enum sfs_devbuf_state { SFS_DB_FREE, SFS_DB_LOOP, SFS_DB_HELPER };

/* One buffer, and the request in it while there is one. */
struct sfs_devbuf {
	unsigned bid;                  /* its id in the ring of provided buffers */
	enum sfs_devbuf_state st;      /* FREE: in the kernel's ring or on the stack of spares */
	char *mem;                     /* mmap: a page, the largest payload, a page */
	char *at;                      /* the request, n bytes, read at mem + page - SFS_DEVBUF_HDR */
	size_t n;
	size_t touched;                /* bytes used since its pages were dropped */
	uint64_t unique;
	atomic_bool in_libfuse;        /* a helper has the request in libfuse now */
	struct sfs_fast_req fr;
	struct fuse_out_header oh;
	struct fuse_write_out wo;
	struct iovec iov[2];
	struct sfs_job job;            /* to a helper, and back */
};

struct sfs_devbufs {
	struct sfs_devbuf *bufs;
	unsigned n;
	size_t page, max_payload;
	struct sfs_devbuf **spare;     /* free buffers not in the ring: a stack, the warmest on top */
	unsigned nspare, in_ring;
	unsigned want;                 /* free buffers to keep in the ring */
	unsigned calm;                 /* requests since the ring last ran out */
	struct io_uring_buf_ring *br;
	size_t br_len;
	unsigned br_entries, bgid;
};

/* n buffers for requests of up to max_payload bytes of data, not yet given to a ring.  0 or
 * -ENOMEM (nothing left allocated). */
int sfs_devbufs_make(struct sfs_devbufs *p, unsigned n, size_t page, size_t max_payload);

/* Give p's ring of provided buffers to ring as group bgid, with a few of the buffers in it.  0
 * or -errno. */
int sfs_devbufs_register(struct sfs_devbufs *p, struct io_uring *ring, unsigned bgid);

/* Buffers in the kernel's ring now (a read can take one). */
static inline unsigned sfs_devbufs_in_ring(const struct sfs_devbufs *p)
{
	return p->in_ring;
}

/* A read took buffer bid: it, set up for the request of n bytes in it; NULL for an id that is
 * not p's. */
struct sfs_devbuf *sfs_devbufs_taken(struct sfs_devbufs *p, unsigned bid, size_t n);

/* b is free again. */
void sfs_devbufs_put(struct sfs_devbufs *p, struct sfs_devbuf *b);

/* A read found the ring empty (-ENOBUFS): keep more in it. */
void sfs_devbufs_short(struct sfs_devbufs *p);

/* Drop the pages of the free buffers that held min bytes or more since they were last
 * dropped.  Only where nothing can write into a free buffer meanwhile (devloop.c, "Idle"). */
void sfs_devbufs_trim(struct sfs_devbufs *p, size_t min);

/* Unmap everything (the ring unregistered or gone). */
void sfs_devbufs_free(struct sfs_devbufs *p);

#endif
