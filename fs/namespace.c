/* SPDX-License-Identifier: MIT */
/*
 * namespace.c - the names of a mount and their attributes: getattr,
 * readdir, create, unlink and rename of images, their size, mode, owner
 * and times, statfs, and the refusals of what a store of disks cannot
 * hold (directories, special files, links).
 *
 * A name is an image of the store, the .stats directory or a file in it
 * (core/mount/mountpath.h); the store (core/store/store.c) does every change of an
 * image's name, in an order that survives a crash.  An image is a
 * regular file with its backing file's owner, mode and times; a stats
 * file has its image's owner and times, its own mode and size 0; the
 * directories and the metrics file have the store directory's owner and
 * times.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ops_impl.h"

/* A stats file, from the stat of its image: the image's owner and times, its own mode, size 0. */
static void stats_file_stat(enum sfs_mpath k, struct stat *st)
{
	/* Size 0, as in /proc: the content is rendered at open and its
	 * length changes from one open to the next; readers read to EOF. */
	st->st_mode = S_IFREG | (k == SFS_MPATH_STATS_TEXT ? 0644 : 0444);
	st->st_size = 0;
	st->st_blocks = 0;
	st->st_nlink = 1;
}

/* The metrics file: the store directory's owner and times, read-only, size 0. */
static int stat_metrics(struct sfs_fs *fs, struct stat *st)
{
	if (fstat(sfs_store_fd(fs->store), st) < 0)
		return -errno;
	st->st_mode = S_IFREG | 0444;
	st->st_size = 0;
	st->st_blocks = 0;
	st->st_nlink = 1;
	return 0;
}

int sfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	struct handle *h = fi ? handle_of(fi) : NULL;
	char name[SFS_NAME_MAX + 1];
	enum sfs_mpath k;
	int rc;

	if (h && h->kind == SFS_MPATH_IMAGE)
		return sfs_image_stat(h->im, st);
	if (h && h->kind == SFS_MPATH_METRICS)
		return stat_metrics(fs, st);
	if (h) {                        /* a stats file, after ftruncate (no path: nullpath_ok) */
		rc = sfs_image_stat(h->im, st);
		if (rc == 0)
			stats_file_stat(h->kind, st);
		return rc;
	}
	if (!path)
		return -ESTALE;
	k = classify(fs, path, name, sizeof(name));
	memset(st, 0, sizeof(*st));
	switch (k) {
	case SFS_MPATH_ROOT:
	case SFS_MPATH_STATSDIR:
		if (fstat(sfs_store_fd(fs->store), st) < 0)
			return -errno;
		st->st_mode = S_IFDIR | (k == SFS_MPATH_ROOT ? (st->st_mode & 07777) : 0555);
		st->st_nlink = 2;
		return 0;
	case SFS_MPATH_IMAGE:
		return sfs_store_stat(fs->store, name, st);
	case SFS_MPATH_METRICS:
		return stat_metrics(fs, st);
	case SFS_MPATH_LONG:
		return -ENAMETOOLONG;
	case SFS_MPATH_STATS_TEXT:
	case SFS_MPATH_STATS_JSON:
		rc = sfs_store_stat(fs->store, name, st);
		if (rc == 0)
			stats_file_stat(k, st);
		return rc;
	default:
		return -ENOENT;
	}
}

/* A directory is read in pieces, each entry with its offset (the next readdir starts after
 * it), so that readdirplus hands the kernel every name's attributes: libfuse sends them only
 * for entries filled with an offset.  The offsets: 1 ".", 2 "..", 3 ".stats" in the root (when
 * there are stats) or "metrics" in .stats, then the images in sorted order, one entry each in
 * the root and two (NAME, NAME.json) in .stats. */
struct fill_ctx {
	struct sfs_fs *fs;
	void *buf;
	fuse_fill_dir_t filler;
	bool stats_dir;
	bool plus;          /* readdirplus: each name with its attributes */
	bool skip_name;     /* .stats: the first image's NAME went in the last piece, NAME.json not */
	off_t next;         /* the offset of the next entry */
	bool full;          /* the reply is full */
};

static bool fill_at(struct fill_ctx *c, const char *name, struct stat *stp)
{
	c->next++;
	if (c->filler(c->buf, name, stp, c->next, stp ? FUSE_FILL_DIR_PLUS : 0)) {
		c->full = true;
		return false;
	}
	return true;
}

