/* SPDX-License-Identifier: MIT */
/*
 * fast.c - the requests an event loop serves without libfuse: a READ or
 * WRITE of an open disk whose transfer core can plan (image/fast.h).
 *
 * With libfuse's high-level API the fh of a fuse_read_in or fuse_write_in
 * is the handle sfs_open put in fi->fh (io.c), and libfuse would call
 * sfs_read_buf / sfs_write_buf with it and nothing else: the path is not
 * needed (nullpath_ok), the flags are the open file's (with O_DSYNC for a
 * RWF_DSYNC write), the requester is the in-header's pid.  So a loop can
 * decode the two requests itself and call core as io.c does: O_DIRECT or
 * not by the flags; a creator's handle (a growing image) and O_DSYNC
 * writes, which need more than one transfer, stay with libfuse, as does
 * every other request and every handle that is not a disk's.  An FSYNC
 * of a disk whose map has nothing to write is its backing file's
 * fdatasync (sfs_fsync: sfs_image_flush).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <unistd.h>

#include "fast.h"
#include "ops_impl.h"
#include "stats/recent.h"

/* The open disk behind fh, or NULL when it is not one the fast path takes. */
static struct sfs_image *disk_of(uint64_t fh)
{
	const struct handle *h = (const struct handle *)(uintptr_t)fh;

	return h && h->kind == SFS_MPATH_IMAGE && !h->creator ? h->im : NULL;
}

enum sfs_fast sfs_fast_begin(const char *at, size_t n, char *rbuf, size_t rcap, struct sfs_fast_req *fr,
			     ssize_t *res)
{
	const struct fuse_in_header *in = (const void *)at;
	const size_t hl = sizeof(*in);
	struct sfs_image *im;

	if (n < hl)
		return SFS_FAST_SLOW;
	fr->opcode = in->opcode;
	if (in->opcode == FUSE_READ && n >= hl + sizeof(struct fuse_read_in)) {
		const struct fuse_read_in *ri = (const void *)(at + hl);

		if (ri->size > rcap || !(im = disk_of(ri->fh)))
			return SFS_FAST_SLOW;
		sfs_requester_set((int32_t)in->pid);
		fr->buf = rbuf;
		return sfs_image_fast_read(im, rbuf, ri->size, ri->offset, ri->flags & O_DIRECT, &fr->io, res);
	}
	if (in->opcode == FUSE_WRITE && n >= hl + sizeof(struct fuse_write_in)) {
		const struct fuse_write_in *wi = (const void *)(at + hl);

		if (n - hl - sizeof(*wi) != wi->size || (wi->flags & O_DSYNC) || !(im = disk_of(wi->fh)))
			return SFS_FAST_SLOW;
		sfs_requester_set((int32_t)in->pid);
		fr->buf = (char *)(at + hl + sizeof(*wi));
		return sfs_image_fast_write(im, fr->buf, wi->size, wi->offset, wi->flags & O_DIRECT, &fr->io, res);
	}
	if (in->opcode == FUSE_FSYNC && n >= hl + sizeof(struct fuse_fsync_in)) {
		const struct fuse_fsync_in *fi = (const void *)(at + hl);

		if (!(im = disk_of(fi->fh)))
			return SFS_FAST_SLOW;
		return sfs_image_fast_flush(im, &fr->io);
	}
	return SFS_FAST_SLOW;
}

void sfs_fast_prep(struct io_uring_sqe *sqe, const struct sfs_fast_req *fr)
{
	if (fr->io.op == SFS_FAST_SYNC)
		io_uring_prep_fsync(sqe, fr->io.fd, IORING_FSYNC_DATASYNC);
	else if (fr->io.op == SFS_FAST_WRITE)
		io_uring_prep_write(sqe, fr->io.fd, fr->buf, (unsigned)fr->io.len, fr->io.off);
	else
		io_uring_prep_read(sqe, fr->io.fd, fr->buf, (unsigned)fr->io.len, fr->io.off);
}

ssize_t sfs_fast_block(const struct sfs_fast_req *fr)
{
	ssize_t res;

	if (fr->io.op == SFS_FAST_SYNC)
		res = fdatasync(fr->io.fd);
	else if (fr->io.op == SFS_FAST_WRITE)
		res = pwrite(fr->io.fd, fr->buf, fr->io.len, (off_t)fr->io.off);
	else
		res = pread(fr->io.fd, fr->buf, fr->io.len, (off_t)fr->io.off);
	return res < 0 ? -errno : res;
}

bool sfs_fast_interrupt(const char *at, size_t n, uint64_t *target)
{
	const struct fuse_in_header *in = (const void *)at;

	if (n < sizeof(*in) + sizeof(struct fuse_interrupt_in) || in->opcode != FUSE_INTERRUPT)
		return false;
	*target = ((const struct fuse_interrupt_in *)(const void *)(at + sizeof(*in)))->unique;
	return true;
}

enum sfs_fast sfs_fast_end(struct sfs_fast_req *fr, ssize_t done, ssize_t *res)
{
	return sfs_image_fast_end(&fr->io, done, res);
}
