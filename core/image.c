/* SPDX-License-Identifier: MIT */
/*
 * image.c - one disk image: I/O at disk offsets onto the backing file,
 * with lazy zeroing, the allocation map and statistics.
 *
 * A request is walked block by block (block = the image's allocation
 * unit).  Runs of allocated blocks go to the backing file in one pread or
 * pwrite; never-written blocks read as zeros from memory; the first write
 * to a block takes the block's stripe lock, re-tests the bit, zeroes the
 * parts of the block the write does not cover, writes its part and only
 * then sets the bit:
 *
 *        block b                          block b+1
 *   |<--------------- block_size --------->|<----- ...
 *   [ zero head ][ data of this write ][ zero tail ]
 *                 ^ off                ^ off+len
 *
 * so a concurrent reader sees either zeros (bit clear) or the finished
 * block, and a crash before the next flush leaves the bit clear on disk
 * (see allocmap.c for the ordering of the flush).  Writes to allocated
 * blocks and all reads take no stripe lock.
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
 * A drive writes a sector whole: a read racing a write of it returns the
 * old sector or the new one (databases' torn-page detection counts on
 * it).  An O_DIRECT transfer keeps that, the page cache does not: a
 * buffered pread copies from the page while a buffered pwrite copies into
 * it, and returns half of each.  So an image whose transfers can take the
 * buffered descriptor (opened SFS_IMAGE_BUFFERED, a filesystem without
 * O_DIRECT, or a logical sector that is not a multiple of its direct I/O
 * alignment) takes the byte range of every request in a range lock
 * (rangelock.h), decided once at open: reads shared, writes, discards,
 * write-zeroes and allocations exclusive.  The range is taken before any
 * stripe lock and released after them, and nothing that holds a stripe
 * lock takes a range, so the two cannot deadlock.  Grow takes no range:
 * it writes only past the old end, before a request can reach there or
 * into blocks whose bits are still clear (a read of them touches no file,
 * a write waits for the stripe locks grow holds).  An image whose every
 * transfer goes O_DIRECT takes no range lock at all.
 *
 * Statistics are made at an image's first I/O: until then a snapshot is
 * all zeros, of the generation the stats will have, so an image nobody
 * uses costs no memory for them.  The descriptors, the map's bitmap and
 * the locks are the resident part (image_impl.h, imgopen.c): the
 * functions here that do I/O run with the image pinned.
 *
 * Eager zeroing (eagerzeroedthick, at creation and after a grow) is an
 * allocation of every clear block, a chunk at a time, each block under
 * its stripe lock as a first write would take it: a write to a block not
 * zeroed yet waits for, or goes before, the zeroing of that block, and a
 * read of it reads zeros because its bit is clear.  It can therefore run
 * while the disk is in use: opened SFS_IMAGE_ZERO_BG, in a thread of the
 * image's own (sfs_image_zero_start), which the store starts outside its
 * lock.  The map is flushed every EAGER_CHUNK, so a stop or a crash loses
 * at most that much progress; "zeroed" is recorded in the map header only
 * once every bit is set, checked under all the stripe locks, which a grow
 * holds while it commits new clear blocks.  The thread keeps the image
 * pinned while it runs.  Close stops it at its next step (ZERO_STEP) and
 * joins it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bufpool.h"
#include "clock.h"
#include "fdio.h"
#include "image_impl.h"
#include "units.h"

#define NSTRIPES SFS_IMG_NSTRIPES
#define BOUNCE_LEN SFS_IMG_BOUNCE_LEN
#define ZERO_STEP (8ull << 20)       /* eager zeroing looks for a stop this often */
#define ZERO_STACK (512u << 10)      /* its thread's stack: it calls little, and a store may
				      * have many images zeroing (or ended, not yet joined) */

/* The image's stats, made at its first I/O; NULL without stats (or out of memory). */
static struct sfs_stats *stats_of(struct sfs_image *im)
{
	struct sfs_stats *st = __atomic_load_n(&im->stats, __ATOMIC_ACQUIRE), *nst = NULL;

	if (st || !im->want_stats)
		return st;
	if (sfs_stats_new_at(im->stats_gen, im->stats_t0, &nst) < 0)
		return NULL;
	if (!__atomic_compare_exchange_n(&im->stats, &st, nst, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		sfs_stats_free(nst);           /* another thread made them first */
		return st;
	}
	return nst;
}

/* The backing file was written: the next flush (or the eviction) must sync it. */
static void mark_dirty(struct sfs_image *im)
{
	if (!__atomic_load_n(&im->dirty, __ATOMIC_RELAXED))
		__atomic_store_n(&im->dirty, 1, __ATOMIC_RELEASE);
}

/* The geometry the disk shows: size is the visible size (reads end there). */
static struct sfs_geom vis_geom(const struct sfs_image *im)
{
	struct sfs_geom g = im->geom;

	g.size = __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE);
	return g;
}

