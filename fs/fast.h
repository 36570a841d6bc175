/* SPDX-License-Identifier: MIT */
/*
 * fast.h - the requests an event loop serves without libfuse (see fast.c):
 * reads, writes and flushes of a disk, planned by core (image/fast.h).
 */
#ifndef SFS_FAST_H
#define SFS_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <liburing.h>

#include "image/fast.h"

/* One request on the fast path, from its plan to its reply. */
struct sfs_fast_req {
	struct sfs_fast_io io;         /* an ISSUE's transfer: io.fd, io.off, io.len */
	uint32_t opcode;               /* FUSE_READ, FUSE_WRITE or FUSE_FSYNC */
	char *buf;                     /* the transfer's memory: where a read's data goes, a write's is */
};

/*
 * The request of n bytes at at (fuse_in_header, then the per-opcode
 * header, then for a write its data, which must start on a page): SLOW
 * for anything but a READ, WRITE or FSYNC of an open disk that core's
 * plan takes (then hand it to libfuse as it is), DONE with *res (what the
 * reply carries: bytes, or -errno) or ISSUE
 * (transfer fr->io.len bytes between fr->buf and fr->io.fd at
 * fr->io.off, or fdatasync fr->io.fd for SFS_FAST_SYNC, then
 * sfs_fast_end).  A read's data
 * goes to rbuf, which must be page-aligned and hold rcap bytes (a read
 * that does not fit is SLOW).  The thread's requester becomes the
 * request's process (the recent lists name it).
 */
enum sfs_fast sfs_fast_begin(const char *at, size_t n, char *rbuf, size_t rcap, struct sfs_fast_req *fr,
			     ssize_t *res);

/*
 * Is the request of n bytes at at an INTERRUPT?  Then *target is the
 * unique id of the request it interrupts.  A loop hands it to libfuse only
 * while that request is with libfuse (a helper serves it); one for a
 * request of the fast path, or one answered already, is dropped: the
 * fast path is not interrupted, the kernel needs no answer to an
 * interrupt, and libfuse would keep one it cannot match until the next
 * request it processes, which may never come (a leak at exit).
 */
bool sfs_fast_interrupt(const char *at, size_t n, uint64_t *target);

/* Prepare fr's ISSUE on sqe: the read, write or fdatasync of its plan (user_data left alone). */
void sfs_fast_prep(struct io_uring_sqe *sqe, const struct sfs_fast_req *fr);

/* Do fr's ISSUE blocking, on this thread: bytes moved (0 for the sync), or -errno. */
ssize_t sfs_fast_block(const struct sfs_fast_req *fr);

/* An ISSUE's transfer ended with done (bytes, or -errno): DONE with *res, or SLOW (hand the
 * request, as it came, to libfuse, which redoes it the blocking way). */
enum sfs_fast sfs_fast_end(struct sfs_fast_req *fr, ssize_t done, ssize_t *res);

#endif
