/* SPDX-License-Identifier: MIT */
/*
 * recent.h - the last I/Os of one kind, with the process that asked.
 *
 * Each image keeps two of these rings in its statistics (stats.c): the
 * last SFS_RECENT_MAX refused I/Os (misaligned: EINVAL, out of range:
 * ENOSPC) and the last SFS_RECENT_MAX read-modify-write writes.  An entry
 * says when (CLOCK_REALTIME), what (operation, offset, length, errno) and
 * who: the requester the daemon named for the calling thread with
 * sfs_requester_set() before it called the image, and that requester's
 * command name, read from /proc/PID/comm when the entry is recorded.
 *
 * Recording is lock-free: a writer takes a sequence number with one
 * atomic add, claims the slot of that number with a CAS on the slot's own
 * sequence word (odd while it writes), stores the fields and publishes
 * the slot with an even sequence.  Only a writer whose slot another
 * writer still holds (64 entries later, so never in practice) waits for
 * it.  A reader copies the slots back from the newest and keeps a slot
 * only when its sequence word is the published one for the number it
 * expects before and after the copy.  Clearing moves a floor up to the
 * current number: entries below it are no longer listed.
 *
 * The requester is a thread's own (thread-local): the daemon sets it from
 * each FUSE request (fuse_get_context()->pid, the id of the requesting
 * thread, in the daemon's pid namespace; 0 when it has none there) before
 * the image call that may record.  Reading the command name costs one
 * pread(2) of a descriptor each thread keeps open on /proc/PID/comm of
 * the last requester it saw (reopened when the pid changes, or when the
 * task behind it is gone: procfs then fails the read with ESRCH, so a pid
 * reused by a new process never shows the old one's name); it is paid by
 * recorded I/Os only.
 */
#ifndef SFS_RECENT_H
#define SFS_RECENT_H

#include <stddef.h>
#include <stdint.h>

#define SFS_RECENT_MAX 64   /* entries kept per ring; a power of two */
#define SFS_COMM_LEN 64     /* as /proc/PID/comm shows it: up to 63 bytes for a kernel worker (kworker/u8:1+loop0) */

/* What an entry's I/O was. */
enum sfs_io_op {
	SFS_OP_READ = 0,
	SFS_OP_WRITE = 1,
	SFS_OP_DISCARD = 2,        /* fallocate PUNCH_HOLE */
	SFS_OP_WRITE_ZEROES = 3,   /* fallocate ZERO_RANGE */
	SFS_OP_NCLASS = 4,
};

/* One recorded I/O: plain data, safe to copy. */
struct sfs_recent_io {
	uint64_t time_ns;          /* CLOCK_REALTIME when recorded, ns since the epoch */
	uint64_t off, len;         /* as requested, bytes */
	int32_t pid;               /* requester (sfs_requester_set), 0 when none was known */
	int32_t err;               /* refused: the errno returned (EINVAL, ENOSPC); else 0 */
	uint32_t op;               /* enum sfs_io_op */
	char comm[SFS_COMM_LEN];   /* the requester's /proc/PID/comm then, NUL-terminated; "" unknown */
};

/* A ring of the last SFS_RECENT_MAX entries.  Zeroed memory is an empty ring; the fields are
 * recent.c's. */
struct sfs_recent {
	uint64_t head;             /* entries ever claimed */
	uint64_t floor;            /* entries below this number were cleared */
	struct sfs_recent_slot {
		uint64_t seq;      /* 2n+1 while entry n is written, 2n+2 once it is published */
		uint64_t w[(sizeof(struct sfs_recent_io) + 7) / 8];   /* the entry, as words */
	} slot[SFS_RECENT_MAX];
};

/* Name the requester of the I/O this thread is about to hand to an image (pid > 0), or none
 * (0); read by every later sfs_recent_add() on this thread. */
void sfs_requester_set(int32_t pid);

/* Record an I/O of this thread's requester (its command name read now) into r; err is the
 * positive errno it was refused with, or 0.  Lock-free; safe from any thread. */
void sfs_recent_add(struct sfs_recent *r, enum sfs_io_op op, uint64_t off, uint64_t len, int err);

/* Copy r's entries into out (room for SFS_RECENT_MAX), newest first; returns how many.  An
 * entry being written at that moment is left out. */
size_t sfs_recent_list(const struct sfs_recent *r, struct sfs_recent_io *out);

/* Make the empty ring r (zeroed memory) list entries[0..n) (newest first, n <= SFS_RECENT_MAX)
 * as sfs_recent_list gave them.  Precondition: nothing else uses r yet. */
void sfs_recent_load(struct sfs_recent *r, const struct sfs_recent_io *entries, size_t n);

/* Forget every entry recorded so far (entries recorded concurrently may stay or go). */
void sfs_recent_clear(struct sfs_recent *r);

/* Read /proc/PID/comm of pid into comm (SFS_COMM_LEN bytes, NUL-terminated, no newline) through
 * this thread's cached descriptor; 0, or -errno with comm "" (-ESRCH: no such task). */
int sfs_comm_of(int32_t pid, char *comm);

/* "read", "write", "discard", "write_zeroes" ("?" for anything else). */
const char *sfs_io_op_name(unsigned op);

#endif