/* A write of a growing image reached end: the disk shows at least that much. */
static void extend_visible(struct sfs_image *im, uint64_t end)
{
	uint64_t cur = __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE);

	while (cur < end && !__atomic_compare_exchange_n(&im->vsize, &cur, end, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
		;
}

static pthread_mutex_t *stripe_of(struct sfs_image *im, uint64_t blk)
{
	return &im->stripe[(blk * 0x9e3779b97f4a7c15ull) >> 56];
}

/* A request's hold on its byte range: a lock in rl when the image takes ranges, else a place in
 * the count of requests in flight without one (sfs_image_need_ranges waits for those); none
 * when the caller holds the range already (a read-modify-write). */
struct hold {
	struct sfs_range r;
	enum { HOLD_NONE, HOLD_COUNTED, HOLD_LOCKED } mode;
};

/* Take [off, off+len) for a request when the image needs it (top of file). */
static int range_lock(struct sfs_image *im, struct hold *h, uint64_t off, uint64_t len, bool excl,
		      bool caller_holds)
{
	int rc;

	h->mode = HOLD_NONE;
	if (caller_holds)
		return 0;
	/* seq_cst on both sides (here and in sfs_image_need_ranges): a request either sees
	 * ranged, or is counted before need_ranges reads the count */
	if (!__atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST)) {
			h->mode = HOLD_COUNTED;
			return 0;
		}
		__atomic_sub_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
	}
	rc = sfs_rangelock_lock(im->rl, &h->r, off, len, excl);
	if (rc == 0)
		h->mode = HOLD_LOCKED;
	return rc;
}

static void range_unlock(struct sfs_image *im, struct hold *h)
{
	if (h->mode == HOLD_LOCKED)
		sfs_rangelock_unlock(im->rl, &h->r);
	else if (h->mode == HOLD_COUNTED)
		__atomic_sub_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
}

void sfs_image_need_ranges(struct sfs_image *im)
{
	struct timespec ts = { 0, 20000 };

	if (__atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&im->ranged, true, __ATOMIC_SEQ_CST);
	/* the requests that started without a range end before one is taken */
	while (__atomic_load_n(&im->unranged, __ATOMIC_SEQ_CST))
		nanosleep(&ts, NULL);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {            /* backing file shorter than the disk: zeros */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* The descriptor for a transfer of len bytes at off: O_DIRECT when aligned. */
static int backing_fd(const struct sfs_image *im, size_t len, uint64_t off)
{
	if (im->dfd >= 0 && off % im->dio_off == 0 && len % im->dio_off == 0)
		return im->dfd;
	return im->fd;
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
	char *b;

	if (!needs_bounce(im, fd, buf))
		return wr ? sfs_pwrite_all(fd, buf, len, (off_t)off) : pread_all(fd, buf, len, off);
	b = sfs_bufpool_get(sfs_bufpool_shared());
	if (!b)
		return -ENOMEM;
	for (size_t done = 0, n; done < len && rc == 0; done += n) {
		n = len - done < BOUNCE_LEN ? len - done : BOUNCE_LEN;
		if (wr) {
			memcpy(b, buf + done, n);
			rc = sfs_pwrite_all(fd, b, n, (off_t)(off + done));
		} else if ((rc = pread_all(fd, b, n, off + done)) == 0) {
			memcpy(buf + done, b, n);
		}
	}
	sfs_bufpool_put(sfs_bufpool_shared(), b);
	return rc;
}

static int back_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	return back_io(im, false, buf, len, off);
}

static int back_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	mark_dirty(im);
	return back_io(im, true, (char *)buf, len, off);
}

