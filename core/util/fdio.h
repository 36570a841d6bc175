/* SPDX-License-Identifier: MIT */
/*
 * fdio.h - whole transfers between a buffer and a descriptor.
 *
 * pwrite may write less than asked (a full filesystem, a signal) and
 * then leaves errno as it was.  Every write of a buffer that must land
 * whole (image data, map pages, journals, records, the lock file) goes
 * through sfs_pwrite_all(), which carries on after a short write and
 * turns a write that makes no progress into -EIO, so a caller never
 * reads a stale errno as success.
 */
#ifndef SFS_FDIO_H
#define SFS_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* pwrite all len bytes of buf at off, retrying short writes and EINTR: 0, -errno, or -EIO
 * when a pwrite writes nothing (a short write that does not set errno). */
int sfs_pwrite_all(int fd, const void *buf, size_t len, off_t off);

/* pread up to len bytes at off, retrying short reads and EINTR: how many were read (fewer
 * only at the end of the file), or -errno. */
ssize_t sfs_pread_upto(int fd, void *buf, size_t len, off_t off);

/* pread len bytes at off, retrying short reads and EINTR; what lies past the end of the file
 * reads as zeros (a backing file shorter than its disk).  0 or -errno. */
int sfs_pread_zerofill(int fd, void *buf, size_t len, off_t off);

#endif
