/* SPDX-License-Identifier: MIT */
/*
 * uring.h - FUSE over io_uring: the ring workers (set up, started and
 * stopped in setup.c, their loop in worker.c), what the system
 * offers them (sys.c), and what they and the transport (xport.c)
 * call of each other.
 */
#ifndef SFS_URING_H
#define SFS_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fuse_version.h"

#include "util/log.h"

/* The module parameter that turns FUSE over io_uring on (Linux 6.14 and later). */
#define SFS_URING_PARAM "/sys/module/fuse/parameters/enable_uring"

struct sfs_uring_ent;

/* SFS_URING_PARAM: 1 (Y), 0 (N), -ENOENT (no such parameter: the kernel has
 * no FUSE over io_uring), or another -errno of reading it. */
int sfs_uring_param(void);

/*
 * Whether this process can serve /dev/fuse descriptor fd over io_uring at
 * all: a ring of 128-byte SQEs that knows IORING_OP_URING_CMD, with fd
 * registered in it.  It is kept as the fall-back ring (sfs_uring_start).
 * 0, or -errno with the reason in why.
 */
int sfs_uring_probe(int fd, char *why, size_t whylen);

struct sfs_uring_cfg {
	unsigned depth;                /* entries (worker threads) per queue, >= 1 */
	size_t max_payload;            /* payload buffer of an entry: the kernel's maximum */
	bool pin;                      /* pin each worker to the CPU of its queue */
	bool loop;                     /* event loops (loop.c) instead of a worker per entry */
	unsigned helpers, helpers_idle;   /* with loop: the helper threads at most, and kept waiting */
	const struct sfs_log *log;
};

/*
 * After the kernel has INIT's reply with FUSE_OVER_IO_URING: start
 * depth worker threads per queue, each with a ring of its own and one
 * entry registered; return once each has registered or failed.  0: every
 * queue has entries, the kernel now sends requests through them.  -errno:
 * some queue has none; the kernel has been told to fall back (a REGISTER
 * it refuses, which turns io_uring off for the connection), requests stay
 * on /dev/fuse, and the workers that did start keep their entries idle.
 */
int sfs_uring_start(const struct sfs_uring_cfg *cfg);

/* The queues the kernel makes: one per possible CPU (/sys/devices/system/cpu/possible). */
unsigned sfs_uring_nr_queues(void);

/* The event loops that serve nq queues with sfs_uring_cfg.loop (loop.c). */
unsigned sfs_uring_nr_loops(unsigned nq);

/* Queues and entries in use (0 before a successful start). */
unsigned sfs_uring_queues(void);
unsigned sfs_uring_depth(void);

/*
 * The reply iov[0..count) (fuse_out_header, then arguments) to the request
 * entry e holds: header and arguments go into e's buffers (arguments that
 * are already where they belong, as a read's lent buffer is, are not
 * copied) and e commits it when its worker is back from the handler.
 * Returns the reply's length, as writev would, or -EINVAL (arguments longer
 * than the payload buffer: the reply becomes -EIO).
 */
ssize_t sfs_uring_reply(struct sfs_uring_ent *e, const struct iovec *iov, int count);

/* The entry whose request has this unique id, for a reply from another
 * thread than its worker's (not expected with the high-level API); NULL. */
struct sfs_uring_ent *sfs_uring_find(uint64_t unique);

/* Room for up to size bytes of reply data in e's payload buffer (page-aligned), where the
 * reply goes anyway, or NULL when it does not fit. */
void *sfs_uring_reply_mem(struct sfs_uring_ent *e, size_t size);

/* bv, a read_buf vector libfuse frees once the reply is sent, holds e's payload buffer:
 * clear bv->buf[0].mem when the reply comes, so libfuse frees the vector only. */
void sfs_uring_lend(struct sfs_uring_ent *e, struct fuse_bufvec *bv);

/*
 * Ask every worker whose payload buffer held min bytes or more since it
 * last dropped its pages to drop them, which it does itself once its entry
 * waits in the kernel with no request copied in (worker.c, "Idle"), so no
 * request's bytes are lost.  Entries whose ring runs task work outside
 * the worker's wait (no IORING_SETUP_DEFER_TASKRUN) are left alone.
 * Returns the workers asked (0 before a successful start).
 */
unsigned sfs_uring_trim(size_t min);

/*
 * Wake every worker, let each finish and commit the request it has, join
 * them and close their rings (and the fall-back ring), so that nothing
 * holds /dev/fuse open any more.  Safe when nothing was started.
 */
void sfs_uring_stop(void);

/* Implemented by xport.c: hand the request of n bytes at at to libfuse;
 * replies are for entry e (NULL: /dev/fuse). */
void sfs_xport_serve(char *at, size_t n, struct sfs_uring_ent *e);

/* Implemented by xport.c: one request served without sfs_xport_serve (an event loop's fast
 * path), for sfs_xport_requests. */
void sfs_xport_note_request(void);

#endif