/* Make [off, off+len) of the backing file zeros, offloaded when possible. */
static int zero_backing(struct sfs_image *im, uint64_t off, uint64_t len)
{
	struct sfs_stats *st;
	int rc = 0;

	if (!len)
		return 0;
	mark_dirty(im);
	if (im->sc.zero_offload && !__atomic_load_n(&im->no_zero_range, __ATOMIC_RELAXED)) {
		if (fallocate(im->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0)
			goto done;
		if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
			return -errno;
		if (!__atomic_exchange_n(&im->no_zero_range, 1, __ATOMIC_RELAXED))
			sfs_logf(&im->log, SFS_LOG_INFO,
				 "%s: backing filesystem has no FALLOC_FL_ZERO_RANGE; zeroing by writing",
				 im->name);
	}
	for (uint64_t done_len = 0; done_len < len && rc == 0;) {
		size_t n = len - done_len > im->zerolen ? im->zerolen : (size_t)(len - done_len);

		rc = back_write(im, sfs_img_zerobuf(), n, off + done_len);
		done_len += n;
	}
	if (rc < 0)
		return rc;
done:
	if ((st = stats_of(im)))
		sfs_stats_zeroed(st, len);
	return 0;
}

/* Eager zeroing (zero_blocks) flushes the map after this many bytes, so a stop or a crash
 * loses at most that much progress and the next open resumes where it stopped. */
#define EAGER_CHUNK (256ull << 20)

/* ---- I/O ---- */

/* A read; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, bool caller_holds)
{
	struct sfs_geom g = vis_geom(im);
	uint64_t t0 = im->want_stats ? sfs_now_ns() : 0, first, last, pos;
	struct sfs_stats *st;
	struct hold r;
	char *p = buf;
	size_t n;
	int rc = sfs_geom_check_read(&g, off, len, &n);

	if (rc < 0) {
		if ((st = stats_of(im)))
			sfs_stats_misaligned(st, off, len);
		return rc;
	}
	if (n == 0)
		return 0;
	rc = range_lock(im, &r, off, n, false, caller_holds);
	if (rc < 0)
		return rc;
	sfs_geom_block_span(&g, off, n, &first, &last);
	pos = off;
	for (uint64_t b = first; b <= last;) {
		bool set = sfs_map_test(im->map, b);
		uint64_t e = b + 1, rs, re;

		while (e <= last && sfs_map_test(im->map, e) == set)
			e++;
		sfs_geom_block_range(&g, e - 1, &rs, &re);
		if (re > off + n)
			re = off + n;
		if (set) {
			rc = back_read(im, p + (pos - off), re - pos, pos);
			if (rc < 0)
				break;
		} else {
			memset(p + (pos - off), 0, re - pos);
		}
		pos = re;
		b = e;
	}
	range_unlock(im, &r);
	if (rc < 0)
		return rc;
	if ((st = stats_of(im)))
		sfs_stats_read(st, off, n, sfs_now_ns() - t0);
	return (ssize_t)n;
}

ssize_t sfs_image_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	return do_read(im, buf, len, off, false);
}

/* First write to block b: zero what [s, e) leaves of it, write, then mark it. */
static int first_write(struct sfs_image *im, const struct sfs_geom *g, uint64_t b,
		       const char *data, uint64_t s, uint64_t e, bool *was_first)
{
	pthread_mutex_t *lk = stripe_of(im, b);
	uint64_t bs, be;
	int rc;

	pthread_mutex_lock(lk);
	if (b >= sfs_map_nblocks(im->map)) {     /* the capacity of a growing image went back */
		pthread_mutex_unlock(lk);
		return -ENOSPC;
	}
	if (sfs_map_test(im->map, b)) {          /* another writer got there first */
		pthread_mutex_unlock(lk);
		return back_write(im, data, e - s, s);
	}
	sfs_geom_block_range(g, b, &bs, &be);
	rc = zero_backing(im, bs, s - bs);
	if (rc == 0)
		rc = zero_backing(im, e, be - e);
	if (rc == 0)
		rc = back_write(im, data, e - s, s);
	if (rc == 0) {
		sfs_map_set(im->map, b);
		*was_first = true;
	}
	pthread_mutex_unlock(lk);
	return rc;
}

/* A write; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off, bool caller_holds)
{
	/* a growing image takes writes up to its capacity; another ends where it shows */
	bool growing = __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE);
	struct sfs_geom g = growing ? sfs_img_cur_geom(im) : vis_geom(im);
	uint64_t t0 = im->want_stats ? sfs_now_ns() : 0, first, last, run = off, end = off + len;
	struct sfs_stats *st;
	struct hold r;
	const char *p = buf;
	bool was_first = false;
	int rc = sfs_geom_check_write(&g, off, len);

	if (rc < 0) {
		if ((st = stats_of(im))) {
			if (rc == -EINVAL)
				sfs_stats_misaligned(st, off, len);
			else
				sfs_stats_out_of_range(st);
		}
		return rc;
	}
	if (len == 0)
		return 0;
	rc = range_lock(im, &r, off, len, true, caller_holds);
	if (rc < 0)
		return rc;
	sfs_geom_block_span(&g, off, len, &first, &last);
	for (uint64_t b = first; b <= last && rc == 0; b++) {
		uint64_t bs, be;

		if (sfs_map_test(im->map, b))
			continue;                /* part of the current run of allocated blocks */
		sfs_geom_block_range(&g, b, &bs, &be);
		if (bs < off)
			bs = off;
		if (be > end)
			be = end;
		if (bs > run)
			rc = back_write(im, p + (run - off), bs - run, run);
		if (rc == 0)
			rc = first_write(im, &g, b, p + (bs - off), bs, be, &was_first);
		run = be;
	}
	if (rc == 0 && run < end)
		rc = back_write(im, p + (run - off), end - run, run);
	if (rc == 0 && growing)
		extend_visible(im, end);
	range_unlock(im, &r);
	if (rc < 0)
		return rc;
	if ((st = stats_of(im)))
		sfs_stats_write(st, off, len, sfs_now_ns() - t0, was_first, sfs_geom_is_rmw(&g, off, len));
	return (ssize_t)len;
}

ssize_t sfs_image_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	return do_write(im, buf, len, off, false);
}

/* The aligned span [*s, *e) of whole physical sectors (clipped to size, which is a multiple
 * of the logical sector) around [off, off+len): what a page cache reads and writes. */
static void unit_span(const struct sfs_geom *g, uint64_t off, size_t len, uint64_t *s, uint64_t *e)
{
	*s = off / g->pss * g->pss;
	*e = (off + len + g->pss - 1) / g->pss * g->pss;
	if (*e > g->size)
		*e = g->size;
}

/* A page-aligned buffer of len bytes for a read-modify-write: from the shared pool when it
 * fits (a request of up to 1 MiB and its partial sectors), else from the heap. */
static void *span_buf(uint64_t len)
{
	struct sfs_bufpool *pool = sfs_bufpool_shared();
	void *p = NULL;

	if (pool && len <= sfs_bufpool_size(pool))
		return sfs_bufpool_get(pool);
	return posix_memalign(&p, 4096, len ? len : 1) == 0 ? p : NULL;
}

static void span_free(void *p, uint64_t len)
{
	struct sfs_bufpool *pool = sfs_bufpool_shared();

	if (pool && len <= sfs_bufpool_size(pool))
		sfs_bufpool_put(pool, p);
	else
		free(p);
}

