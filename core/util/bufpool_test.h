/* SPDX-License-Identifier: MIT */
/*
 * bufpool_test.h - the tests' view of the buffer pools (bufpool.h): a
 * pool of one's own, of any size and keep, its end, and its counts, with
 * which test_bufpool.c checks what is kept and given back.  bufpool.c
 * makes the shared pool with sfs_bufpool_new too; nothing in fs/ or
 * tools/ includes this.
 */
#ifndef SFS_BUFPOOL_IMPL_H
#define SFS_BUFPOOL_IMPL_H

#include <stddef.h>

#include "bufpool.h"

/* What a pool holds. */
struct sfs_bufpool_usage {
	size_t size;            /* bytes per buffer */
	unsigned keep;          /* free buffers kept at most */
	unsigned in_use;        /* handed out now */
	unsigned free;          /* kept, mapped, free */
	unsigned peak;          /* the most handed out at once */
};

/* A pool of buffers of size bytes (> 0; rounded up to whole pages), keeping at most keep
 * free ones.  0, -EINVAL (size 0) or -ENOMEM. */
int sfs_bufpool_new(size_t size, unsigned keep, struct sfs_bufpool **out);

/* Unmap every free buffer and free p (NULL is fine).  Precondition: every buffer put back. */
void sfs_bufpool_free(struct sfs_bufpool *p);

/* Counts of p into *u. */
void sfs_bufpool_usage(struct sfs_bufpool *p, struct sfs_bufpool_usage *u);

#endif
