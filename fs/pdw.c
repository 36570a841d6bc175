/* SPDX-License-Identifier: MIT */
/*
 * pdw.c - parallel direct writes on libfuse versions that cannot ask for them.
 *
 * The kernel takes a file's inode lock for every direct_io write unless
 * the open reply carries FOPEN_PARALLEL_DIRECT_WRITES (Linux 6.2+), so
 * without it writes to different blocks of one disk run one at a time.
 * libfuse gained a fuse_file_info bit for it in 3.15; with older libfuse
 * the transport (xport.c), which sees every reply on its way to the
 * kernel and knows the request it answers, hands the successful replies
 * to OPEN and CREATE here, and the flag is added to those that already
 * carry FOPEN_DIRECT_IO (disk images; stats files are left alone).
 * Kernels that do not know the flag ignore it.
 */
#include <linux/fuse.h>
#include <sys/uio.h>

#include "pdw.h"

void sfs_pdw_patch(uint32_t opcode, struct iovec *iov, int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_open_out *o;

	if ((opcode != FUSE_OPEN && opcode != FUSE_CREATE) || iov[0].iov_len < sizeof(*out) ||
	    out->error != 0 || count < 2 || iov[1].iov_len < sizeof(*o))
		return;
	/* OPEN replies are a fuse_open_out; CREATE replies end with one. */
	o = (struct fuse_open_out *)((char *)iov[1].iov_base + iov[1].iov_len - sizeof(*o));
	if (o->open_flags & FOPEN_DIRECT_IO)
		o->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
}
