/* SPDX-License-Identifier: MIT */
/*
 * idle.h - give memory back once the mount has been quiet a while (see idle.c).
 */
#ifndef SFS_IDLE_H
#define SFS_IDLE_H

struct sfs_idle;
struct sfs_store;

/* Start the thread that watches the requests (sfs_xport_requests) and, after quiet_ms without
 * any following some, gives memory back: workers' request buffers, the shared buffer pool's
 * free buffers, the allocator's free pages; and every quiet_ms gives back what store's idle
 * images hold (sfs_store_idle; NULL: no store).  0 or -errno. */
int sfs_idle_start(unsigned quiet_ms, struct sfs_store *store, struct sfs_idle **out);

/* Stop and join the thread (NULL is fine). */
void sfs_idle_stop(struct sfs_idle *id);

#endif
