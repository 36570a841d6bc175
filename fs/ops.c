/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the FUSE operations: check the path, call core, map the result.
 *
 * The namespace of a mount:
 *
 *   /              images of the store, as regular files
 *   /NAME          one disk (core/image.c does the I/O)
 *   /.stats/       hidden directory, present unless -o nostats
 *   /.stats/NAME       stats for people; writing "reset" zeroes them
 *   /.stats/NAME.json  the same stats as JSON
 *   /.stats/metrics    every image's stats, Prometheus text format (it
 *                      hides the text stats of an image named "metrics")
 *
 * Every open file gets a struct handle in fi->fh.  Image files are opened
 * with direct_io so each read and write reaches the daemon as the
 * application issued it (no page cache, no merging).  A stats file
 * renders one snapshot at open, so every read of that open file sees the
 * same bytes.  Errors come from core as negative errno values and are
 * passed on unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "metrics.h"
#include "names.h"
#include "ops.h"
#include "xport.h"

/* K_LONG: a name longer than any image may have (ENAMETOOLONG, not ENOENT). */
enum kind { K_NONE, K_LONG, K_ROOT, K_STATSDIR, K_IMAGE, K_STATS_TEXT, K_STATS_JSON, K_METRICS };

struct handle {
	struct handle *prev, *next;   /* in sfs_fs.handles */
	enum kind kind;
	struct sfs_image *im;
	bool creator;    /* made the image (create): it grows with writes at its end until closed */
	char *buf;       /* stats snapshot */
	size_t len;
};

static struct sfs_fs *fs_of_ctx(void)
{
	return fuse_get_context()->private_data;
}

/* Split a path into its kind and image name (name points into path). */
static enum kind classify(const struct sfs_fs *fs, const char *path, char *name, size_t len)
{
	const char *p = path + 1;
	size_t n;

	if (strcmp(path, "/") == 0)
		return K_ROOT;
	if (strncmp(p, SFS_STATS_DIR, sizeof(SFS_STATS_DIR) - 1) == 0 &&
	    (p[sizeof(SFS_STATS_DIR) - 1] == '\0' || p[sizeof(SFS_STATS_DIR) - 1] == '/')) {
		if (!fs->stats)
			return K_NONE;
		p += sizeof(SFS_STATS_DIR) - 1;
		if (*p == '\0')
			return K_STATSDIR;
		p++;
		if (strchr(p, '/'))
			return K_NONE;
		if (strcmp(p, SFS_STATS_METRICS) == 0)
			return K_METRICS;
		n = strlen(p);
		if (sfs_sidecar_image_len(p)) {
			n = sfs_sidecar_image_len(p);
			if (n >= len)
				return K_LONG;
			snprintf(name, len, "%.*s", (int)n, p);
			return K_STATS_JSON;
		}
		if (n >= len)
			return K_LONG;
		snprintf(name, len, "%s", p);
		return K_STATS_TEXT;
	}
	if (strchr(p, '/'))
		return K_NONE;
	if (strlen(p) >= len)
		return K_LONG;
	snprintf(name, len, "%s", p);
	return K_IMAGE;
}

/* The errno for a path that names nothing: K_NONE or K_LONG. */
static int not_found(enum kind k)
{
	return k == K_LONG ? -ENAMETOOLONG : -ENOENT;
}

/* The kind of an open file (fi) or else of path. */
static enum kind kind_of(const char *path, struct fuse_file_info *fi)
{
	char name[SFS_NAME_MAX + 1];

	if (fi)
		return ((struct handle *)(uintptr_t)fi->fh)->kind;
	return path ? classify(fs_of_ctx(), path, name, sizeof(name)) : K_NONE;
}

