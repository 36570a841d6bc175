/* SPDX-License-Identifier: MIT */
/*
 * backing.c - an image's transfers to and from its backing file.
 *
 * Backing I/O is O_DIRECT unless the image is opened SFS_IMAGE_BUFFERED
 * or the backing filesystem cannot do it: the host page cache would
 * otherwise stand between the disk and the device it emulates, and its
 * latencies and first-write costs would be those of RAM.  A second
 * descriptor (the same open file, reopened with O_DIRECT) takes every
 * transfer whose offset and length meet the filesystem's alignment
 * (STATX_DIOALIGN); data in buffers that do not meet its memory alignment
 * is copied through 1 MiB bounce buffers from the process's shared pool (bufpool.h).
 * Anything else (a 512-byte write on a 4096-byte backing device) goes
 * through the buffered descriptor; the kernel keeps the two coherent.
 *
 * A transfer is whole or fails: short reads past the end of the file read
 * as zeros (a backing file shorter than its disk), short writes carry on
 * (fdio.h).  The shared zero buffer (image_zerobuf) is here too.
 *
 * Zeroing a range uses fallocate(FALLOC_FL_ZERO_RANGE) with zero offload,
 * and writes zeros where the backing filesystem has no ZERO_RANGE: found
 * at open by a probe on an unnamed file (once per filesystem), or at the
 * first zeroing that fails so; the errno is kept for the stats to say why.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/bufpool.h"
#include "util/fdio.h"
#include "internal.h"

#define BOUNCE_LEN IMAGE_BOUNCE_LEN

/* The descriptor for a transfer of len bytes at off: O_DIRECT when aligned. */
static int backing_fd(const struct sfs_image *im, size_t len, uint64_t off)
{
	if (im->dfd >= 0 && off % im->dio_off == 0 && len % im->dio_off == 0)
		return im->dfd;
	return im->fd;
}

static pthread_once_t zero_once = PTHREAD_ONCE_INIT;
static void *zerobuf;

static void zerobuf_init(void)
{
	/* Anonymous read-only memory: zeros, page-aligned for O_DIRECT, and not resident
	 * (reads map the kernel's zero page); one for the whole process. */
	zerobuf = mmap(NULL, IMAGE_ZEROBUF_MAX, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (zerobuf == MAP_FAILED)
		zerobuf = NULL;
}

void *image_zerobuf(void)
{
	pthread_once(&zero_once, zerobuf_init);
	return zerobuf;
}

static bool needs_bounce(const struct sfs_image *im, int fd, const void *buf)
{
	return fd == im->dfd && (uintptr_t)buf % im->dio_mem != 0;
}

/* Read (wr false) or write len bytes at off of the backing file; buf is
 * only read from when writing. */
static int back_io(struct sfs_image *im, bool wr, char *buf, size_t len, uint64_t off)
{
	int fd = backing_fd(im, len, off), rc = 0;
	struct sfs_stats *st;
	char *b;

	if (!needs_bounce(im, fd, buf))
		return wr ? sfs_pwrite_all(fd, buf, len, (off_t)off) : sfs_pread_zerofill(fd, buf, len, (off_t)off);
	b = sfs_bufpool_get(sfs_bufpool_shared());
	if (!b)
		return -ENOMEM;
	sfs_stats_cell_enter(&im->stats);
	if ((st = image_stats_of(im)))
		sfs_stats_bounced(st, len);
	sfs_stats_cell_leave(&im->stats);
	for (size_t done = 0, n; done < len && rc == 0; done += n) {
		n = len - done < BOUNCE_LEN ? len - done : BOUNCE_LEN;
		if (wr) {
			memcpy(b, buf + done, n);
			rc = sfs_pwrite_all(fd, b, n, (off_t)(off + done));
		} else if ((rc = sfs_pread_zerofill(fd, b, n, (off_t)(off + done))) == 0) {
			memcpy(buf + done, b, n);
		}
	}
	sfs_bufpool_put(sfs_bufpool_shared(), b);
	return rc;
}

int image_back_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	return back_io(im, false, buf, len, off);
}

