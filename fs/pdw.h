/* SPDX-License-Identifier: MIT */
/*
 * pdw.h - ask the kernel for parallel direct writes on disk images (see pdw.c).
 */
#ifndef SFS_PDW_H
#define SFS_PDW_H

#include <stdint.h>
#include <sys/uio.h>

/* The reply iov[0..count) (a fuse_out_header, then the arguments) answers a
 * request of this opcode: if it is a successful OPEN or CREATE reply with
 * FOPEN_DIRECT_IO, add FOPEN_PARALLEL_DIRECT_WRITES to it in place. */
void sfs_pdw_patch(uint32_t opcode, struct iovec *iov, int count);

#endif