static int render(struct sfs_image *im, enum kind k, char **buf, size_t *len)
{
	struct sfs_stats_snap *snap = malloc(sizeof(*snap));
	struct sfs_stats_recent *recent = malloc(sizeof(*recent));
	struct sfs_stats_info info;
	int rc = -ENOMEM;

	if (snap && recent) {
		sfs_image_stats_snapshot(im, snap);
		sfs_image_stats_recent(im, recent);
		sfs_image_stats_info(im, &info);
		info.recent = recent;
		info.transport = sfs_xport_name();
		rc = k == K_STATS_JSON ? sfs_stats_render_json(snap, &info, buf, len)
				       : sfs_stats_render_text(snap, &info, buf, len);
	}
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
	struct sfs_image *im;
	int rc = sfs_store_get(c->fs->store, name, &im);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	sfs_image_stats_snapshot(im, c->snap);   /* an idle image allocates nothing */
	sfs_image_stats_info(im, &info);
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

/* A stats file, from the stat of its image: the image's owner and times, its own mode, size 0. */
static void stats_file_stat(enum kind k, struct stat *st)
{
	/* Size 0, as in /proc: the content is rendered at open and its
	 * length changes from one open to the next; readers read to EOF. */
	st->st_mode = S_IFREG | (k == K_STATS_TEXT ? 0644 : 0444);
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

static int sfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
	char name[SFS_NAME_MAX + 1];
	enum kind k;
	int rc;

	if (h && h->kind == K_IMAGE)
		return sfs_image_stat(h->im, st);
	if (h && h->kind == K_METRICS)
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
	case K_ROOT:
	case K_STATSDIR:
		if (fstat(sfs_store_fd(fs->store), st) < 0)
			return -errno;
		st->st_mode = S_IFDIR | (k == K_ROOT ? (st->st_mode & 07777) : 0555);
		st->st_nlink = 2;
		return 0;
	case K_IMAGE:
		return sfs_store_stat(fs->store, name, st);
	case K_METRICS:
		return stat_metrics(fs, st);
	case K_LONG:
		return -ENAMETOOLONG;
	case K_STATS_TEXT:
	case K_STATS_JSON:
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
			stats_file_stat(K_STATS_TEXT, &st);
		stp = &st;
	}
	/* in .stats, the metrics file takes the place of an image's text file named so */
	if (c->skip_name || (c->stats_dir && strcmp(name, SFS_STATS_METRICS) == 0)) {
		c->skip_name = false;
		c->next++;
	} else if (c->stats_dir && strcmp(name, SFS_STATS_METRICS) == 0) {
		c->next++;              /* in .stats, the metrics file takes the place of NAME */
	} else if (!fill_at(c, name, stp)) {
		return 1;
	}
	if (c->stats_dir) {
		sfs_sidecar_name(json, sizeof(json), name);
		if (stp)
			stats_file_stat(K_STATS_JSON, stp);
		if (!fill_at(c, json, stp))
			return 1;
	}
	return 0;
}

#define LIST_PIECE 64

static int sfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct sfs_fs *fs = fs_of_ctx();
	enum kind k = (enum kind)fi->fh;
	struct fill_ctx c = { fs, buf, filler, k == K_STATSDIR, (flags & FUSE_READDIR_PLUS) != 0, false, 0,
			      false };
	const char *fixed[3] = { ".", "..", c.stats_dir ? SFS_STATS_METRICS : SFS_STATS_DIR };
	off_t nfixed = (k == K_ROOT && fs->stats) || c.stats_dir ? 3 : 2, per = c.stats_dir ? 2 : 1;
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
static int sfs_opendir(const char *path, struct fuse_file_info *fi)
{
	char name[SFS_NAME_MAX + 1];
	enum kind k = classify(fs_of_ctx(), path, name, sizeof(name));

	if (k == K_NONE || k == K_LONG)
		return not_found(k);
	if (k != K_ROOT && k != K_STATSDIR)
		return -ENOTDIR;
	fi->fh = (uint64_t)k;
	return 0;
}

static int new_handle(struct fuse_file_info *fi, enum kind k, struct sfs_image *im)
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

static void free_handle(struct sfs_fs *fs, struct handle *h)
{
	pthread_mutex_lock(&fs->lock);
	if (h->prev)
		h->prev->next = h->next;
	else
		fs->handles = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&fs->lock);
	if (h->creator && sfs_store_settle(fs->store, h->im, true) < 0)
		sfs_logf(fs->log, SFS_LOG_ERR, "%s: its size when its creator closed it is not durable",
			 sfs_image_name(h->im));
	if (h->im && h->kind == K_IMAGE)
		sfs_image_unpin(h->im);
	if (h->im)
		sfs_store_put(fs->store, h->im);
	free(h->buf);
	free(h);
}

void sfs_fs_release_all(struct sfs_fs *fs)
{
	while (fs->handles)
		free_handle(fs, fs->handles);
}

