/* SPDX-License-Identifier: MIT */
/*
 * io.c - open files and their data: open and release, read, write,
 * fsync, fallocate, lseek and poll of an image, a stats file or the
 * metrics file.
 *
 * An image's I/O is core's (core/image/io.c); a file opened without
 * O_DIRECT goes through the calls that do the page cache's merging.  A
 * stats or metrics file is rendered whole at open into its handle, and
 * reads copy from that snapshot; writing "reset" to a text stats file
 * zeroes the image's stats.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>

#include "stats/metrics.h"
#include "ops_impl.h"
#include "xport.h"

/* A stats file's snapshot of im (text or JSON by k) into a malloc'd *buf of *len bytes. */
static int render(struct sfs_image *im, enum sfs_mpath k, char **buf, size_t *len)
{
	struct sfs_stats_snap *snap = malloc(sizeof(*snap));
	struct sfs_stats_recent *recent = malloc(sizeof(*recent));
	struct sfs_stats_info info;
	struct sfs_fail_status fst;
	struct sfs_fail_cutinfo last = { 0 };
	int rc = -ENOMEM, frc = -ENODATA;

	if (snap && recent)
		frc = sfs_image_fail_status(im, &fst, &last);
	if (snap && recent && frc != -ENOMEM) {
		sfs_image_stats_snapshot(im, snap);
		sfs_image_stats_recent(im, recent);
		sfs_image_stats_info(im, &info);
		info.recent = recent;
		info.transport = sfs_xport_name();
		info.serve = sfs_xport_serving();
		if (frc == 0) {
			info.fail = &fst;
			info.last_cut = &last;
		}
		rc = k == SFS_MPATH_STATS_JSON ? sfs_stats_render_json(snap, &info, buf, len)
					       : sfs_stats_render_text(snap, &info, buf, len);
	}
	if (frc == 0)
		sfs_wc_report_free(&last.rep);
	free(recent);
	free(snap);
	return rc;
}

struct metrics_ctx {
	struct sfs_fs *fs;
	struct sfs_metrics *m;
	struct sfs_stats_snap *snap;
};

/* One image into the collection; an image gone since the listing is left out. */
static int metrics_one(void *ctx, const char *name)
{
	struct metrics_ctx *c = ctx;
	struct sfs_stats_info info;
	struct sfs_fail_status fst;
	struct sfs_image *im;
	int rc = sfs_store_get(c->fs->store, name, &im);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	sfs_image_stats_snapshot(im, c->snap);   /* an idle image allocates nothing */
	sfs_image_stats_info(im, &info);
	if (sfs_image_fail_status(im, &fst, NULL) == 0)
		info.fail = &fst;
	rc = sfs_metrics_add(c->m, c->snap, &info);
	sfs_store_put(c->fs->store, im);
	return rc;
}

/* MNT/.stats/metrics: every image's snapshot, rendered by core. */
static int render_metrics(struct sfs_fs *fs, char **buf, size_t *len)
{
	struct metrics_ctx c = { fs, NULL, malloc(sizeof(struct sfs_stats_snap)) };
	int rc = c.snap ? sfs_metrics_new(&c.m) : -ENOMEM;

	if (rc == 0)
		rc = sfs_store_list(fs->store, metrics_one, &c);
	if (rc == 0)
		rc = sfs_metrics_render(c.m, buf, len);
	sfs_metrics_free(c.m);
	free(c.snap);
	return rc;
}

/* Name the process behind this request as the requester of the image I/O this thread does
 * next (the recent refused and read-modify-write lists record it). */
static void set_requester(void)
{
	sfs_requester_set(fuse_get_context()->pid);
}

int sfs_open(const char *path, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	enum sfs_mpath k = classify(fs, path, name, sizeof(name));
	struct sfs_image *im;
	struct handle *h;
	int rc;

	if (k == SFS_MPATH_ROOT || k == SFS_MPATH_STATSDIR)
		return -EISDIR;
	if (k == SFS_MPATH_NONE || k == SFS_MPATH_LONG)
		return sfs_mpath_not_found(k);
	if ((k == SFS_MPATH_STATS_JSON || k == SFS_MPATH_METRICS) && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	if (k == SFS_MPATH_METRICS) {
		rc = sfs_handle_new(fi, k, NULL);
		if (rc < 0)
			return rc;
		h = handle_of(fi);
		fi->direct_io = 1;
		fi->keep_cache = 0;
		rc = render_metrics(fs, &h->buf, &h->len);
		if (rc < 0)
			sfs_handle_free(fs, h);
		return rc;
	}
	rc = sfs_store_get(fs->store, name, &im);
	if (rc < 0)
		return rc;
	/* an open image keeps its descriptors open until released */
	rc = k == SFS_MPATH_IMAGE ? sfs_image_pin(im) : 0;
	if (rc < 0) {
		sfs_store_put(fs->store, im);
		return rc;
	}
	rc = sfs_handle_new(fi, k, im);
	if (rc < 0) {
		if (k == SFS_MPATH_IMAGE)
			sfs_image_unpin(im);
		sfs_store_put(fs->store, im);
		return rc;
	}
	/* O_TRUNC is ignored, as a block device ignores it (atomic_o_trunc is on). */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (k == SFS_MPATH_IMAGE)
		return 0;
	h = handle_of(fi);
	fi->nonseekable = 0;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	rc = render(im, k, &h->buf, &h->len);
	if (rc < 0)
		sfs_handle_free(fs, h);
	return rc;
}

int sfs_release(const char *path, struct fuse_file_info *fi)
{
	sfs_handle_free(fs_of_ctx(), handle_of(fi));
	return 0;
}

int sfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	/* O_DIRECT: the disk's rules; else as a block device's page cache would */
	if (h->kind == SFS_MPATH_IMAGE) {
		set_requester();
		return (int)((fi->flags & O_DIRECT) ? sfs_image_read : sfs_image_read_any)(h->im, buf, size,
											(uint64_t)off);
	}
	if (!h->buf)
		return -EBADF;
	if ((size_t)off >= h->len)
		return 0;
	if (size > h->len - (size_t)off)
		size = h->len - (size_t)off;
	memcpy(buf, h->buf + off, size);
	return (int)size;
}