static int fill_one(void *ctx, const char *name)
{
	struct fill_ctx *c = ctx;
	char json[SFS_NAME_MAX + 8];
	struct stat st, *stp = NULL;

	/* With the attributes the kernel needs no lookup per name (ls -l: one round trip less
	 * per image); a name gone meanwhile is listed without them. */
	if (c->plus && sfs_store_stat(c->fs->store, name, &st) == 0) {
		if (c->stats_dir)
			stats_file_stat(SFS_MPATH_STATS_TEXT, &st);
		stp = &st;
	}
	/* in .stats, the metrics file takes the place of an image's text file named so */
	if (c->skip_name || (c->stats_dir && strcmp(name, SFS_STATS_METRICS) == 0)) {
		c->skip_name = false;
		c->next++;
	} else if (!fill_at(c, name, stp)) {
		return 1;
	}
	if (c->stats_dir) {
		sfs_sidecar_name(json, sizeof(json), name);
		if (stp)
			stats_file_stat(SFS_MPATH_STATS_JSON, stp);
		if (!fill_at(c, json, stp))
			return 1;
	}
	return 0;
}

#define LIST_PIECE 64

int sfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct sfs_fs *fs = fs_of_ctx();
	enum sfs_mpath k = (enum sfs_mpath)fi->fh;
	struct fill_ctx c = { fs, buf, filler, k == SFS_MPATH_STATSDIR, (flags & FUSE_READDIR_PLUS) != 0,
			      false, 0, false };
	const char *fixed[3] = { ".", "..", c.stats_dir ? SFS_STATS_METRICS : SFS_STATS_DIR };
	off_t nfixed = (k == SFS_MPATH_ROOT && fs->stats) || c.stats_dir ? 3 : 2, per = c.stats_dir ? 2 : 1;
	size_t first;
	int rc;

	if (off < 0)
		return -EINVAL;
	for (off_t i = off; i < nfixed; i++) {
		c.next = i;
		if (!fill_at(&c, fixed[i], NULL))
			return 0;
	}
	if (off == 0)
		sfs_store_rescan(fs->store);   /* sidecars added since: at the start of a listing */
	first = off > nfixed ? (size_t)((off - nfixed) / per) : 0;
	c.next = nfixed + (off_t)first * per;
	c.skip_name = off > nfixed && (off - nfixed) % per != 0;
	for (;;) {
		rc = sfs_store_list_range(fs->store, first, LIST_PIECE, fill_one, &c);
		if (rc < 0)
			return rc;
		if (c.full || rc < LIST_PIECE)
			return 0;
		first += LIST_PIECE;
	}
}

/* Directories keep their kind in fi->fh: readdir gets no path (nullpath_ok). */
int sfs_opendir(const char *path, struct fuse_file_info *fi)
{
	char name[SFS_NAME_MAX + 1];
	enum sfs_mpath k = classify(fs_of_ctx(), path, name, sizeof(name));

	if (k == SFS_MPATH_NONE || k == SFS_MPATH_LONG)
		return sfs_mpath_not_found(k);
	if (k != SFS_MPATH_ROOT && k != SFS_MPATH_STATSDIR)
		return -ENOTDIR;
	fi->fh = (uint64_t)k;
	return 0;
}

int sfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	int rc;

	switch (classify(fs, path, name, sizeof(name))) {
	case SFS_MPATH_IMAGE:
		break;
	case SFS_MPATH_LONG:
		return -ENAMETOOLONG;
	default:
		return -EPERM;
	}
	if (sfs_name_valid(name) < 0)
		return -EPERM;
	if (!S_ISREG(mode))
		return -EPERM;
	rc = sfs_store_create(fs->store, name, &im);
	if (rc < 0)
		return rc;
	rc = sfs_image_pin(im);
	if (rc < 0) {
		sfs_store_put(fs->store, im);
		return rc;
	}
	if ((rc = sfs_image_chmod(im, mode)) < 0 ||
	    (rc = sfs_image_chown(im, fuse_get_context()->uid, fuse_get_context()->gid)) < 0)
		sfs_logf(fs->log, SFS_LOG_WARN, "%s: cannot set owner or mode: %s", name, strerror(-rc));
	rc = sfs_handle_new(fi, SFS_MPATH_IMAGE, im);
	if (rc < 0) {
		sfs_image_unpin(im);
		sfs_store_put(fs->store, im);
		return rc;
	}
	/* until this handle is closed, writes at the end grow the image (cp, qemu-img convert) */
	handle_of(fi)->creator = true;
	sfs_image_set_growing(im, true);
	fi->direct_io = 1;
	return 0;
}

/* The kind of an open file (fi) or else of path. */
static enum sfs_mpath kind_of(const char *path, struct fuse_file_info *fi)
{
	char name[SFS_NAME_MAX + 1];

	if (fi)
		return handle_of(fi)->kind;
	return path ? classify(fs_of_ctx(), path, name, sizeof(name)) : SFS_MPATH_NONE;
}