static int sfs_open(const char *path, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	enum kind k = classify(fs, path, name, sizeof(name));
	struct sfs_image *im;
	struct handle *h;
	int rc;

	if (k == K_ROOT || k == K_STATSDIR)
		return -EISDIR;
	if (k == K_NONE || k == K_LONG)
		return not_found(k);
	if ((k == K_STATS_JSON || k == K_METRICS) && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	if (k == K_METRICS) {
		rc = new_handle(fi, k, NULL);
		if (rc < 0)
			return rc;
		h = (struct handle *)(uintptr_t)fi->fh;
		fi->direct_io = 1;
		fi->keep_cache = 0;
		rc = render_metrics(fs, &h->buf, &h->len);
		if (rc < 0)
			free_handle(fs, h);
		return rc;
	}
	rc = sfs_store_get(fs->store, name, &im);
	if (rc < 0)
		return rc;
	/* an open image keeps its descriptors open until released */
	rc = k == K_IMAGE ? sfs_image_pin(im) : 0;
	if (rc < 0) {
		sfs_store_put(fs->store, im);
		return rc;
	}
	rc = new_handle(fi, k, im);
	if (rc < 0) {
		if (k == K_IMAGE)
			sfs_image_unpin(im);
		sfs_store_put(fs->store, im);
		return rc;
	}
	/* O_TRUNC is ignored, as a block device ignores it (atomic_o_trunc is on). */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (k == K_IMAGE)
		return 0;
	h = (struct handle *)(uintptr_t)fi->fh;
	fi->nonseekable = 0;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	rc = render(im, k, &h->buf, &h->len);
	if (rc < 0)
		free_handle(fs, h);
	return rc;
}

static int sfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	int rc;

	switch (classify(fs, path, name, sizeof(name))) {
	case K_IMAGE:
		break;
	case K_LONG:
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
	rc = new_handle(fi, K_IMAGE, im);
	if (rc < 0) {
		sfs_image_unpin(im);
		sfs_store_put(fs->store, im);
		return rc;
	}
	/* until this handle is closed, writes at the end grow the image (cp, qemu-img convert) */
	((struct handle *)(uintptr_t)fi->fh)->creator = true;
	sfs_image_set_growing(im, true);
	fi->direct_io = 1;
	return 0;
}

static int sfs_release(const char *path, struct fuse_file_info *fi)
{
	free_handle(fs_of_ctx(), (struct handle *)(uintptr_t)fi->fh);
	return 0;
}

static int sfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;

	/* O_DIRECT: the disk's rules; else as a block device's page cache would */
	if (h->kind == K_IMAGE) {
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
static off_t sfs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	off_t end = h->kind == K_IMAGE ? (off_t)sfs_image_geom(h->im).size : (off_t)h->len;

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
static int sfs_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
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

/* Everything written durable; a growing image's size too. */
static int flush_image(struct sfs_image *im)
{
	int rc = sfs_image_flush(im);

	return rc < 0 || !sfs_image_growing(im) ? rc : sfs_store_settle(fs_of_ctx()->store, im, false);
}

static int sfs_write(const char *path, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	int crc;

	if (h->kind == K_IMAGE) {
		bool direct = fi->flags & O_DIRECT;
		ssize_t rc;

		set_requester();
		rc = h->creator ? sfs_store_write_growing(fs_of_ctx()->store, h->im, buf, size,
								  (uint64_t)off, direct)
			   : (direct ? sfs_image_write : sfs_image_write_any)(h->im, buf, size, (uint64_t)off);

		/* O_DSYNC/O_SYNC (or RWF_DSYNC): the kernel sends no fsync for
		 * direct_io writes, so the write itself must be durable. */
		if (rc > 0 && (fi->flags & O_DSYNC)) {
			int frc = flush_image(h->im);

			if (frc < 0)
				return frc;
		}
		return (int)rc;
	}
	if (h->kind != K_STATS_TEXT)
		return -EACCES;
	/* A command at any offset: "echo reset >>" appends, and one descriptor may reset again. */
	crc = sfs_stats_command(sfs_image_stats(h->im), buf, size);
	return crc < 0 ? crc : (int)size;
}

static int sfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;

	return h->kind == K_IMAGE ? flush_image(h->im) : 0;
}

static int sfs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;

	if (h->kind != K_IMAGE)
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

/* Run fn on the image at path (or the open handle). */
static int with_image(const char *path, struct fuse_file_info *fi,
		      int (*fn)(struct sfs_fs *, struct sfs_image *, const void *), const void *arg)
{
	struct sfs_fs *fs = fs_of_ctx();
	struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	enum kind k;
	int rc;

	if (h)
		return fn(fs, h->kind == K_IMAGE ? h->im : NULL, arg);   /* NULL: a stats file */
	if (!path)
		return -ESTALE;
	k = classify(fs, path, name, sizeof(name));
	if (k == K_NONE || k == K_LONG)
		return not_found(k);
	if (k != K_IMAGE)
		return fn(fs, NULL, arg);   /* directories and stats files */
	rc = sfs_store_get(fs->store, name, &im);
	if (rc < 0)
		return rc;
	rc = fn(fs, im, arg);
	sfs_store_put(fs->store, im);
	return rc;
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
	if (rc == -EINVAL) {
		struct sfs_geom g = sfs_image_geom(im);
		char why[160];

		/* a disk shrinks only when it holds nothing past the new end; else the grow rule says
		 * why, or the store refused for a reason of its own */
		if (size < cur)
			snprintf(why, sizeof(why), "refusing to shrink from %llu to %llu bytes (a disk that "
				 "holds data only grows)", (unsigned long long)cur, (unsigned long long)size);
		else if (sfs_geom_grow_check(&g, size, why, sizeof(why)) >= 0)
			snprintf(why, sizeof(why), "cannot grow to %llu bytes: %s", (unsigned long long)size,
				 strerror(EINVAL));
		sfs_logf(fs->log, SFS_LOG_WARN, "%s: %s", sfs_image_name(im), why);
	}
	return rc;
}

static int sfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	switch (kind_of(path, fi)) {
	case K_STATS_TEXT:
		return size == 0 ? 0 : -EPERM;   /* "echo reset >" may truncate first */
	case K_STATS_JSON:
	case K_METRICS:
		return -EACCES;                  /* read-only, as its mode says */
	default:
		break;
	}
	if (size < 0)
		return -EINVAL;
	return with_image(path, fi, do_truncate, &size);
}

