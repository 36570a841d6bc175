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
 * Backing I/O (O_DIRECT or buffered, bounce buffers, zeroing) is imgback.c.
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
 * Eager zeroing is imgzero.c; grow, trim and the capacity are imgsize.c.
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
#include "model.h"
#include "units.h"

#define NSTRIPES SFS_IMG_NSTRIPES
#define BOUNCE_LEN SFS_IMG_BOUNCE_LEN

/* The image's stats, made at its first I/O; NULL without stats (or out of memory). */
struct sfs_stats *sfs_img_stats_of(struct sfs_image *im)
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

/* A request of class c that arrived at t0 is done on the backing store: hold it until the device
 * profile's drive would have completed it (no profile: at once), and count the time added. */
static void model_done(struct sfs_image *im, enum sfs_lat_class c, const struct sfs_model_req *rq, uint64_t t0)
{
	struct sfs_stats *st;
	uint64_t ns;

	if (!im->model)
		return;
	ns = sfs_model_complete(im->model, rq, t0);
	if (ns && (st = sfs_img_stats_of(im)))
		sfs_stats_model_delay(st, c, ns);
}

/* The backing file was written: the next flush (or the eviction) must sync it. */
void sfs_img_mark_dirty(struct sfs_image *im)
{
	if (!__atomic_load_n(&im->dirty, __ATOMIC_RELAXED))
		__atomic_store_n(&im->dirty, 1, __ATOMIC_RELEASE);
}

/* A write of a growing image reached end: the disk shows at least that much. */
void sfs_img_extend_visible(struct sfs_image *im, uint64_t end)
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

bool sfs_img_count_unranged(struct sfs_image *im)
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

void sfs_img_uncount_unranged(struct sfs_image *im)
{
	__atomic_sub_fetch(&im->unranged, 1, __ATOMIC_SEQ_CST);
}

/* Take [off, off+len) for a request when the image needs it (top of file). */
static int range_lock(struct sfs_image *im, struct hold *h, uint64_t off, uint64_t len, bool excl,
		      bool caller_holds)
{
	int rc;

	h->mode = HOLD_NONE;
	if (caller_holds)
		return 0;
	if (sfs_img_count_unranged(im)) {
		h->mode = HOLD_COUNTED;
		return 0;
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
		sfs_img_uncount_unranged(im);
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

/* A read; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_read(struct sfs_image *im, void *buf, size_t len, uint64_t off, bool caller_holds)
{
	struct sfs_geom g = sfs_img_vis_geom(im);
	uint64_t t0 = im->want_stats || im->model ? sfs_now_ns() : 0, first, last, pos;
	struct sfs_stats *st;
	struct hold r;
	char *p = buf;
	size_t n;
	int rc = sfs_geom_check_read(&g, off, len, &n);

	if (rc < 0) {
		if ((st = sfs_img_stats_of(im)))
			sfs_stats_misaligned(st, SFS_OP_READ, off, len);
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
			rc = sfs_img_back_read(im, p + (pos - off), re - pos, pos);
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
	model_done(im, SFS_LAT_READ, &(struct sfs_model_req){ .op = SFS_MODEL_READ, .off = off, .len = n }, t0);
	if ((st = sfs_img_stats_of(im)))
		sfs_stats_read(st, off, n, sfs_now_ns() - t0);
	return (ssize_t)n;
}

ssize_t sfs_image_read(struct sfs_image *im, void *buf, size_t len, uint64_t off)
{
	return do_read(im, buf, len, off, false);
}

/* First write to block b: zero what [s, e) leaves of it, write, then mark it. */
static int first_write(struct sfs_image *im, const struct sfs_geom *g, uint64_t b,
		       const char *data, uint64_t s, uint64_t e, bool *was_first, uint64_t *zeroed)
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
		return sfs_img_back_write(im, data, e - s, s);
	}
	sfs_geom_block_range(g, b, &bs, &be);
	rc = sfs_img_zero_backing(im, bs, s - bs);
	if (rc == 0)
		rc = sfs_img_zero_backing(im, e, be - e);
	if (rc == 0)
		rc = sfs_img_back_write(im, data, e - s, s);
	if (rc == 0) {
		sfs_map_set(im->map, b);
		*was_first = true;
		*zeroed += (s - bs) + (be - e);
	}
	pthread_mutex_unlock(lk);
	return rc;
}