int image_back_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	image_mark_dirty(im);
	return back_io(im, true, (char *)buf, len, off);
}

/* Is e an errno of fallocate(FALLOC_FL_ZERO_RANGE) on a filesystem that does not do it? */
static bool no_zero_range(int e)
{
	return e == EOPNOTSUPP || e == ENOSYS || e == EINVAL;
}

int sfs_zero_range_probe(int dirfd, int *why)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), rc = 0;

	if (fd < 0)
		return -errno;
	*why = 0;
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0) {
		if (no_zero_range(errno))
			*why = errno;
		else
			rc = -errno;
	}
	close(fd);
	return rc;
}

/* The probes made, one per filesystem: what FALLOC_FL_ZERO_RANGE failed with there (0: works, or
 * could not be told: zeroing finds out). */
struct zr_probe {
	dev_t dev;
	int why;
};
static struct {
	pthread_mutex_t lk;
	unsigned n;
	struct zr_probe v[16];
} probes = { .lk = PTHREAD_MUTEX_INITIALIZER };

int image_probe_zero_range(struct sfs_image *im, dev_t dev)
{
	struct stat st;
	int why = 0;
	unsigned i;

	if (!im->sc.zero_offload)
		return 0;
	if (fstat(im->store_fd, &st) < 0)
		return -errno;
	/* the probe is of the store directory's filesystem: a backing file elsewhere (a bind mount)
	 * finds out at its first zeroing */
	if (st.st_dev != dev)
		return 0;
	pthread_mutex_lock(&probes.lk);
	for (i = 0; i < probes.n && probes.v[i].dev != dev; i++)
		;
	if (i < probes.n) {
		why = probes.v[i].why;
	} else {
		if (sfs_zero_range_probe(im->store_fd, &why) < 0)
			why = 0;
		if (why)
			sfs_logf(&im->log, SFS_LOG_INFO, "the store's filesystem has no FALLOC_FL_ZERO_RANGE (%s): "
				 "images with zero_offload zero by writing zeros", strerror(why));
		if (probes.n < sizeof(probes.v) / sizeof(probes.v[0]))
			probes.v[probes.n++] = (struct zr_probe){ dev, why };
	}
	pthread_mutex_unlock(&probes.lk);
	if (why)
		__atomic_store_n(&im->no_zero_range, why, __ATOMIC_RELAXED);
	return 0;
}

/* Make [off, off+len) of the backing file zeros, offloaded when possible. */
int image_zero_backing(struct sfs_image *im, uint64_t off, uint64_t len)
{
	struct sfs_stats *st;
	int rc = 0;

	if (!len)
		return 0;
	image_mark_dirty(im);
	if (im->sc.zero_offload && !__atomic_load_n(&im->no_zero_range, __ATOMIC_RELAXED)) {
		if (fallocate(im->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0)
			goto done;
		if (!no_zero_range(errno))
			return -errno;
		if (!__atomic_exchange_n(&im->no_zero_range, errno, __ATOMIC_RELAXED))
			sfs_logf(&im->log, SFS_LOG_INFO,
				 "%s: backing filesystem has no FALLOC_FL_ZERO_RANGE (%s); zeroing by writing",
				 im->name, strerror(__atomic_load_n(&im->no_zero_range, __ATOMIC_RELAXED)));
	}
	for (uint64_t done_len = 0; done_len < len && rc == 0;) {
		size_t n = len - done_len > im->zerolen ? im->zerolen : (size_t)(len - done_len);

		rc = image_back_write(im, image_zerobuf(), n, off + done_len);
		done_len += n;
	}
	if (rc < 0)
		return rc;
done:
	sfs_stats_cell_enter(&im->stats);
	if ((st = image_stats_of(im)))
		sfs_stats_zeroed(st, len);
	sfs_stats_cell_leave(&im->stats);
	return 0;
}