static int do_truncate(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	uint64_t size = *(const off_t *)arg, cur;
	int rc;

	if (!im)
		return -EISDIR;   /* directories (the kernel refuses first) */
	cur = sfs_image_geom(im).size;
	if (size == cur)
		return 0;
	rc = sfs_store_resize(fs->store, im, size);
	if (rc == -EINVAL || rc == -EFBIG) {
		struct sfs_geom g = sfs_image_geom(im);
		char why[256];

		/* a size off the sector is refused whichever way it goes (the grow rule says so, as
		 * from an empty disk); a disk shrinks only when it holds nothing past the new end; else
		 * the grow rule says why, or the store refused for a reason of its own */
		struct sfs_geom empty = g;

		empty.size = 0;
		if (size < cur && size % g.lss)
			sfs_geom_grow_check(&empty, size, why, sizeof(why));
		else if (size < cur)
			snprintf(why, sizeof(why), "refusing to shrink from %llu to %llu bytes (a disk that "
				 "holds data only grows)", (unsigned long long)cur, (unsigned long long)size);
		else if (sfs_geom_grow_check(&g, size, why, sizeof(why)) >= 0)
			snprintf(why, sizeof(why), "cannot grow to %llu bytes: %s", (unsigned long long)size,
				 strerror(-rc));
		sfs_logf(fs->log, SFS_LOG_WARN, "%s: %s", sfs_image_name(im), why);
	}
	return rc;
}

int sfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	switch (kind_of(path, fi)) {
	case SFS_MPATH_STATS_TEXT:
		return size == 0 ? 0 : -EPERM;   /* "echo reset >" may truncate first */
	case SFS_MPATH_STATS_JSON:
	case SFS_MPATH_METRICS:
		return -EACCES;                  /* read-only, as its mode says */
	default:
		break;
	}
	if (size < 0)
		return -EINVAL;
	return sfs_with_image(path, fi, do_truncate, &size);
}

static int do_chmod(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	if (!im)
		return -EPERM;
	return sfs_image_chmod(im, *(const mode_t *)arg);
}

int sfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return sfs_with_image(path, fi, do_chmod, &mode);
}

static int do_chown(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const uid_t *ids = arg;

	if (!im)
		return -EPERM;
	return sfs_image_chown(im, ids[0], (gid_t)ids[1]);
}

int sfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	uid_t ids[2] = { uid, (uid_t)gid };

	return sfs_with_image(path, fi, do_chown, ids);
}

static int do_utimens(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	if (!im)
		return 0;
	return sfs_image_utimens(im, arg);
}

int sfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	return sfs_with_image(path, fi, do_utimens, tv);
}

int sfs_unlink(const char *path)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	enum sfs_mpath k = classify(fs, path, name, sizeof(name));

	if (k != SFS_MPATH_IMAGE)
		return k == SFS_MPATH_NONE || k == SFS_MPATH_LONG ? sfs_mpath_not_found(k) : -EPERM;
	return sfs_store_unlink(fs->store, name);
}

int sfs_rename(const char *from, const char *to, unsigned int flags)
{
	struct sfs_fs *fs = fs_of_ctx();
	char a[SFS_NAME_MAX + 1], b[SFS_NAME_MAX + 1];
	enum sfs_mpath ka, kb;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	ka = classify(fs, from, a, sizeof(a));
	kb = classify(fs, to, b, sizeof(b));
	if (ka == SFS_MPATH_LONG || kb == SFS_MPATH_LONG)
		return -ENAMETOOLONG;
	if (ka != SFS_MPATH_IMAGE || kb != SFS_MPATH_IMAGE)
		return -EPERM;
	if (sfs_name_valid(b) < 0)
		return -EPERM;
	return sfs_store_rename(fs->store, a, b, flags & RENAME_NOREPLACE);
}

int sfs_mkdir(const char *path, mode_t mode)
{
	return -EPERM;
}

/* Reached for FIFOs, sockets and devices only: libfuse makes regular files with create. */
int sfs_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return -EPERM;
}

/* The only directory below the root is .stats, which stays. */
int sfs_rmdir(const char *path)
{
	return -EPERM;
}

int sfs_link(const char *from, const char *to)
{
	return -EPERM;
}

int sfs_symlink(const char *target, const char *path)
{
	return -EPERM;
}

int sfs_statfs(const char *path, struct statvfs *sv)
{
	if (fstatvfs(sfs_store_fd(fs_of_ctx()->store), sv) < 0)
		return -errno;
	sv->f_namemax = SFS_NAME_MAX;   /* the longest image name, not the store's */
	return 0;
}

