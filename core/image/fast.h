/* SPDX-License-Identifier: MIT */
/*
 * fast.h - a read or write of an image that its caller transfers
 * itself, asynchronously: the fast path of an event loop.
 *
 * sfs_image_read and sfs_image_write block in pread and pwrite.  Most of
 * what a VM or a database does once its disk is warm needs nothing else:
 * aligned reads and overwrites of blocks already allocated, on an image
 * without a device profile.  For those, core gives the caller a plan (one
 * backing transfer: descriptor, offset, length), the caller does it with
 * its own asynchronous I/O (io_uring) and hands the result back; core then
 * completes the request as sfs_image_read/write would have (statistics,
 * latency).  Everything else is SLOW: the caller runs sfs_image_read/write
 * (or the _any variants) instead, on a thread that may block.
 *
 *   sfs_image_fast_read/write/flush --SLOW--> the blocking call, as before
 *        |        \--DONE--> *res is the answer (refused, zeros, 0 at the end)
 *        ISSUE
 *        v
 *   caller: pread/pwrite(io.fd, buf, io.len, io.off) or fdatasync(io.fd),
 *           asynchronously
 *        v
 *   sfs_image_fast_end(io, result) --DONE--> *res is the answer
 *                                  \--SLOW--> redo it the blocking way
 *
 * What is SLOW (each rule of image.c that is not one transfer):
 *  - a request of a handle without O_DIRECT that is not whole logical
 *    sectors (the page cache's read-modify-write);
 *  - an image with a device profile (the model's wait), an image with a
 *    failure state (fail.h: a volatile write cache, bad sectors, the
 *    power: every transfer goes through its hooks), a growing image
 *    (writes extend it, its capacity may be given back), an image whose
 *    requests take their range in the range lock (sfs_image_need_ranges:
 *    buffered backing I/O, or a read-modify-write happened);
 *  - a span of blocks not all allocated (a first write zeroes, a read
 *    mixes zeros and data), except a read of blocks none of which is
 *    allocated: DONE, zeros, no I/O;
 *  - a transfer O_DIRECT cannot take (buffer, offset or length off the
 *    backing file's alignment);
 *  - a flush that has allocations to write (sfs_map_flushed): the map's
 *    pages are written after the data is synced, under the map's lock;
 *  - a transfer that ended short or failed (sfs_image_fast_end): the
 *    blocking path redoes it and reports what it finds (zeros past the
 *    end of a short backing file, the error).
 * A rule added to image.c's I/O must be added here too, as SLOW if
 * nothing else.
 *
 * Refusals are answered here with their counters, as the blocking calls
 * count them (misaligned_rejected, out of range, the recent list with
 * the requester of sfs_requester_set).  A plan enters the image's stats
 * cell (stats/cell.h) and leaves it when it answers, or, for an ISSUE,
 * in fast_end, so idle packing never frees the stats a request records
 * into.  Between an ISSUE and its
 * fast_end the request is counted among those in flight without a range
 * (image.c, range_lock), so sfs_image_need_ranges waits for it: the
 * thread that calls fast_end must never be one that can call
 * sfs_image_need_ranges meanwhile.  The image stays pinned by the caller
 * (an open handle) from the plan to fast_end.
 */
#ifndef SFS_IMAGE_FAST_H
#define SFS_IMAGE_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sfs_image;

enum sfs_fast {
	SFS_FAST_SLOW,     /* not for the fast path: nothing done, nothing counted */
	SFS_FAST_DONE,     /* answered: *res is the request's result (bytes, 0, or -errno) */
	SFS_FAST_ISSUE,    /* transfer io->len bytes at io->off of io->fd, then sfs_image_fast_end */
};

enum sfs_fast_op { SFS_FAST_READ, SFS_FAST_WRITE, SFS_FAST_SYNC };

/* The plan of one request.  fd, off, len and op are the caller's to read; the rest is core's. */
struct sfs_fast_io {
	int fd;                  /* the backing file: O_DIRECT for a transfer */
	uint64_t off;            /* where in it (the disk offset) */
	size_t len;              /* bytes to transfer (a read across the end: what is left; 0: sync) */
	enum sfs_fast_op op;     /* pread, pwrite, or fdatasync of fd */
	struct sfs_image *im;
	uint64_t t0;             /* the request's start (stats) */
	bool rmw;                /* a write covering a physical sector in part */
};

/*
 * Plan a read of len bytes at off into buf; direct: the handle is
 * O_DIRECT (else the page cache's rules apply, and only whole logical
 * sectors can be fast).  SLOW, DONE with *res (-EINVAL: misaligned,
 * counted; 0: at or past the end; the byte count of a read of blocks
 * never written, buf zeroed, counted as a read), or ISSUE with *io set
 * (read io->len bytes of io->fd at io->off into buf).  Precondition: im
 * pinned.
 */
enum sfs_fast sfs_image_fast_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, bool direct,
				  struct sfs_fast_io *io, ssize_t *res);

/*
 * Plan a write of len bytes at off from buf (direct as for a read).
 * SLOW, DONE with *res (-EINVAL misaligned, -ENOSPC past the end: both
 * counted, nothing written; 0 for len 0), or ISSUE with *io set (write
 * io->len bytes of buf at io->off of io->fd); the image is marked
 * written (the next flush syncs it).  Precondition: im pinned.
 */
enum sfs_fast sfs_image_fast_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off, bool direct,
				   struct sfs_fast_io *io, ssize_t *res);

/*
 * Plan a flush (fsync or fdatasync of the disk): SLOW when it needs more
 * than the backing file's fdatasync (allocations to write to the map, or
 * a flush of the map under way; a profile; a growing image; an image
 * that takes ranges, whose reads and writes are SLOW too), else ISSUE
 * with *io set (op SFS_FAST_SYNC: fdatasync io->fd, then fast_end with 0
 * or -errno).  Precondition: im pinned.
 */
enum sfs_fast sfs_image_fast_flush(struct sfs_image *im, struct sfs_fast_io *io);

/*
 * The transfer of an ISSUE ended with done (bytes moved, or -errno).  A
 * whole transfer: DONE with *res the request's result, counted in the
 * stats with its latency.  Anything else: SLOW, nothing counted (redo the
 * request with the blocking call).  Either way io is spent.
 */
enum sfs_fast sfs_image_fast_end(struct sfs_fast_io *io, ssize_t done, ssize_t *res);

#endif
