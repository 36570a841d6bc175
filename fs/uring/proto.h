/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the FUSE over io_uring protocol (FUSE 7.42, Linux 6.14).
 *
 * Debian 12's <linux/fuse.h> is 7.38 and has none of it, so the layout is
 * spelled out here under names of our own (no clash with a newer header).
 * Each ring entry is two buffers the daemon registers with the kernel:
 *
 *   headers (iov[0])  in_out[128]   the fuse_in_header of a request; the
 *                                   daemon puts its fuse_out_header here
 *                     op_in[128]    the request's first argument, the
 *                                   per-opcode header (fuse_write_in, ...)
 *                     ring_ent_in_out   commit_id (the request's unique id),
 *                                   payload_sz: bytes of payload, either way
 *   payload (iov[1])  the other arguments of the request (a write's data,
 *                     a lookup's name); in a reply every argument of it,
 *                     fuse_open_out, a read's data and all; at least
 *                     max(8 KiB, max_write, max_pages pages) long
 *
 * Commands are IORING_OP_URING_CMD on /dev/fuse with 128-byte SQEs, the
 * command area holding a struct sfs_uring_cmd_req:
 *   REGISTER          give the kernel an entry (iovecs in sqe->addr, 2 in
 *                     sqe->len) on queue qid; completes when a request has
 *                     been placed in it.  Only once INIT is answered.
 *   COMMIT_AND_FETCH  the entry holds the reply to commit_id: take it and
 *                     complete when the next request is in the entry.
 * There is one queue per possible CPU; a request goes to the queue of the
 * CPU its caller runs on, and the kernel routes requests through the ring
 * only once every queue has an entry.  FORGET, INTERRUPT and notifications
 * stay on /dev/fuse.
 */
#ifndef SFS_URING_PROTO_H
#define SFS_URING_PROTO_H

#include <stdint.h>

/* INIT flag, in flags2 (bit 41 of the 64 flags): the daemon serves FUSE over io_uring */
#define SFS_FUSE_OVER_IO_URING (1ull << 41)
#define SFS_FUSE_INIT_EXT (1u << 30)

#define SFS_URING_IN_OUT_HEADER_SZ 128
#define SFS_URING_OP_IN_OUT_SZ 128

struct sfs_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

struct sfs_uring_req_header {
	char in_out[SFS_URING_IN_OUT_HEADER_SZ];
	char op_in[SFS_URING_OP_IN_OUT_SZ];
	struct sfs_uring_ent_in_out ring_ent_in_out;
};

enum sfs_uring_cmd {
	SFS_URING_CMD_REGISTER = 1,
	SFS_URING_CMD_COMMIT_AND_FETCH = 2,
};

struct sfs_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct sfs_uring_req_header) == 288, "fuse_uring_req_header is 288 bytes");
_Static_assert(sizeof(struct sfs_uring_cmd_req) == 24, "fuse_uring_cmd_req is 24 bytes");

#endif