/* A write; with caller_holds the caller has the range (a read-modify-write). */
static ssize_t do_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off, bool caller_holds)
{
	/* a growing image takes writes up to its capacity; another ends where it shows */
	bool growing = __atomic_load_n(&im->growing, __ATOMIC_ACQUIRE);
	struct sfs_geom g = growing ? sfs_img_cur_geom(im) : sfs_img_vis_geom(im);
	uint64_t t0 = im->want_stats || im->model ? sfs_now_ns() : 0, first, last, run = off, end = off + len;
	uint64_t zeroed = 0;
	struct sfs_stats *st;
	struct hold r;
	const char *p = buf;
	bool was_first = false;
	int rc = sfs_geom_check_write(&g, off, len);

	if (rc < 0) {
		if ((st = sfs_img_stats_of(im))) {
			if (rc == -EINVAL)
				sfs_stats_misaligned(st, SFS_OP_WRITE, off, len);
			else if (!growing)   /* growing: past the capacity, the store makes room and writes again */
				sfs_stats_out_of_range(st, SFS_OP_WRITE, off, len);
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
			rc = sfs_img_back_write(im, p + (run - off), bs - run, run);
		if (rc == 0)
			rc = first_write(im, &g, b, p + (bs - off), bs, be, &was_first, &zeroed);
		run = be;
	}
	if (rc == 0 && run < end)
		rc = sfs_img_back_write(im, p + (run - off), end - run, run);
	if (rc == 0 && growing)
		sfs_img_extend_visible(im, end);
	range_unlock(im, &r);
	if (rc < 0)
		return rc;
	model_done(im, was_first ? SFS_LAT_WRITE_FIRST : SFS_LAT_WRITE_OVERWRITE,
		   &(struct sfs_model_req){ .op = SFS_MODEL_WRITE, .off = off, .len = len, .zeroed = zeroed,
					    .offload = im->sc.zero_offload, .pss = g.pss }, t0);
	if ((st = sfs_img_stats_of(im)))
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
	struct sfs_geom g = sfs_img_vis_geom(im);
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
	struct sfs_geom g = sfs_img_vis_geom(im);
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
		if ((st = sfs_img_stats_of(im))) {
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
	uint64_t t0 = im->want_stats || im->model ? sfs_now_ns() : 0;
	struct sfs_stats *st;
	int rc;

	/* cleared first: a write during the flush marks it again for the next one */
	__atomic_store_n(&im->dirty, 0, __ATOMIC_RELEASE);
	rc = sfs_map_flush(im->map, im->fd);
	if (rc < 0)
		sfs_img_mark_dirty(im);
	if (rc == 0)
		model_done(im, SFS_LAT_FLUSH, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }, t0);
	if (rc == 0 && (st = sfs_img_stats_of(im)))
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
				rc = sfs_img_zero_backing(im, bs, be - bs);
				if (rc == 0)
					sfs_map_set(im->map, b);
			}
		} else if (!sfs_map_test(im->map, b)) {
			/* never written: reads as zeros already */
		} else if (op == OP_DISCARD && im->sc.prov == SFS_PROV_THIN && s == bs && e == be) {
			sfs_map_clear(im->map, b);
			sfs_img_mark_dirty(im);
			if (fallocate(im->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)bs, (off_t)(be - bs)) < 0 && errno != EOPNOTSUPP)
				rc = -errno;
		} else {
			rc = sfs_img_zero_backing(im, s, e - s);
		}
		pthread_mutex_unlock(lk);
	}
	range_unlock(im, &r);
	return rc;
}

/* Discard and write-zeroes: the I/O rules and their counters, then the blocks. */
int sfs_img_allocate_range(struct sfs_image *im, uint64_t off, uint64_t len)
{
	return range_op(im, off, len, OP_ALLOCATE);
}

static int checked_range_op(struct sfs_image *im, uint64_t off, uint64_t len, enum range_op op)
{
	struct sfs_geom g = sfs_img_vis_geom(im);
	struct sfs_stats *st;
	int rc = sfs_geom_check_write(&g, off, len);

	if ((st = sfs_img_stats_of(im))) {
		if (rc == -EINVAL)
			sfs_stats_misaligned(st, op == OP_DISCARD ? SFS_OP_DISCARD : SFS_OP_WRITE_ZEROES, off, len);
		else if (rc == -ENOSPC)
			sfs_stats_out_of_range(st, op == OP_DISCARD ? SFS_OP_DISCARD : SFS_OP_WRITE_ZEROES,
					       off, len);
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
	struct sfs_geom g = sfs_img_vis_geom(im);

	if (off > g.size || len > g.size - off)
		return -ENOSPC;
	return range_op(im, off, len, OP_ALLOCATE);
}