ssize_t sfs_image_read_any(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	struct sfs_geom g = vis_geom(im);
	uint64_t s, e;
	ssize_t n;
	char *tmp;

	if (off % g.lss == 0 && len % g.lss == 0)
		return sfs_image_read(im, buf, len, off);
	if (off >= g.size || len == 0)
		return 0;
	if (len > g.size - off)
		len = (size_t)(g.size - off);
	unit_span(&g, off, len, &s, &e);
	tmp = span_buf(e - s);
	if (!tmp)
		return -ENOMEM;
	n = sfs_image_read(im, tmp, e - s, s);
	if (n >= 0 && (uint64_t)n < off + len - s)
		n = -EIO;                /* the disk shrank meanwhile: cannot happen with data */
	if (n >= 0) {
		memcpy(buf, tmp + (off - s), len);
		n = (ssize_t)len;
	}
	span_free(tmp, e - s);
	return n;
}

ssize_t sfs_image_write_any(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	struct sfs_geom g = vis_geom(im);
	uint64_t s, e, head_end, tail_start;
	struct sfs_stats *st;
	struct hold r;
	ssize_t n = 0;
	char *tmp;
	int rc;

	if ((off % g.lss == 0 && len % g.lss == 0) || len == 0)
		return sfs_image_write(im, buf, len, off);
	/* what a page cache would do, except grow a disk: an extending write is whole sectors */
	if (off > g.size || len > g.size - off) {
		if ((st = stats_of(im))) {
			if (sfs_image_growing(im))
				sfs_stats_misaligned(st, off, len);
			else
				sfs_stats_out_of_range(st);
		}
		return sfs_image_growing(im) ? -EINVAL : -ENOSPC;
	}
	unit_span(&g, off, len, &s, &e);
	tmp = span_buf(e - s);
	if (!tmp)
		return -ENOMEM;
	/* the merge must not race another write of these sectors */
	sfs_image_need_ranges(im);
	rc = range_lock(im, &r, s, e - s, true, false);
	if (rc < 0) {
		span_free(tmp, e - s);
		return rc;
	}
	head_end = s + g.pss < e ? s + g.pss : e;
	tail_start = e - g.pss > s ? e - g.pss : s;
	if (off > s)
		n = do_read(im, tmp, head_end - s, s, true);
	if (n >= 0 && off + len < e && (tail_start >= head_end || off == s))
		n = do_read(im, tmp + (tail_start - s), e - tail_start, tail_start, true);
	if (n >= 0) {
		memcpy(tmp + (off - s), buf, len);
		n = do_write(im, tmp, e - s, s, true);
	}
	range_unlock(im, &r);
	span_free(tmp, e - s);
	return n < 0 ? n : (ssize_t)len;
}

int sfs_image_flush(struct sfs_image *im)
{
	uint64_t t0 = im->want_stats ? sfs_now_ns() : 0;
	struct sfs_stats *st;
	int rc;

	/* cleared first: a write during the flush marks it again for the next one */
	__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
	rc = sfs_map_flush(im->map, im->fd);
	if (rc < 0)
		mark_dirty(im);
	if (rc == 0 && (st = stats_of(im)))
		sfs_stats_flush(st, sfs_now_ns() - t0);
	return rc;
}

enum range_op { OP_DISCARD, OP_ZERO, OP_ALLOCATE };

/* Apply op to every block touching [off, off+len), each under its stripe lock. */
static int range_op(struct sfs_image *im, uint64_t off, uint64_t len, enum range_op op)
{
	struct sfs_geom g = sfs_img_cur_geom(im);
	uint64_t first, last;
	struct hold r;
	int rc;

	if (len == 0)
		return 0;
	rc = range_lock(im, &r, off, len, true, false);
	if (rc < 0)
		return rc;
	sfs_geom_block_span(&g, off, len, &first, &last);
	for (uint64_t b = first; b <= last && rc == 0; b++) {
		pthread_mutex_t *lk = stripe_of(im, b);
		uint64_t bs, be, s, e;

		sfs_geom_block_range(&g, b, &bs, &be);
		s = bs < off ? off : bs;
		e = be > off + len ? off + len : be;
		pthread_mutex_lock(lk);
		if (b >= sfs_map_nblocks(im->map)) {
			/* a growing image gave back the room this range was in (trim) */
			pthread_mutex_unlock(lk);
			break;
		}
		if (op == OP_ALLOCATE) {
			if (!sfs_map_test(im->map, b)) {
				rc = zero_backing(im, bs, be - bs);
				if (rc == 0)
					sfs_map_set(im->map, b);
			}
		} else if (!sfs_map_test(im->map, b)) {
			/* never written: reads as zeros already */
		} else if (op == OP_DISCARD && im->sc.prov == SFS_PROV_THIN && s == bs && e == be) {
			sfs_map_clear(im->map, b);
			mark_dirty(im);
			if (fallocate(im->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)bs, (off_t)(be - bs)) < 0 && errno != EOPNOTSUPP)
				rc = -errno;
		} else {
			rc = zero_backing(im, s, e - s);
		}
		pthread_mutex_unlock(lk);
	}
	range_unlock(im, &r);
	return rc;
}

/* Discard and write-zeroes: the I/O rules and their counters, then the blocks. */
static int checked_range_op(struct sfs_image *im, uint64_t off, uint64_t len, enum range_op op)
{
	struct sfs_geom g = vis_geom(im);
	struct sfs_stats *st;
	int rc = sfs_geom_check_write(&g, off, len);

	if ((st = stats_of(im))) {
		if (rc == -EINVAL)
			sfs_stats_misaligned(st, off, len);
		else if (rc == -ENOSPC)
			sfs_stats_out_of_range(st);
		else if (op == OP_DISCARD)
			sfs_stats_discard(st, len);
		else
			sfs_stats_write_zeroes(st, len);
	}
	return rc < 0 ? rc : range_op(im, off, len, op);
}

