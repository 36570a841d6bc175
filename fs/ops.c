/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the FUSE operations of sectorfs: the table, init, and what the
 * handlers share.  Each handler checks the path, calls core and passes the
 * result on; core/mount/mountpath.h draws the namespace of a mount and says what
 * a path names.  The handlers are grouped by job: namespace.c (names,
 * attributes, the refusals of what a store of disks cannot hold), xattr.c
 * (the user.sectorfs.* attributes), io.c (open files and their data).
 *
 * Every open file gets a struct handle in fi->fh, listed in sfs_fs so that
 * the files still open when the mount goes away are released.  Image
 * files are opened with direct_io so each read and write reaches the
 * daemon as the application issued it (no page cache, no merging).  A
 * stats file renders one snapshot at open, so every read of that open
 * file sees the same bytes.  Errors come from core as negative errno
 * values and are passed on unchanged.
 */
#include <errno.h>
#include <stdlib.h>

#include "ops_impl.h"

int sfs_handle_new(struct fuse_file_info *fi, enum sfs_mpath k, struct sfs_image *im)
{
	struct sfs_fs *fs = fs_of_ctx();
	struct handle *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->kind = k;
	h->im = im;
	pthread_mutex_lock(&fs->lock);
	h->next = fs->handles;
	if (h->next)
		h->next->prev = h;
	fs->handles = h;
	pthread_mutex_unlock(&fs->lock);
	fi->fh = (uint64_t)(uintptr_t)h;
	return 0;
}

void sfs_handle_free(struct sfs_fs *fs, struct handle *h)
{
	pthread_mutex_lock(&fs->lock);
	if (h->prev)
		h->prev->next = h->next;
	else
		fs->handles = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&fs->lock);
	if (h->creator)
		sfs_store_settle(fs->store, h->im, true);   /* what it could not do, it logs */
	if (h->im && h->kind == SFS_MPATH_IMAGE)
		sfs_image_unpin(h->im);
	if (h->im)
		sfs_store_put(fs->store, h->im);
	free(h->buf);
	free(h);
}

void sfs_fs_release_all(struct sfs_fs *fs)
{
	while (fs->handles)
		sfs_handle_free(fs, fs->handles);
}

int sfs_with_image(const char *path, struct fuse_file_info *fi,
		   int (*fn)(struct sfs_fs *, struct sfs_image *, const void *), const void *arg)
{
	struct sfs_fs *fs = fs_of_ctx();
	struct handle *h = fi ? handle_of(fi) : NULL;
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	enum sfs_mpath k;
	int rc;

	if (h)
		return fn(fs, h->kind == SFS_MPATH_IMAGE ? h->im : NULL, arg);   /* NULL: a stats file */
	if (!path)
		return -ESTALE;
	k = classify(fs, path, name, sizeof(name));
	if (k == SFS_MPATH_NONE || k == SFS_MPATH_LONG)
		return sfs_mpath_not_found(k);
	if (k != SFS_MPATH_IMAGE)
		return fn(fs, NULL, arg);   /* directories and stats files */
	rc = sfs_store_get(fs->store, name, &im);
	if (rc < 0)
		return rc;
	rc = fn(fs, im, arg);
	sfs_store_put(fs->store, im);
	return rc;
}

static void *sfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct fuse_context *ctx = fuse_get_context();
	struct sfs_fs *fs = ctx->private_data;
	uint64_t start, pid;

	sfs_stats_origin(&start, &pid);   /* the identity interval tools see: fixed as the mount serves */
	cfg->nullpath_ok = 1;
	cfg->use_ino = 0;
	cfg->attr_timeout = 1.0;
	cfg->entry_timeout = 1.0;
	cfg->negative_timeout = 0;
	cfg->hard_remove = 1;
	conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* every readdir with the attributes, not only the first chunk: ls -l of a store of
	 * thousands of images then costs no lookup per name */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want = (conn->want | FUSE_CAP_READDIRPLUS) & ~FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->max_write < (1u << 20))
		conn->max_write = 1u << 20;
	/* async direct I/O travels as background requests: as many as there are workers */
	if (fs->max_background) {
		conn->max_background = fs->max_background;
		conn->congestion_threshold = fs->max_background * 3 / 4;
	}
	if (fs->serving && fs->serving(fs->serving_ctx) < 0)
		fuse_exit(ctx->fuse);
	return fs;
}

const struct fuse_operations sfs_fs_ops = {
	.init = sfs_init,
	.getattr = sfs_getattr,
	.opendir = sfs_opendir,
	.readdir = sfs_readdir,
	.open = sfs_open,
	.create = sfs_create,
	.release = sfs_release,
	.read = sfs_read,
	.read_buf = sfs_read_buf,
	.lseek = sfs_lseek,
	.poll = sfs_poll,
	.write = sfs_write,
	.fsync = sfs_fsync,
	.fallocate = sfs_fallocate,
	.truncate = sfs_truncate,
	.chmod = sfs_chmod,
	.chown = sfs_chown,
	.utimens = sfs_utimens,
	.unlink = sfs_unlink,
	.rename = sfs_rename,
	.mkdir = sfs_mkdir,
	.mknod = sfs_mknod,
	.rmdir = sfs_rmdir,
	.link = sfs_link,
	.symlink = sfs_symlink,
	.statfs = sfs_statfs,
	.getxattr = sfs_getxattr,
	.listxattr = sfs_listxattr,
	.setxattr = sfs_setxattr,
	.removexattr = sfs_removexattr,
};
