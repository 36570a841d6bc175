/* SPDX-License-Identifier: MIT */
/*
 * xport.h - the transport: the loop that carries requests from the kernel
 * to libfuse and their replies back (see xport.c).
 */
#ifndef SFS_XPORT_H
#define SFS_XPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "fuse_version.h"
#include <fuse_lowlevel.h>

#include "log.h"

struct sfs_xport_opts {
	unsigned max_threads;          /* worker threads reading /dev/fuse, at most (>= 1) */
	unsigned max_background;       /* what init asks the kernel for, for the start-up line */
	const struct sfs_log *log;
};

/*
 * Take over the session's I/O (fuse_session_custom_io): replies go through
 * the transport, which adds FOPEN_PARALLEL_DIRECT_WRITES to disk opens
 * (pdw.c).  Call once, after fuse_mount and before sfs_xport_loop.
 * 0, or -errno (nothing changed).
 */
int sfs_xport_install(struct fuse_session *se, const struct sfs_xport_opts *o);

/*
 * Serve the mount of f until its session exits (a signal handler's
 * fuse_session_exit, the unmount, a fatal error): workers start as
 * requests need them, up to max_threads.  When it returns every worker
 * has finished the request it had and ended; the session is reset, as
 * libfuse's loops leave it.  0, or the -errno that ended it.
 */
int sfs_xport_loop(struct fuse *f);

#endif