int sfs_image_discard(struct sfs_image *im, uint64_t off, uint64_t len)
{
	return checked_range_op(im, off, len, OP_DISCARD);
}

int sfs_image_write_zeroes(struct sfs_image *im, uint64_t off, uint64_t len)
{
	return checked_range_op(im, off, len, OP_ZERO);
}

int sfs_image_allocate(struct sfs_image *im, uint64_t off, uint64_t len)
{
	struct sfs_geom g = vis_geom(im);

	if (off > g.size || len > g.size - off)
		return -ENOSPC;
	return range_op(im, off, len, OP_ALLOCATE);
}

/* The checks of a grow: 0 to go on, 1 when there is nothing to do, or -EINVAL. */
int sfs_image_grow_prepare(struct sfs_image *im, uint64_t new_size)
{
	struct sfs_geom g = sfs_img_cur_geom(im);
	uint64_t old = g.size;
	struct stat st;
	int rc = sfs_geom_grow_check(&g, new_size, NULL, 0);

	if (rc)
		return rc < 0 ? rc : 0;
	if (fstat(im->fd, &st) < 0)
		return -errno;
	rc = sfs_map_grow_prepare(im->map, new_size);
	if (rc == 0 && (uint64_t)st.st_size < new_size && ftruncate(im->fd, (off_t)new_size) < 0)
		rc = -errno;
	/* The old last block may be partial and allocated: what grows into it must read zero.
	 * Nothing past the old end is read or written until the commit, so no lock is needed. */
	if (rc == 0 && old % g.block_size && sfs_map_test(im->map, sfs_geom_nblocks(&g) - 1)) {
		uint64_t tail_end = (old / g.block_size + 1) * g.block_size;

		rc = zero_backing(im, old, (tail_end < new_size ? tail_end : new_size) - old);
	}
	if (rc == 0 && im->sc.prov != SFS_PROV_THIN &&
	    fallocate(im->fd, 0, (off_t)old, (off_t)(new_size - old)) < 0 && errno != EOPNOTSUPP)
		rc = -errno;
	if (rc == 0 && fdatasync(im->fd) < 0)
		rc = -errno;
	if (rc < 0)
		sfs_image_grow_abort(im, (uint64_t)st.st_size);
	return rc;
}

