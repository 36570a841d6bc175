/* SPDX-License-Identifier: MIT */
/*
 * devloop.h - /dev/fuse served by an event loop (devloop.c), and what it
 * and the transport (xport.c) call of each other.
 */
#ifndef SFS_DEVLOOP_H
#define SFS_DEVLOOP_H

#include <stddef.h>

#include "util/log.h"

struct sfs_devloop_cfg {
	int fd;                        /* /dev/fuse, the session's: the loop makes it O_NONBLOCK */
	size_t page, max_payload;      /* a request's data at most (libfuse 3.14: 256 pages) */
	unsigned nbufs;                /* requests in the loop's hands at once, at most (>= 1) */
	const struct sfs_log *log;
};

/*
 * Start the loop's thread: from now on it takes every request of
 * /dev/fuse (INIT included) and serves it, through a helper thread
 * (helpers.h, started by the caller) when it is not one for its fast
 * path.  0 or -errno (logged; nothing left started).
 */
int sfs_devloop_start(const struct sfs_devloop_cfg *cfg);

/*
 * Let the helpers' and the loop's requests in hand be answered, end the
 * loop and join it, then free its buffers once the helpers are stopped
 * (sfs_helpers_stop first: a helper may hold one).  Safe when not started.
 */
void sfs_devloop_stop(void);

/* Free what sfs_devloop_stop left for after the helpers' stop. */
void sfs_devloop_free(void);

/* Ask the loop to drop the pages of its buffers not in use that held min bytes or more since
 * they were last dropped; it does so between two of its waits.  0 when not running, else 1. */
unsigned sfs_devloop_trim(size_t min);

/* Implemented by xport.c: hand the /dev/fuse request of n bytes at at to libfuse; a READ's
 * reply may be read into rbuf (max_payload bytes, page-aligned), *touched raised to what it used. */
void sfs_xport_serve_dev(char *at, size_t n, char *rbuf, size_t *touched);

/* Implemented by xport.c: the session ended (err -errno, or 0 for the unmount). */
void sfs_xport_end(int err);

#endif
