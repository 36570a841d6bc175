/* SPDX-License-Identifier: MIT */
/*
 * xport.h - the transport: the loop that carries requests from the kernel
 * to libfuse and their replies back (see xport.c).
 */
#ifndef SFS_XPORT_H
#define SFS_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuse_version.h"
#include <fuse_lowlevel.h>

#include "util/log.h"

/* -o io_uring=: off (/dev/fuse only), auto (io_uring where the kernel offers it), on (io_uring or fail) */
enum sfs_uring_mode { SFS_URING_OFF, SFS_URING_AUTO, SFS_URING_ON };

struct sfs_xport_opts {
	unsigned max_threads;          /* worker threads, at most (>= 1); with io_uring shared out
	                                  among the CPU queues, at least one each */
	unsigned max_idle;             /* /dev/fuse workers kept waiting at most; more exit */
	enum sfs_uring_mode uring;
	bool loop;                     /* serve with event loops and helper threads
	                                  (over io_uring: uring/loop.c), not a thread per request */
	unsigned max_background;       /* what init asks the kernel for, for the start-up line */
	const struct sfs_log *log;
};

/*
 * Take over the session's I/O (fuse_session_custom_io): replies go through
 * the transport, which adds FOPEN_PARALLEL_DIRECT_WRITES to disk opens
 * (pdw.c).  Call once, after fuse_mount and before sfs_xport_loop.  Unless
 * o->uring is off, find out whether FUSE over io_uring can be used
 * (module parameter, io_uring itself).  0, or -errno (nothing changed):
 * -EOPNOTSUPP when o->uring is on and it cannot (the reason logged).
 */
int sfs_xport_install(struct fuse_session *se, const struct sfs_xport_opts *o);

/*
 * Requests served since the start, over either transport (the idle
 * thread, idle.c, watches it).
 */
uint64_t sfs_xport_requests(void);

/*
 * Ask every /dev/fuse worker waiting for a request whose buffer held 64 KiB
 * or more since it last dropped them to drop the buffer's pages: SIGTRIM
 * interrupts its read(2), and the worker itself calls madvise before it
 * reads again, so no request's bytes are lost.  Over io_uring, likewise
 * every ring entry's worker for its payload buffer (sfs_uring_trim).
 */
void sfs_xport_trim_buffers(void);

/*
 * The transport requests come through now: "io_uring" or "/dev/fuse".
 */
const char *sfs_xport_name(void);

/*
 * How the requests of that transport are served now: "loop" (event
 * loops, helper threads for the rest) or "threads" (a thread per
 * request).
 */
const char *sfs_xport_serving(void);

/*
 * For read_buf, on the thread that handles a READ: room for up to size
 * bytes of reply data, page-aligned, where the reply is written from
 * anyway (the ring entry's payload buffer, or the /dev/fuse worker's
 * request buffer after the request's headers), so nothing is allocated
 * and the data is not copied; NULL when size is more than that holds
 * (use a buffer of your own).  The memory is the transport's: never
 * free it, and hand it back with sfs_xport_lend.
 */
void *sfs_xport_reply_mem(size_t size);

/*
 * bv, the vector read_buf returns to libfuse, carries memory from
 * sfs_xport_reply_mem: when the reply is sent the transport clears
 * bv->buf[0].mem, so that libfuse frees only the vector.
 */
void sfs_xport_lend(struct fuse_bufvec *bv);

/*
 * Serve the mount of f until its session exits (a signal handler's
 * fuse_session_exit, the unmount, a fatal error): workers start as
 * requests need them, up to max_threads.  When it returns every worker
 * has finished the request it had and ended; the session is reset, as
 * libfuse's loops leave it.  0, or the -errno that ended it.
 */
int sfs_xport_loop(struct fuse *f);

#endif
