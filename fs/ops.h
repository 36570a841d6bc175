/*
 * ops.h - the FUSE operations of sectorfs: a thin layer over core/.
 */
#ifndef SFS_OPS_H
#define SFS_OPS_H

#include "fuse_version.h"
#include "store.h"

/* What the operations share: the store and the mount's settings. */
struct sfs_fs {
	struct sfs_store *store;
	bool stats;
	const struct sfs_log *log;
};

/* The operation table; private_data of the fuse context must be a struct sfs_fs. */
extern const struct fuse_operations sfs_fs_ops;

#endif