static int do_chmod(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	if (!im)
		return -EPERM;
	return sfs_image_chmod(im, *(const mode_t *)arg);
}

static int sfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return with_image(path, fi, do_chmod, &mode);
}

static int do_chown(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const uid_t *ids = arg;

	if (!im)
		return -EPERM;
	return sfs_image_chown(im, ids[0], (gid_t)ids[1]);
}

static int sfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	uid_t ids[2] = { uid, (uid_t)gid };

	return with_image(path, fi, do_chown, ids);
}

static int do_utimens(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	if (!im)
		return 0;
	return sfs_image_utimens(im, arg);
}

static int sfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	return with_image(path, fi, do_utimens, tv);
}

static int sfs_unlink(const char *path)
{
	struct sfs_fs *fs = fs_of_ctx();
	char name[SFS_NAME_MAX + 1];
	enum kind k = classify(fs, path, name, sizeof(name));

	if (k != K_IMAGE)
		return k == K_NONE || k == K_LONG ? not_found(k) : -EPERM;
	return sfs_store_unlink(fs->store, name);
}

static int sfs_rename(const char *from, const char *to, unsigned int flags)
{
	struct sfs_fs *fs = fs_of_ctx();
	char a[SFS_NAME_MAX + 1], b[SFS_NAME_MAX + 1];
	enum kind ka, kb;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	ka = classify(fs, from, a, sizeof(a));
	kb = classify(fs, to, b, sizeof(b));
	if (ka == K_LONG || kb == K_LONG)
		return -ENAMETOOLONG;
	if (ka != K_IMAGE || kb != K_IMAGE)
		return -EPERM;
	if (sfs_name_valid(b) < 0)
		return -EPERM;
	return sfs_store_rename(fs->store, a, b, flags & RENAME_NOREPLACE);
}

static int sfs_mkdir(const char *path, mode_t mode)
{
	return -EPERM;
}

/* Reached for FIFOs, sockets and devices only: libfuse makes regular files with create. */
static int sfs_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return -EPERM;
}

/* The only directory below the root is .stats, which stays. */
static int sfs_rmdir(const char *path)
{
	return -EPERM;
}

static int sfs_link(const char *from, const char *to)
{
	return -EPERM;
}

static int sfs_symlink(const char *target, const char *path)
{
	return -EPERM;
}

static int sfs_statfs(const char *path, struct statvfs *sv)
{
	if (fstatvfs(sfs_store_fd(fs_of_ctx()->store), sv) < 0)
		return -errno;
	sv->f_namemax = SFS_NAME_MAX;   /* the longest image name, not the store's */
	return 0;
}

/* ---- xattrs: the geometry for scripts ---- */

