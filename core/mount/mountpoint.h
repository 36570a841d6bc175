/* SPDX-License-Identifier: MIT */
/*
 * mountpoint.h - is a directory fit to mount a store on?
 *
 * A mount hides what is below it until it is unmounted: the files of a
 * non-empty directory, or the whole of another mount (a second store
 * stacked on the mount point of a first one silently takes its place).
 * libfuse 3 checks neither, so the daemon asks here first.
 */
#ifndef SFS_MOUNTPOINT_H
#define SFS_MOUNTPOINT_H

#include <stdbool.h>
#include <stddef.h>

/* Check that path is an empty directory and not itself the root of a mount.  0, or with err
 * saying why and naming path: -ENOTEMPTY (names an entry), -EBUSY (a mount point: names its
 * filesystem type and source when /proc/self/mountinfo has them), -ENOTDIR, or the -errno of
 * stat or of reading the directory ("bad mount point"). */
int sfs_mountpoint_check(const char *path, char *err, size_t errlen);

/* Is path (absolute, resolved) a mount point in /proc/self/mountinfo?  The filesystem type
 * and source of the mount on top there into fstype and source (len bytes each). */
bool sfs_mount_lookup(const char *path, char *fstype, char *source, size_t len);

#endif
