/* SPDX-License-Identifier: MIT */
/*
 * passthrough.c - the bench's bare FUSE passthrough: one file, nothing else.
 *
 *   passthrough BACKING MOUNTPOINT [libfuse options]
 *
 * Serves BACKING as MOUNTPOINT/disk, the way a minimal libfuse file system
 * would: the high-level API and libfuse's own multi-threaded loop
 * (fuse_main), direct_io opens, the backing file opened O_DIRECT.  Reads
 * return the backing descriptor to libfuse (read_buf with an fd buffer:
 * libfuse preads into a page-aligned buffer of its own and replies from
 * it); writes come 80 bytes into libfuse's request buffer, which O_DIRECT
 * cannot take, so they are copied into a page-aligned buffer per thread
 * first.  No statistics, no geometry, no allocation map: the cost of FUSE
 * and of libfuse alone, for tests/bench/run to compare sectorfs with.
 * fsync is fdatasync.  tests/bench/run builds it with cc and pkg-config.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int bfd = -1;
static struct stat bst;

static int pt_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/disk") != 0)
		return -ENOENT;
	if (fstat(bfd, &bst) < 0)
		return -errno;
	*st = bst;
	return 0;
}

static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	filler(buf, "disk", NULL, 0, 0);
	return 0;
}

static int pt_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk") != 0)
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int pt_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fuse_bufvec *bv = malloc(sizeof(*bv));

	if (!bv)
		return -ENOMEM;
	*bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT(size);
	bv->buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv->buf[0].fd = bfd;
	bv->buf[0].pos = off;
	*bufp = bv;
	return 0;
}

static int pt_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	static __thread char *al;
	static __thread size_t allen;
	ssize_t n;

	if (size > allen) {
		free(al);
		allen = 0;
		if (posix_memalign((void **)&al, 4096, size) != 0)
			return -ENOMEM;
		allen = size;
	}
	memcpy(al, buf, size);
	n = pwrite(bfd, al, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	return fdatasync(bfd) < 0 ? -errno : 0;
}

static void *pt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->nullpath_ok = 1;
	cfg->attr_timeout = 1.0;
	cfg->entry_timeout = 1.0;
	if (conn->max_write < (1u << 20))
		conn->max_write = 1u << 20;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = pt_init,
	.getattr = pt_getattr,
	.readdir = pt_readdir,
	.open = pt_open,
	.read_buf = pt_read_buf,
	.write = pt_write,
	.fsync = pt_fsync,
};

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s BACKING MOUNTPOINT [libfuse options]\n", argv[0]);
		return 2;
	}
	bfd = open(argv[1], O_RDWR | O_DIRECT | O_CLOEXEC);
	if (bfd < 0) {
		perror(argv[1]);
		return 1;
	}
	argv[1] = argv[0];
	return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
