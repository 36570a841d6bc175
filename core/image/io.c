/* SPDX-License-Identifier: MIT */
/*
 * io.c - one disk image: I/O at disk offsets onto the backing file,
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
 * (see map/map.c for the ordering of the flush).  Writes to allocated
 * blocks and all reads take no stripe lock.
 *
 * Backing I/O (O_DIRECT or buffered, bounce buffers, zeroing) is backing.c;
 * discard, write-zeroes and allocate are ranges.c.
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
 * uses costs no memory for them; an image idle a while holds them packed
 * (stats/cell.h).  Each public call that records goes into the stats'
 * cell first and out of it last, so they are never packed under it.  The
 * descriptors, the map's bitmap and the locks are the resident part
 * (internal.h, open.c): the functions here that do I/O run with the
 * image pinned.
 *
 * An image with a failure state (failures.c, fail.h) calls its hooks
 * around each read, write, flush, discard and write-zeroes, once the
 * range is taken and until before it is released; such an image always
 * takes ranges (a volatile cache needs a write's range held while its old
 * data is saved), so every hook runs with its range held.  An image
 * without one pays a load of a NULL pointer per request.
 *
 * Eager zeroing is zero.c; grow, trim and the capacity are size.c.
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

#include "util/bufpool.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "fail/fail.h"
#include "internal.h"
#include "model/model.h"
#include "util/units.h"

#define NSTRIPES IMAGE_NSTRIPES
#define BOUNCE_LEN IMAGE_BOUNCE_LEN

/* A request of class c that arrived at t0 is done on the backing store: hold it until the device
 * profile's drive would have completed it (no profile: at once), and count the time added.  0, or
 * -EIO when the daemon stopped serving while the model still held it: a request in flight fails,
 * as on a disk that went away (what it wrote is in the backing file all the same). */
static int model_done(struct sfs_image *im, enum sfs_lat_class c, const struct sfs_model_req *rq, uint64_t t0)
{
	struct sfs_stats *st;
	uint64_t ns;

	if (!im->model)
		return 0;
	if (sfs_model_complete(im->model, rq, t0, &ns) < 0)
		return -EIO;
	if (ns && (st = image_stats_of(im)))
		sfs_stats_model_delay(st, c, ns);
	return 0;
}

/* The writes this thread makes next are FUA (sfs_image_fua_next). */
static __thread bool fua_next;

void sfs_image_fua_next(bool fua)
{
	fua_next = fua;
}

bool image_count_unranged(struct sfs_image *im)
{
	/* seq_cst on both sides (here and in sfs_image_need_ranges): a request either sees
	 * ranged, or is counted before need_ranges reads the count */
	if (__atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST))
		return false;
	__atomic_add_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&im->ranged, __ATOMIC_SEQ_CST))
		return true;
	__atomic_sub_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
	return false;
}

