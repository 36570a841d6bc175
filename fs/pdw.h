/* SPDX-License-Identifier: MIT */
/*
 * pdw.h - ask the kernel for parallel direct writes on disk images (see pdw.c).
 */
#ifndef SFS_PDW_H
#define SFS_PDW_H

#include "fuse_version.h"

#include <stdint.h>

/* Hook the session's /dev/fuse I/O to add FOPEN_PARALLEL_DIRECT_WRITES to
 * direct_io open replies, and to keep a record of each worker thread (see
 * pdw.c); call after mounting.  0 or -errno. */
int sfs_pdw_install(struct fuse_session *se);

/* Requests the workers have read from /dev/fuse so far (0 without the hooks). */
uint64_t sfs_pdw_requests(void);

/* Have every worker waiting for a request, whose buffer held one of 64 KiB or more since,
 * drop its buffer's pages; returns at once with how many were asked. */
unsigned sfs_pdw_trim_buffers(void);

#endif
