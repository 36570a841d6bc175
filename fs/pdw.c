/* SPDX-License-Identifier: MIT */
/*
 * pdw.c - parallel direct writes on libfuse versions that cannot ask for them.
 *
 * The kernel takes a file's inode lock for every direct_io write unless
 * the open reply carries FOPEN_PARALLEL_DIRECT_WRITES (Linux 6.2+), so
 * without it writes to different blocks of one disk run one at a time.
 * libfuse gained a fuse_file_info bit for it in 3.15; with older libfuse
 * sectorfs installs a thin custom I/O layer on the session's /dev/fuse
 * descriptor: the read hook notes the unique id of each OPEN and CREATE
 * request, and the writev hook adds the flag to the successful reply of
 * those requests when it already carries FOPEN_DIRECT_IO (disk images;
 * stats files are left alone).  Everything else passes through untouched.
 * Kernels that do not know the flag ignore it.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pdw.h"
#include <fuse_lowlevel.h>

#define PENDING_MAX 256

/* OPEN/CREATE requests between their read and their reply.  The session
 * gives the hooks no context of their own, hence one table per process. */
static struct {
	pthread_mutex_t lock;
	uint64_t unique[PENDING_MAX];
	unsigned n;
} pending = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };

static void remember(uint64_t unique)
{
	pthread_mutex_lock(&pending.lock);
	if (pending.n < PENDING_MAX)
		pending.unique[pending.n++] = unique;
	pthread_mutex_unlock(&pending.lock);
}

static int forget(uint64_t unique)
{
	int found = 0;

	pthread_mutex_lock(&pending.lock);
	for (unsigned i = 0; i < pending.n; i++) {
		if (pending.unique[i] == unique) {
			pending.unique[i] = pending.unique[--pending.n];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&pending.lock);
	return found;
}

static ssize_t pdw_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	if (n >= (ssize_t)sizeof(struct fuse_in_header)) {
		const struct fuse_in_header *in = buf;

		if (in->opcode == FUSE_OPEN || in->opcode == FUSE_CREATE)
			remember(in->unique);
	}
	return n;
}

static ssize_t pdw_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *out = iov[0].iov_base;

	if (iov[0].iov_len >= sizeof(*out) && __atomic_load_n(&pending.n, __ATOMIC_RELAXED) &&
	    forget(out->unique) && out->error == 0 && count >= 2 &&
	    iov[1].iov_len >= sizeof(struct fuse_open_out)) {
		/* OPEN replies are a fuse_open_out; CREATE replies end with one. */
		struct fuse_open_out *o = (struct fuse_open_out *)
			((char *)iov[1].iov_base + iov[1].iov_len - sizeof(*o));

		if (o->open_flags & FOPEN_DIRECT_IO)
			o->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
	}
	return writev(fd, iov, count);
}

int sfs_pdw_install(struct fuse_session *se)
{
	static const struct fuse_custom_io io = { .read = pdw_read, .writev = pdw_writev };
	int fd = fuse_session_fd(se);

	if (fd < 0)
		return -EBADF;
	return fuse_session_custom_io(se, &io, fd) < 0 ? -EINVAL : 0;
}