void image_uncount_unranged(struct sfs_image *im)
{
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

/* ---- I/O ---- */

/* Read [off, off+n) of the disk of geometry g into p: allocated runs from the backing file,
 * the rest as zeros.  0 or -errno.  Inline: it is the body of every read. */
static inline __attribute__((always_inline)) int read_blocks(struct sfs_image *im, const struct sfs_geom *g, char *p, uint64_t off, uint64_t n)
{
	uint64_t first, last, pos = off;
	int rc = 0;

	sfs_geom_block_span(g, off, n, &first, &last);
	for (uint64_t b = first; b <= last;) {
		bool set = sfs_map_test(im->map, b);
		uint64_t e = b + 1, rs, re;

		while (e <= last && sfs_map_test(im->map, e) == set)
			e++;
		sfs_geom_block_range(g, e - 1, &rs, &re);
		if (re > off + n)
			re = off + n;
		if (set) {
			rc = image_back_read(im, p + (pos - off), re - pos, pos);
			if (rc < 0)
				break;
		} else {
			memset(p + (pos - off), 0, re - pos);
		}
		pos = re;
		b = e;
	}
	return rc;
}

/* A read the failure state refused (fail.h): a bad or damaged sector is a media error, in the
 * stats' refused list with the requester; a disk without power is counted nowhere. */
static void media_error(struct sfs_image *im, const struct sfs_fail_io *fio)
{
	struct sfs_stats *st;

	if (fio->bad_kind && (st = image_stats_of(im)))
		sfs_stats_media_error(st, SFS_OP_READ, fio->off, fio->len);
}

/* A read; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, bool caller_holds)
{
	struct sfs_geom g = image_vis_geom(im);
	uint64_t t0 = im->stats.on || im->model ? sfs_now_ns() : 0;
	struct sfs_stats *st;
	struct sfs_fail *f;
	struct sfs_fail_io fio;
	struct image_hold r;
	size_t n;
	int rc = sfs_geom_check_read(&g, off, len, &n);

	if (rc < 0) {
		if ((st = image_stats_of(im)))
			sfs_stats_misaligned(st, SFS_OP_READ, off, len);
		return rc;
	}
	if (n == 0)
		return 0;
	rc = image_range_lock(im, &r, off, n, false, caller_holds);
	if (rc < 0)
		return rc;
	if ((f = image_fail(im))) {
		fio = (struct sfs_fail_io){ .op = SFS_FAIL_READ, .off = off, .len = n };
		if ((rc = sfs_fail_begin(f, &fio)) < 0) {
			image_range_unlock(im, &r);
			media_error(im, &fio);
			return rc;
		}
	}
	rc = read_blocks(im, &g, buf, off, n);
	if (f)
		sfs_fail_end(f, &fio, rc);
	image_range_unlock(im, &r);
	if (rc < 0)
		return rc;
	rc = model_done(im, SFS_LAT_READ, &(struct sfs_model_req){ .op = SFS_MODEL_READ, .off = off, .len = n }, t0);
	if (rc < 0)
		return rc;
	if ((st = image_stats_of(im)))
		sfs_stats_read(st, off, n, sfs_now_ns() - t0);
	return (ssize_t)n;
}

ssize_t sfs_image_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	sfs_stats_cell_enter(&im->stats);
	n = do_read(im, buf, len, off, false);
	sfs_stats_cell_leave(&im->stats);
	return n;
}

/* First write to block b: zero what [s, e) leaves of it, write, then mark it. */
static int first_write(struct sfs_image *im, const struct sfs_geom *g, uint64_t b,
		       const char *data, uint64_t s, uint64_t e, bool *was_first, uint64_t *zeroed)
{
	pthread_mutex_t *lk = image_stripe_of(im, b);
	uint64_t bs, be;
	int rc;

	pthread_mutex_lock(lk);
	if (b >= sfs_map_nblocks(im->map)) {     /* the capacity of a growing image went back */
		pthread_mutex_unlock(lk);
		return -ENOSPC;
	}
	if (sfs_map_test(im->map, b)) {          /* another writer got there first */
		pthread_mutex_unlock(lk);
		return image_back_write(im, data, e - s, s);
	}
	sfs_geom_block_range(g, b, &bs, &be);
	rc = image_zero_backing(im, bs, s - bs);
	if (rc == 0)
		rc = image_zero_backing(im, e, be - e);
	if (rc == 0)
		rc = image_back_write(im, data, e - s, s);
	if (rc == 0) {
		sfs_map_set(im->map, b);
		*was_first = true;
		*zeroed += (s - bs) + (be - e);
	}
	pthread_mutex_unlock(lk);
	return rc;
}

/* Write [off, off+len) of the disk of geometry g from p: runs of allocated blocks in one
 * transfer, each first write under its block's stripe lock (top of file).  *was_first says
 * whether a block was written for the first time, *zeroed what that zeroed around the data.
 * 0 or -errno.  Inline: it is the body of every write. */
static inline __attribute__((always_inline)) int write_blocks(struct sfs_image *im, const struct sfs_geom *g, const char *p, uint64_t off, uint64_t len,
			bool *was_first, uint64_t *zeroed)
{
	uint64_t first, last, run = off, end = off + len;
	int rc = 0;

	sfs_geom_block_span(g, off, len, &first, &last);
	for (uint64_t b = first; b <= last && rc == 0; b++) {
		uint64_t bs, be;

		if (sfs_map_test(im->map, b))
			continue;                /* part of the current run of allocated blocks */
		sfs_geom_block_range(g, b, &bs, &be);
		if (bs < off)
			bs = off;
		if (be > end)
			be = end;
		if (bs > run)
			rc = image_back_write(im, p + (run - off), bs - run, run);
		if (rc == 0)
			rc = first_write(im, g, b, p + (bs - off), bs, be, was_first, zeroed);
		run = be;
	}
	if (rc == 0 && run < end)
		rc = image_back_write(im, p + (run - off), end - run, run);
	return rc;
}

/* A write; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off, bool caller_holds)
{
	/* a growing image takes writes up to its capacity; another ends where it shows */
	bool growing = __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE);
	struct sfs_geom g = growing ? image_cur_geom(im) : image_vis_geom(im);
	uint64_t t0 = im->stats.on || im->model ? sfs_now_ns() : 0, end = off + len;
	uint64_t zeroed = 0;
	struct sfs_stats *st;
	struct sfs_fail *f;
	struct sfs_fail_io fio;
	struct image_hold r;
	bool was_first = false;
	int rc = sfs_geom_check_write(&g, off, len);

	if (rc < 0) {
		if ((st = image_stats_of(im))) {
			if (rc == -EINVAL)
				sfs_stats_misaligned(st, SFS_OP_WRITE, off, len);
			else if (!growing)   /* growing: past the capacity, the store makes room and writes again */
				sfs_stats_out_of_range(st, SFS_OP_WRITE, off, len);
		}
		return rc;
	}
	if (len == 0)
		return 0;
	rc = image_range_lock(im, &r, off, len, true, caller_holds);
	if (rc < 0)
		return rc;
	if ((f = image_fail(im))) {
		fio = (struct sfs_fail_io){ .op = SFS_FAIL_WRITE, .off = off, .len = len,
					    .flags = fua_next ? SFS_WC_FUA : 0 };
		if ((rc = sfs_fail_begin(f, &fio)) < 0) {
			image_range_unlock(im, &r);
			return rc;
		}
	}
	rc = write_blocks(im, &g, buf, off, len, &was_first, &zeroed);
	if (rc == 0 && growing)
		image_extend_visible(im, end);
	if (f)
		sfs_fail_end(f, &fio, rc);
	image_range_unlock(im, &r);
	if (rc < 0)
		return rc;
	rc = model_done(im, was_first ? SFS_LAT_WRITE_FIRST : SFS_LAT_WRITE_OVERWRITE,
			&(struct sfs_model_req){ .op = SFS_MODEL_WRITE, .off = off, .len = len, .zeroed = zeroed,
						 .offload = im->sc.zero_offload, .pss = g.pss }, t0);
	if (rc < 0)
		return rc;
	if ((st = image_stats_of(im)))
		sfs_stats_write(st, off, len, sfs_now_ns() - t0, was_first, sfs_geom_is_rmw(&g, off, len));
	return (ssize_t)len;
}

