/* SPDX-License-Identifier: MIT */
/*
 * ops.h - the FUSE operations of sectorfs: a thin layer over core/.
 */
#ifndef SFS_OPS_H
#define SFS_OPS_H

#include "fuse_version.h"
#include "store/store.h"

#include <pthread.h>

struct handle;

/* What the operations share: the store, the mount's settings, open files. */
struct sfs_fs {
	struct sfs_store *store;
	bool stats;
	const struct sfs_log *log;
	pthread_mutex_t lock;          /* guards handles */
	struct handle *handles;        /* open files, for release at exit */
	/* if set, called once from init, when the loop answers the kernel's
	 * first request (the mount serves); < 0 ends the loop */
	int (*serving)(void *ctx);
	void *serving_ctx;
	/* asynchronous requests the kernel may have in flight (max_background;
	 * congestion at 3/4 of it); 0 leaves the kernel's default of 12 */
	unsigned max_background;
};

/* Free the handles of files still open when the mount went away (no release comes for them). */
void sfs_fs_release_all(struct sfs_fs *fs);

/* The operation table; private_data of the fuse context must be a struct sfs_fs. */
extern const struct fuse_operations sfs_fs_ops;

#endif