static int xattr_value(struct sfs_image *im, const char *attr, char *buf, size_t len)
{
	struct sfs_sidecar sc = sfs_image_sidecar(im);

	if (strncmp(attr, SFS_XATTR_PREFIX, sizeof(SFS_XATTR_PREFIX) - 1) != 0)
		return -ENODATA;
	attr += sizeof(SFS_XATTR_PREFIX) - 1;
	if (strcmp(attr, "logical_sector_size") == 0)
		return snprintf(buf, len, "%u", sc.lss);
	if (strcmp(attr, "physical_sector_size") == 0)
		return snprintf(buf, len, "%u", sc.pss);
	if (strcmp(attr, "provisioning") == 0)
		return snprintf(buf, len, "%s", sfs_prov_name(sc.prov));
	if (strcmp(attr, "sector") == 0 && sfs_sector_name(sc.lss, sc.pss))
		return snprintf(buf, len, "%s", sfs_sector_name(sc.lss, sc.pss));
	if (strcmp(attr, "block_size") == 0)
		return snprintf(buf, len, "%llu", (unsigned long long)sc.block_size);
	return -ENODATA;
}

struct xattr_req {
	const char *name;
	char *value;
	size_t size;
};

static int do_getxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_req *r = arg;
	char v[64];
	int n;

	if (!im)
		return -ENODATA;
	n = xattr_value(im, r->name, v, sizeof(v));
	if (n < 0 || r->size == 0)
		return n;
	if ((size_t)n > r->size)
		return -ERANGE;
	memcpy(r->value, v, (size_t)n);
	return n;
}

static int sfs_getxattr(const char *path, const char *name, char *value, size_t size)
{
	struct xattr_req r = { name, value, size };

	/* ls -l asks every file for security.selinux and system.posix_acl_access: none here */
	if (strncmp(name, SFS_XATTR_PREFIX, sizeof(SFS_XATTR_PREFIX) - 1) != 0)
		return -ENODATA;
	return with_image(path, NULL, do_getxattr, &r);
}

static const char xattr_list[] =
	SFS_XATTR_PREFIX "logical_sector_size\0" SFS_XATTR_PREFIX "physical_sector_size\0"
	SFS_XATTR_PREFIX "provisioning\0" SFS_XATTR_PREFIX "block_size\0" SFS_XATTR_PREFIX "sector";

static int do_listxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_req *r = arg;

	if (!im)
		return 0;
	if (r->size == 0)
		return sizeof(xattr_list);
	if (r->size < sizeof(xattr_list))
		return -ERANGE;
	memcpy(r->value, xattr_list, sizeof(xattr_list));
	return sizeof(xattr_list);
}

static int sfs_listxattr(const char *path, char *list, size_t size)
{
	struct xattr_req r = { NULL, list, size };

	return with_image(path, NULL, do_listxattr, &r);
}

struct xattr_set {
	const char *key;      /* after the prefix */
	char value[64];
};

static int do_setxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_set *x = arg;

	return im ? sfs_store_set_format(fs->store, im, x->key, x->value) : -EPERM;
}

/* The format of an image just created, before it holds anything: user.sectorfs.sector,
 * .provisioning and .block_size (the geometry xattrs stay read-only). */
static int sfs_setxattr(const char *path, const char *name, const char *value, size_t size, int flags)
{
	struct xattr_set x;

	if (strncmp(name, SFS_XATTR_PREFIX, sizeof(SFS_XATTR_PREFIX) - 1) != 0)
		return -ENOTSUP;
	x.key = name + sizeof(SFS_XATTR_PREFIX) - 1;
	if (strcmp(x.key, "sector") && strcmp(x.key, "provisioning") && strcmp(x.key, "block_size"))
		return -EPERM;
	if (size >= sizeof(x.value))
		return -EINVAL;
	memcpy(x.value, value, size);
	x.value[size] = '\0';
	x.value[strcspn(x.value, "\n")] = '\0';
	return with_image(path, NULL, do_setxattr, &x);
}

static int sfs_removexattr(const char *path, const char *name)
{
	return strncmp(name, SFS_XATTR_PREFIX, sizeof(SFS_XATTR_PREFIX) - 1) == 0 ? -EPERM : -ENOTSUP;
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

/*
 * poll(2) and epoll on a disk or stats file (node_exporter's textfile
 * collector, Go's runtime): always ready, as a regular file or block
 * device is.  -ENOSYS makes the kernel answer every later poll itself
 * with "ready"; the handle libfuse made for a notification is ours to
 * free (libfuse 3.14's high-level poll leaks it on -ENOSYS otherwise).
 */
static int sfs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph, unsigned *reventsp)
{
	(void)path;
	(void)fi;
	(void)reventsp;
	if (ph)
		fuse_pollhandle_destroy(ph);
	return -ENOSYS;
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