/* ---- the failure state's transfers (failures.c): no range, no stats, no model, no hooks ---- */

int image_raw_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	struct sfs_geom g = image_cur_geom(im);

	if (off > g.size || len > g.size - off)
		return -EIO;
	return len ? read_blocks(im, &g, buf, off, len) : 0;
}

int image_raw_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	struct sfs_geom g = image_cur_geom(im);
	uint64_t zeroed = 0;
	bool first = false;

	if (off > g.size || len > g.size - off)
		return -EIO;
	return len ? write_blocks(im, &g, buf, off, len, &first, &zeroed) : 0;
}

int image_raw_sync(struct sfs_image *im)
{
	int rc;

	__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
	rc = sfs_map_flush(im->map, im->fd);
	if (rc < 0)
		image_mark_dirty(im);
	return rc;
}

ssize_t sfs_image_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	sfs_stats_cell_enter(&im->stats);
	n = do_write(im, buf, len, off, false);
	sfs_stats_cell_leave(&im->stats);
	return n;
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
	struct sfs_geom g = image_vis_geom(im);
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

static ssize_t write_any(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	struct sfs_geom g = image_vis_geom(im);
	uint64_t s, e, head_end, tail_start;
	struct sfs_stats *st;
	struct image_hold r;
	ssize_t n = 0;
	char *tmp;
	int rc;

	if ((off % g.lss == 0 && len % g.lss == 0) || len == 0)
		return do_write(im, buf, len, off, false);
	/* what a page cache would do, except grow a disk: an extending write is whole sectors */
	if (off > g.size || len > g.size - off) {
		/* a growing image takes the whole sectors of one that starts on a sector, a short write:
		 * the kernel cuts a write from a buffer off a page boundary into pieces ending off a
		 * sector (1 MiB - 48 bytes, ...), and the writer writes the rest again */
		if (sfs_image_growing(im) && off % g.lss == 0 && len >= g.lss)
			return do_write(im, buf, len - len % g.lss, off, false);
		if ((st = image_stats_of(im))) {
			if (sfs_image_growing(im))
				sfs_stats_misaligned(st, SFS_OP_WRITE, off, len);
			else
				sfs_stats_out_of_range(st, SFS_OP_WRITE, off, len);
		}
		return sfs_image_growing(im) ? -EINVAL : -ENOSPC;
	}
	unit_span(&g, off, len, &s, &e);
	tmp = span_buf(e - s);
	if (!tmp)
		return -ENOMEM;
	/* the merge must not race another write of these sectors */
	sfs_image_need_ranges(im);
	rc = image_range_lock(im, &r, s, e - s, true, false);
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
	image_range_unlock(im, &r);
	span_free(tmp, e - s);
	return n < 0 ? n : (ssize_t)len;
}

