/* SPDX-License-Identifier: MIT */
/*
 * ops_impl.h - what the pieces of the FUSE operations share: the open
 * file handle, the helpers of ops.c, and the handlers the table in ops.c
 * lists (namespace.c, xattr.c, io.c).  Private to fs/.
 */
#ifndef SFS_OPS_IMPL_H
#define SFS_OPS_IMPL_H

#include <stdint.h>

#include "mount/mountpath.h"
#include "contract/names.h"
#include "ops.h"

/* An open file (fi->fh); a directory keeps its enum sfs_mpath in fi->fh instead. */
struct handle {
	struct handle *prev, *next;   /* in sfs_fs.handles */
	enum sfs_mpath kind;          /* SFS_MPATH_IMAGE, _STATS_TEXT, _STATS_JSON or _METRICS */
	struct sfs_image *im;         /* NULL for the metrics file */
	bool creator;    /* made the image (create): it grows with writes at its end until closed */
	char *buf;       /* stats snapshot */
	size_t len;
};

static inline struct sfs_fs *fs_of_ctx(void)
{
	return fuse_get_context()->private_data;
}

static inline struct handle *handle_of(const struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

/* What path names in this mount (sfs_mpath_classify), its image name into name (len bytes). */
static inline enum sfs_mpath classify(const struct sfs_fs *fs, const char *path, char *name, size_t len)
{
	return sfs_mpath_classify(path, fs->stats, name, len);
}

/* A handle of kind k on im (a reference the handle now holds; NULL for metrics) into fi->fh,
 * listed in fs->handles: 0 or -ENOMEM (im still the caller's). */
int sfs_handle_new(struct fuse_file_info *fi, enum sfs_mpath k, struct sfs_image *im);

/* Unlist and free h: settle a creator's image size, unpin and put its image, free its buffer. */
void sfs_handle_free(struct sfs_fs *fs, struct handle *h);

/* Run fn(fs, im, arg) on the image of the open file fi or else of path, with im NULL for a
 * directory or stats file: fn's result, -ESTALE (neither), -ENOENT or -ENAMETOOLONG (path names
 * nothing), or the store's error looking the image up. */
int sfs_with_image(const char *path, struct fuse_file_info *fi,
		   int (*fn)(struct sfs_fs *, struct sfs_image *, const void *), const void *arg);

/* The handlers of the table (struct fuse_operations says what each does): each returns 0, or
 * a count where FUSE wants one, or a negative errno. */

/* namespace.c: names, attributes and the refusals of what a disk store cannot hold */
int sfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
int sfs_opendir(const char *path, struct fuse_file_info *fi);
int sfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		struct fuse_file_info *fi, enum fuse_readdir_flags flags);
int sfs_create(const char *path, mode_t mode, struct fuse_file_info *fi);
int sfs_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int sfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int sfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int sfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);
int sfs_unlink(const char *path);
int sfs_rename(const char *from, const char *to, unsigned int flags);
int sfs_mkdir(const char *path, mode_t mode);
int sfs_mknod(const char *path, mode_t mode, dev_t rdev);
int sfs_rmdir(const char *path);
int sfs_link(const char *from, const char *to);
int sfs_symlink(const char *target, const char *path);
int sfs_statfs(const char *path, struct statvfs *sv);

/* xattr.c: the user.sectorfs.* attributes */
int sfs_getxattr(const char *path, const char *name, char *value, size_t size);
int sfs_listxattr(const char *path, char *list, size_t size);
int sfs_setxattr(const char *path, const char *name, const char *value, size_t size, int flags);
int sfs_removexattr(const char *path, const char *name);

/* io.c: open files, their data */
int sfs_open(const char *path, struct fuse_file_info *fi);
int sfs_release(const char *path, struct fuse_file_info *fi);
int sfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int sfs_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		 struct fuse_file_info *fi);
off_t sfs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi);
int sfs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph, unsigned *reventsp);
int sfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int sfs_fsync(const char *path, int datasync, struct fuse_file_info *fi);
int sfs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi);

#endif
