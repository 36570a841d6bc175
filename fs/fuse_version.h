/* SPDX-License-Identifier: MIT */
/* fuse_version.h - the one place that picks the libfuse API level. */
#ifndef SFS_FUSE_VERSION_H
#define SFS_FUSE_VERSION_H
#define FUSE_USE_VERSION 312
#include <fuse.h>
#endif