ssize_t sfs_image_write_any(struct sfs_image *im, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	sfs_stats_cell_enter(&im->stats);
	n = write_any(im, buf, len, off);
	sfs_stats_cell_leave(&im->stats);
	return n;
}

/* A flush; with the failure state's hooks unless fua_sync (the host's sync of a FUA write,
 * which does not flush the drive's cache). */
static int do_flush(struct sfs_image *im, bool fua_sync)
{
	uint64_t t0 = im->stats.on || im->model ? sfs_now_ns() : 0;
	struct sfs_fail *f = fua_sync ? NULL : image_fail(im);
	struct sfs_fail_io fio = { .op = SFS_FAIL_FLUSH };
	struct sfs_stats *st;
	int rc;

	if (f && (rc = sfs_fail_begin(f, &fio)) < 0)
		return rc;
	sfs_stats_cell_enter(&im->stats);
	/* cleared first: a write during the flush marks it again for the next one */
	__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
	rc = sfs_map_flush(im->map, im->fd);
	if (rc < 0)
		image_mark_dirty(im);
	if (f)
		sfs_fail_end(f, &fio, rc);
	if (rc == 0)
		rc = model_done(im, SFS_LAT_FLUSH, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }, t0);
	if (rc == 0 && (st = image_stats_of(im)))
		sfs_stats_flush(st, sfs_now_ns() - t0);
	sfs_stats_cell_leave(&im->stats);
	return rc;
}

int sfs_image_flush(struct sfs_image *im)
{
	return do_flush(im, false);
}

int sfs_image_sync(struct sfs_image *im)
{
	return do_flush(im, true);
}
