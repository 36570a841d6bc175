/* SPDX-License-Identifier: MIT */
/*
 * tmpfile.h - the daemon's temporary files, and durable replacement.
 *
 * Every file sectorfs rewrites (a sidecar, a map, a journal) is written
 * whole under a temporary name, made durable, and renamed over the old
 * one, so a crash leaves the old file or the new one.  Temporary files
 * live in the store's state directory (STORE/.sectorfs) under names that
 * start with SFS_TMP_PREFIX: no image, sidecar or state file can have
 * such a name (image names never start with '.'), so a temporary file
 * never collides with anything, and the next open of the store removes
 * every one a crash left behind.  They are created with O_EXCL: an
 * existing file is never truncated or reused.
 */
#ifndef SFS_TMPFILE_H
#define SFS_TMPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SFS_TMP_PREFIX ".tmp."
#define SFS_TMP_NAME_MAX 64

/* Create a new file in dirfd (O_RDWR|O_CREAT|O_EXCL), its name put in name (>= SFS_TMP_NAME_MAX
 * bytes): the fd, or -errno. */
int sfs_tmp_create(int dirfd, char *name, size_t len, mode_t mode);

/* Is name (a file name, no directory) one of sfs_tmp_create's? */
bool sfs_tmp_is_ours(const char *name);

/* Make fd durable (fsync), rename fromdir/tmp onto todir/to and fsync both directories.
 * Does not close fd.  On failure before the rename tmp is removed.  0 or -errno. */
int sfs_tmp_install(int fd, int fromdir, const char *tmp, int todir, const char *to);

/* Write len bytes of buf as todir/to, atomically and durably, through a temporary file in
 * tmpdir (mode 0600 | as given).  0 or -errno; nothing is left behind on failure. */
int sfs_write_file_atomic(int tmpdir, int todir, const char *to, const void *buf, size_t len,
			  mode_t mode);

/* fsync a directory given by fd; 0 or -errno. */
int sfs_fsync_dir(int dirfd);

/* Read the small file dirfd/fname into buf, NUL-terminated (at most len - 1 bytes): its
 * length, -ENOENT when absent, -EFBIG when longer, or -errno. */
ssize_t sfs_read_small_file(int dirfd, const char *fname, char *buf, size_t len);

/* Remove dirfd/fname durably (unlink, fsync dirfd); 0, also when it is absent, or -errno. */
int sfs_remove_durably(int dirfd, const char *fname);

#endif