int sfs_image_grow_commit(struct sfs_image *im, uint64_t new_size)
{
	struct sfs_geom g = sfs_img_cur_geom(im);
	uint32_t flags = sfs_map_info(im->map)->flags;
	int rc = sfs_geom_grow_check(&g, new_size, NULL, 0);

	if (rc)
		return rc < 0 ? rc : 0;
	/* An eagerzeroedthick image is not all zeroed again until its new blocks are. */
	if (im->sc.prov == SFS_PROV_EAGERZEROEDTHICK)
		flags &= ~SFS_MAP_F_ZEROED;
	for (int i = 0; i < NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
	rc = sfs_map_grow_commit(im->map, new_size, flags);
	if (rc == 0) {
		__atomic_store_n(&im->geom.size, new_size, __ATOMIC_RELEASE);
		im->sc.size = new_size;
		/* a growing image shows what its writes reached; the new room is ahead of them */
		if (!__atomic_load_n(&im->growing, __ATOMIC_ACQUIRE))
			__atomic_store_n(&im->vsize, new_size, __ATOMIC_RELEASE);
	}
	for (int i = NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
	return rc;
}

int sfs_image_grow_abort(struct sfs_image *im, uint64_t old_len)
{
	struct stat st;
	int rc = sfs_map_grow_abort(im->map);

	if (fstat(im->fd, &st) < 0)
		return rc ? rc : -errno;
	if ((uint64_t)st.st_size > old_len) {
		/* the extension goes, and with it any space reserved for it */
		if (ftruncate(im->fd, (off_t)old_len) < 0 || fsync(im->fd) < 0)
			return rc ? rc : -errno;
	}
	return rc;
}

static void lock_stripes(struct sfs_image *im)
{
	for (int i = 0; i < NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
}

static void unlock_stripes(struct sfs_image *im)
{
	for (int i = NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
}

/* Every block is allocated: make the bits durable, then record the image zeroed, under all
 * the stripe locks so that a grow cannot commit clear blocks in between.  0 when recorded, 1
 * when clear blocks are there again (a grow came first), or -errno. */
static int mark_zeroed(struct sfs_image *im)
{
	int rc = sfs_map_flush(im->map, im->fd);

	if (rc < 0)
		return rc;
	lock_stripes(im);
	if (sfs_map_next_clear(im->map, 0) < sfs_map_nblocks(im->map))
		rc = 1;
	else
		rc = sfs_map_set_flags(im->map, sfs_map_info(im->map)->flags | SFS_MAP_F_ZEROED);
	unlock_stripes(im);
	return rc;
}

/* Zero and mark every clear block, ZERO_STEP at a time, the map flushed every EAGER_CHUNK, then
 * record the image zeroed.  stoppable: return -ECANCELED (map flushed) once zero_stop is set.
 * 0, or -errno with the progress made kept in memory. */
static int zero_blocks(struct sfs_image *im, bool stoppable)
{
	uint64_t b = 0, since_flush = 0;
	int rc;

	if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK || (sfs_map_info(im->map)->flags & SFS_MAP_F_ZEROED))
		return 0;
	for (;;) {
		struct sfs_geom g = sfs_img_cur_geom(im);
		uint64_t nb = sfs_map_nblocks(im->map), per = ZERO_STEP / g.block_size, e, s0, e0, s1, e1;

		b = sfs_map_next_clear(im->map, b);
		if (b >= nb) {
			rc = mark_zeroed(im);
			if (rc <= 0)
				return rc;
			b = 0;                       /* a grow added blocks: once more */
			continue;
		}
		if (stoppable && __atomic_load_n(&im->zero_stop, __ATOMIC_ACQUIRE)) {
			rc = sfs_map_flush(im->map, im->fd);
			return rc < 0 ? rc : -ECANCELED;
		}
		e = sfs_map_next_set(im->map, b);
		if (per == 0)
			per = 1;
		if (e - b > per)
			e = b + per;
		sfs_geom_block_range(&g, b, &s0, &e0);
		sfs_geom_block_range(&g, e - 1, &s1, &e1);
		rc = range_op(im, s0, e1 - s0, OP_ALLOCATE);
		if (rc < 0)
			return rc;
		since_flush += e1 - s0;
		if (since_flush >= EAGER_CHUNK) {
			rc = sfs_map_flush(im->map, im->fd);
			if (rc < 0)
				return rc;
			since_flush = 0;
		}
		b = e;
	}
}

int sfs_image_finish_zeroing(struct sfs_image *im)
{
	return zero_blocks(im, false);
}

/* Bytes of the disk zeroed (or written) so far, count blocks allocated, and the disk size. */
static void zero_progress(const struct sfs_image *im, uint64_t count, uint64_t *done, uint64_t *total)
{
	struct sfs_geom g = sfs_img_cur_geom(im);
	uint64_t bytes = count * g.block_size;

	*total = g.size;
	*done = bytes < g.size ? bytes : g.size;
}

static void *zero_thread(void *arg)
{
	struct sfs_image *im = arg;
	uint64_t done, total;
	char a[32], b[32];
	int rc;

	for (;;) {
		rc = zero_blocks(im, true);
		pthread_mutex_lock(&im->zero_lk);
		if (rc == 0 && im->zero_again && !__atomic_load_n(&im->zero_stop, __ATOMIC_ACQUIRE)) {
			im->zero_again = false;
			pthread_mutex_unlock(&im->zero_lk);
			continue;
		}
		__atomic_store_n(&im->zero_err, rc == -ECANCELED ? 0 : rc, __ATOMIC_RELAXED);
		__atomic_store_n(&im->zero_active, false, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&im->zero_lk);
		break;
	}
	zero_progress(im, sfs_map_count(im->map), &done, &total);
	sfs_format_human(rc == 0 && im->zero_from < done ? done - im->zero_from : done, a, sizeof(a));
	sfs_format_human(total, b, sizeof(b));
	if (rc == 0)
		sfs_logf(&im->log, SFS_LOG_INFO, "%s: eager zeroing done (%s in %.1f s)", im->name,
			 a, (double)(sfs_now_ns() - im->zero_t0) / 1e9);
	else if (rc == -ECANCELED)
		sfs_logf(&im->log, SFS_LOG_INFO, "%s: eager zeroing stopped at %u%% (%s of %s); it resumes "
			 "when the image is next opened", im->name, (unsigned)(total ? done * 100 / total : 0), a, b);
	else
		sfs_logf(&im->log, SFS_LOG_ERR, "%s: eager zeroing failed at %u%% (%s of %s): %s; blocks not "
			 "zeroed yet are zeroed on their first write, and the zeroing resumes when the image is "
			 "next opened", im->name, (unsigned)(total ? done * 100 / total : 0), a, b, strerror(-rc));
	sfs_image_unpin(im);             /* the pin sfs_image_zero_start took for this thread */
	return NULL;
}

int sfs_image_zero_start(struct sfs_image *im)
{
	uint64_t done, total;
	pthread_attr_t attr;
	sigset_t all, old;
	char a[32];
	int rc = 0;

	if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK || (sfs_map_info(im->map)->flags & SFS_MAP_F_ZEROED))
		return 0;
	if (!im->zero_bg)
		return sfs_image_finish_zeroing(im);
	pthread_mutex_lock(&im->zero_lk);
	if (__atomic_load_n(&im->zero_stop, __ATOMIC_ACQUIRE))
		goto out;
	if (im->zero_active) {
		im->zero_again = true;       /* the running thread looks once more */
		goto out;
	}
	if (im->zero_joinable) {
		pthread_join(im->zero_thr, NULL);   /* ended, or ending: it holds no lock */
		im->zero_joinable = false;
	}
	zero_progress(im, sfs_map_count(im->map), &done, &total);
	im->zero_t0 = sfs_now_ns();
	im->zero_from = done;
	__atomic_store_n(&im->zero_active, true, __ATOMIC_RELEASE);
	__atomic_store_n(&im->zero_err, 0, __ATOMIC_RELAXED);
	im->zero_again = false;
	/* the thread keeps the image's descriptors open until it ends */
	rc = sfs_image_pin(im);
	if (rc < 0) {
		__atomic_store_n(&im->zero_err, rc, __ATOMIC_RELAXED);
		__atomic_store_n(&im->zero_active, false, __ATOMIC_RELEASE);
		sfs_logf(&im->log, SFS_LOG_ERR, "%s: cannot start eager zeroing: %s; blocks not zeroed yet are "
			 "zeroed on their first write", im->name, strerror(-rc));
		goto out;
	}
	/* signals are for the daemon's own threads (libfuse's handlers end its loop) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_attr_init(&attr);
	if (rc == 0) {
		pthread_attr_setstacksize(&attr, ZERO_STACK);
		rc = -pthread_create(&im->zero_thr, &attr, zero_thread, im);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		sfs_image_unpin(im);
		__atomic_store_n(&im->zero_err, rc, __ATOMIC_RELAXED);
		__atomic_store_n(&im->zero_active, false, __ATOMIC_RELEASE);
		sfs_logf(&im->log, SFS_LOG_ERR, "%s: cannot start eager zeroing: %s; blocks not zeroed yet are "
			 "zeroed on their first write", im->name, strerror(-rc));
		goto out;
	}
	im->zero_joinable = true;
	sfs_format_human(total - done, a, sizeof(a));
	sfs_logf(&im->log, SFS_LOG_INFO, "%s: eager zeroing in the background, %s to go (zero offload %s)",
		 im->name, a, im->sc.zero_offload ? "on" : "off");
out:
	pthread_mutex_unlock(&im->zero_lk);
	return rc;
}

void sfs_image_zero_cancel(struct sfs_image *im)
{
	__atomic_store_n(&im->zero_stop, 1, __ATOMIC_RELEASE);
}

/* Stop the zeroing thread, if any, and wait for it (progress kept in the map). */
void sfs_img_zero_join(struct sfs_image *im)
{
	bool joinable;

	sfs_image_zero_cancel(im);
	pthread_mutex_lock(&im->zero_lk);
	joinable = im->zero_joinable;
	im->zero_joinable = false;
	pthread_mutex_unlock(&im->zero_lk);
	if (joinable)
		pthread_join(im->zero_thr, NULL);
}

enum sfs_zeroing sfs_image_zeroing(const struct sfs_image *im, uint64_t *done, uint64_t *total, int *err)
{
	struct sfs_map_info mi;
	uint64_t count, nblocks;

	sfs_img_map_state(im, &mi, &count, &nblocks);
	zero_progress(im, count, done, total);
	*err = 0;
	if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK)
		return SFS_ZEROING_NONE;
	if (mi.flags & SFS_MAP_F_ZEROED)
		return SFS_ZEROING_DONE;
	if (__atomic_load_n(&im->zero_active, __ATOMIC_ACQUIRE))
		return SFS_ZEROING_RUNNING;
	*err = __atomic_load_n(&im->zero_err, __ATOMIC_RELAXED);
	return *err < 0 ? SFS_ZEROING_FAILED : SFS_ZEROING_STOPPED;
}

int sfs_image_grow(struct sfs_image *im, uint64_t new_size)
{
	struct stat st;
	int rc;

	if (fstat(im->fd, &st) < 0)
		return -errno;
	rc = sfs_image_grow_prepare(im, new_size);
	if (rc == 0) {
		rc = sfs_image_grow_commit(im, new_size);
		if (rc < 0)
			sfs_image_grow_abort(im, (uint64_t)st.st_size);
	}
	if (rc == 0)
		rc = sfs_image_zero_start(im);
	if (rc == 0)
		rc = sfs_map_flush(im->map, im->fd);
	return rc;
}

/* ---- accessors ---- */

struct sfs_geom sfs_image_geom(const struct sfs_image *im)
{
	return vis_geom(im);
}

uint64_t sfs_image_capacity(const struct sfs_image *im)
{
	return __atomic_load_n(&im->geom.size, __ATOMIC_ACQUIRE);
}

void sfs_image_set_growing(struct sfs_image *im, bool growing)
{
	__atomic_store_n(&im->growing, growing, __ATOMIC_RELEASE);
	/* a disk of fixed size shows all it has (the room ahead, when it could not be given back) */
	if (!growing)
		__atomic_store_n(&im->vsize, sfs_image_capacity(im), __ATOMIC_RELEASE);
}

bool sfs_image_growing(const struct sfs_image *im)
{
	return __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE);
}

int sfs_image_show_size(struct sfs_image *im, uint64_t size)
{
	uint64_t cap = sfs_image_capacity(im);

	if (!sfs_image_growing(im) || size % im->geom.lss || size > cap)
		return -EINVAL;
	extend_visible(im, size);
	return 0;
}

/* The most data a shrink reads to see that what it drops is only zeros. */
#define SHRINK_SCAN_MAX (64ull << 20)

/* A disk shrinking to cap (stripe locks held): the allocated blocks wholly past cap must hold
 * nothing but zeros (as qemu-img's first block does); they are then unmarked.  0, or -EBUSY
 * when one holds data (or there is too much to look at), or -errno. */
static int forget_zero_blocks_past(struct sfs_image *im, uint64_t cap)
{
	struct sfs_geom g = sfs_img_cur_geom(im);
	uint64_t nb = sfs_map_nblocks(im->map), first = (cap + g.block_size - 1) / g.block_size, seen = 0;
	char *buf;
	int rc = 0;

	if (sfs_map_next_set(im->map, first) >= nb)
		return 0;
	buf = malloc(g.block_size);
	if (!buf)
		return -ENOMEM;
	for (uint64_t b = sfs_map_next_set(im->map, first); b < nb && rc == 0; b = sfs_map_next_set(im->map, b + 1)) {
		uint64_t bs, be;

		sfs_geom_block_range(&g, b, &bs, &be);
		seen += be - bs;
		if (seen > SHRINK_SCAN_MAX) {
			rc = -EBUSY;
			break;
		}
		rc = pread_all(im->fd, buf, be - bs, bs);
		for (uint64_t i = 0; rc == 0 && i < be - bs; i++)
			if (buf[i])
				rc = -EBUSY;
	}
	free(buf);
	for (uint64_t b = sfs_map_next_set(im->map, first); rc == 0 && b < nb; b = sfs_map_next_set(im->map, b + 1))
		sfs_map_clear(im->map, b);
	return rc;
}

int sfs_image_trim_commit(struct sfs_image *im, uint64_t cap)
{
	bool growing = sfs_image_growing(im);
	int rc;

	if (cap % im->geom.lss || cap > sfs_image_capacity(im) ||
	    (growing && cap < __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE)))
		return -EINVAL;
	if (cap == sfs_image_capacity(im))
		return 0;
	for (int i = 0; i < NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
	/* under every stripe lock: no first write can set a bit past cap now */
	rc = growing && cap < __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE) ? -EAGAIN : 0;
	if (rc == 0 && !growing)
		rc = forget_zero_blocks_past(im, cap);
	if (rc == 0)
		rc = sfs_map_shrink(im->map, cap);
	if (rc == 0) {
		__atomic_store_n(&im->geom.size, cap, __ATOMIC_RELEASE);
		im->sc.size = cap;
		if (!growing)
			__atomic_store_n(&im->vsize, cap, __ATOMIC_RELEASE);
	}
	for (int i = NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
	return rc;
}

int sfs_image_reformat(struct sfs_image *im, int state_fd, const struct sfs_sidecar *sc)
{
	struct sfs_map_info mi = { { 0, sc->lss, sc->pss, sc->block_size }, sc->prov, 0 };
	char mapname[300], err[256];
	struct sfs_map *nm;
	int rc;

	if (sfs_sidecar_validate(sc, im->name, err, sizeof(err)) < 0)
		return -EINVAL;
	if (sfs_image_capacity(im) || sfs_map_count(im->map))
		return -EBUSY;
	if (im->nretired == sizeof(im->retired) / sizeof(im->retired[0]))
		return -EBUSY;
	sfs_map_name(mapname, sizeof(mapname), im->name);
	rc = sfs_map_create(state_fd, mapname, &mi, &nm);
	if (rc < 0)
		return rc;
	for (int i = 0; i < NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
	/* the old map stays readable until close: a lock-free reader may hold it */
	im->retired[im->nretired++] = im->map;
	__atomic_store_n(&im->map, nm, __ATOMIC_RELEASE);
	im->sc = *sc;
	im->sc.size = 0;
	im->geom = mi.geom;
	__atomic_store_n(&im->vsize, 0, __ATOMIC_RELEASE);
	if (im->dfd < 0 || im->geom.lss % im->dio_off != 0)
		__atomic_store_n(&im->ranged, true, __ATOMIC_SEQ_CST);
	for (int i = NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
	return 0;
}

int sfs_image_trim_backing(struct sfs_image *im)
{
	struct stat st;
	uint64_t cap = sfs_image_capacity(im);

	if (fstat(im->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > cap && (ftruncate(im->fd, (off_t)cap) < 0 || fsync(im->fd) < 0))
		return -errno;
	return 0;
}

struct sfs_sidecar sfs_image_sidecar(const struct sfs_image *im)
{
	struct sfs_sidecar sc = im->sc;

	sc.size = __atomic_load_n(&im->geom.size, __ATOMIC_ACQUIRE);
	return sc;
}

struct sfs_map *sfs_image_map(struct sfs_image *im)
{
	return im->map;
}

struct sfs_stats *sfs_image_stats(struct sfs_image *im)
{
	return stats_of(im);
}

void sfs_image_stats_snapshot(struct sfs_image *im, struct sfs_stats_snap *snap)
{
	struct sfs_stats *st = __atomic_load_n(&im->stats, __ATOMIC_ACQUIRE);

	if (st)
		sfs_stats_snapshot(st, snap);
	else
		sfs_stats_snapshot_empty(im->stats_gen, im->stats_t0, snap);
}

bool sfs_image_has_stats(const struct sfs_image *im)
{
	return __atomic_load_n(&im->stats, __ATOMIC_ACQUIRE) != NULL;
}

void sfs_image_stats_info(const struct sfs_image *im, struct sfs_stats_info *info)
{
	struct sfs_map_info mi;

	info->name = im->name;
	info->geom = vis_geom(im);
	info->prov = im->sc.prov;
	info->zero_offload = im->sc.zero_offload;
	info->direct = sfs_image_direct(im);
	sfs_img_map_state(im, &mi, &info->allocated_blocks, &info->total_blocks);
	info->zeroing = sfs_image_zeroing(im, &info->zeroing_done, &info->zeroing_total, &info->zeroing_err);
}

bool sfs_image_direct(const struct sfs_image *im)
{
	return im->fdc ? im->direct : im->dfd >= 0;
}

struct sfs_rangelock *sfs_image_rangelock(struct sfs_image *im)
{
	return __atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST) ? im->rl : NULL;
}
