/* SPDX-License-Identifier: MIT */
/*
 * pdw.h - ask the kernel for parallel direct writes on disk images (see pdw.c).
 */
#ifndef SFS_PDW_H
#define SFS_PDW_H

#include "fuse_version.h"

/* Hook the session's /dev/fuse I/O to add FOPEN_PARALLEL_DIRECT_WRITES to
 * direct_io open replies; call after mounting.  0 or -errno. */
int sfs_pdw_install(struct fuse_session *se);

#endif
