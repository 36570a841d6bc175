/* SPDX-License-Identifier: MIT */
/*
 * bufpool.h - page-aligned I/O buffers of one size, reused instead of
 * allocated per request.
 *
 * A pool keeps up to `keep` free buffers (the daemon sets it to its
 * number of worker threads, each of which holds at most one at a time);
 * a buffer put back beyond that is unmapped, and sfs_bufpool_trim()
 * unmaps every free one, so memory a burst of I/O took is given back.
 * Buffers are anonymous mappings of their own, not heap memory: they never
 * pin an allocator arena and are 4096-aligned for O_DIRECT.  get never
 * waits: when every kept buffer is in use it maps another.
 *
 * sfs_bufpool_shared() is the process's pool of SFS_BUFPOOL_SIZE buffers,
 * which images take their bounce and read-modify-write buffers from; it
 * is the only pool sectorfs makes (pools of other sizes, their end and
 * their counts are the tests', bufpool_test.h).
 */
#ifndef SFS_BUFPOOL_H
#define SFS_BUFPOOL_H

#include <stddef.h>

/* The shared pool's buffer size: a 1 MiB transfer and room around it for whole sectors of up
 * to 64 KiB at either end. */
#define SFS_BUFPOOL_SIZE ((1u << 20) + (128u << 10))

struct sfs_bufpool;

/* A buffer of sfs_bufpool_size(p) bytes, 4096-aligned, contents undefined; NULL when out of
 * memory. */
void *sfs_bufpool_get(struct sfs_bufpool *p);

/* Give back buffer b (from sfs_bufpool_get of p; NULL is fine). */
void sfs_bufpool_put(struct sfs_bufpool *p, void *b);

/* Keep at most keep free buffers from now on (the excess is unmapped at once). */
void sfs_bufpool_set_keep(struct sfs_bufpool *p, unsigned keep);

/* Unmap every free buffer: the bytes given back. */
size_t sfs_bufpool_trim(struct sfs_bufpool *p);

/* Bytes per buffer of p. */
size_t sfs_bufpool_size(const struct sfs_bufpool *p);

/* The process's pool of SFS_BUFPOOL_SIZE buffers (keeping 4 until set otherwise); made on the
 * first call, never freed; NULL only when it cannot be allocated. */
struct sfs_bufpool *sfs_bufpool_shared(void);

#endif