/* SEEK_DATA/SEEK_HOLE (the kernel does the other whences): an image is data
 * to its end, as a block device is; a stats file is data to the end of the
 * rendering its handle holds, which can be longer than the st_size rendered
 * by an earlier getattr (cp copies up to the first hole it is told of). */
off_t sfs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	off_t end = h->kind == SFS_MPATH_IMAGE ? (off_t)sfs_image_geom(h->im).size : (off_t)h->len;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	if (off < 0 || off >= end)
		return -ENXIO;
	return whence == SEEK_DATA ? off : end;
}

/* Reads land in a page-aligned buffer, which the image's O_DIRECT backing
 * reads fill without a bounce copy: the ring entry's own reply buffer when
 * the request came through io_uring (the transport's), else one of their
 * own, which libfuse frees. */
int sfs_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct fuse_bufvec *bv = malloc(sizeof(*bv));
	void *mem = sfs_xport_reply_mem(size);
	bool lent = mem != NULL;
	int n;

	if (!bv || (!lent && posix_memalign(&mem, 4096, size ? size : 1) != 0)) {
		free(bv);
		return -ENOMEM;
	}
	n = sfs_read(path, mem, size, off, fi);
	if (n < 0) {
		if (!lent)
			free(mem);
		free(bv);
		return n;
	}
	*bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT((size_t)n);
	bv->buf[0].mem = mem;
	if (lent)
		sfs_xport_lend(bv);
	*bufp = bv;
	return 0;
}

/* Everything written durable.  A growing image keeps the room ahead of its writes (its
 * capacity, at least what it shows, is durable since its grow): given back at each flush, it
 * was taken again by the next write, whose block's tail was zeroed again (dd oflag=dsync
 * zeroed 514 MiB for 4 MiB).  Its creator's close gives it back. */
static int flush_image(struct sfs_image *im)
{
	return sfs_image_flush(im);
}

int sfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	int crc;

	if (h->kind == SFS_MPATH_IMAGE) {
		bool direct = fi->flags & O_DIRECT;
		ssize_t rc;

		set_requester();
		/* O_DSYNC/O_SYNC (or RWF_DSYNC): the kernel sends no fsync for direct_io writes, so the
		 * write itself must be durable: a FUA write, then the host's sync (doc/failures.md) */
		if (fi->flags & O_DSYNC)
			sfs_image_fua_next(true);
		rc = h->creator ? sfs_store_write_growing(fs_of_ctx()->store, h->im, buf, size,
								  (uint64_t)off, direct)
			   : (direct ? sfs_image_write : sfs_image_write_any)(h->im, buf, size, (uint64_t)off);
		if (fi->flags & O_DSYNC)
			sfs_image_fua_next(false);
		if (rc > 0 && (fi->flags & O_DSYNC)) {
			int frc = sfs_image_sync(h->im);

			if (frc < 0)
				return frc;
		}
		return (int)rc;
	}
	if (h->kind != SFS_MPATH_STATS_TEXT)
		return -EACCES;
	/* A command at any offset: "echo reset >>" appends, and one descriptor may reset again. */
	crc = sfs_image_stats_command(h->im, buf, size);
	return crc < 0 ? crc : (int)size;
}

int sfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	return h->kind == SFS_MPATH_IMAGE ? flush_image(h->im) : 0;
}

int sfs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	if (h->kind != SFS_MPATH_IMAGE)
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	set_requester();
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		return sfs_image_discard(h->im, (uint64_t)off, (uint64_t)len);
	if (mode == FALLOC_FL_ZERO_RANGE || mode == (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE))
		return sfs_image_write_zeroes(h->im, (uint64_t)off, (uint64_t)len);
	if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE)
		return sfs_image_allocate(h->im, (uint64_t)off, (uint64_t)len);
	return -EOPNOTSUPP;
}

/*
 * poll(2) and epoll on a disk or stats file (node_exporter's textfile
 * collector, Go's runtime): always ready, as a regular file or block
 * device is.  -ENOSYS makes the kernel answer every later poll itself
 * with "ready"; the handle libfuse made for a notification is ours to
 * free (libfuse 3.14's high-level poll leaks it on -ENOSYS otherwise).
 */
int sfs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph, unsigned *reventsp)
{
	(void)path;
	(void)fi;
	(void)reventsp;
	if (ph)
		fuse_pollhandle_destroy(ph);
	return -ENOSYS;
}

