/* SPDX-License-Identifier: MIT */
/*
 * zero.c - eager zeroing of an eagerzeroedthick image (image.h).
 *
 * Eager zeroing (eagerzeroedthick, at creation and after a grow) is an
 * allocation of every clear block, a chunk at a time, each block under
 * its stripe lock as a first write would take it: a write to a block not
 * zeroed yet waits for, or goes before, the zeroing of that block, and a
 * read of it reads zeros because its bit is clear.  It can therefore run
 * while the disk is in use: opened SFS_IMAGE_ZERO_BG, in a thread of the
 * image's own (sfs_image_zero_start), which the store starts outside its
 * lock.  A growing image (created through the mount, its creator writing)
 * is not zeroed while it grows: the room ahead of its writes is given
 * back at its creator's close, and a trim refuses to drop blocks marked
 * allocated, so the zeroing starts after that close (growing_end).  The map is flushed every EAGER_CHUNK, so a stop or a crash loses
 * at most that much progress; "zeroed" is recorded in the map header only
 * once every bit is set, checked under all the stripe locks, which a grow
 * holds while it commits new clear blocks.  The thread keeps the image
 * pinned while it runs.  Close stops it at its next step (ZERO_STEP) and
 * joins it.
 *
 * The tools run the same loop in the foreground with a progress callback
 * (sfs_image_fill), on images of any mode: inflating one, or making an
 * eagerzeroedthick one, is a fill, then sfs_image_make_eager, which
 * records the mode in the map header in place (map/map.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "internal.h"
#include "stripes.h"
#include "util/units.h"
#include "util/thread.h"

/* Eager zeroing (zero_blocks) flushes the map after this many bytes, so a stop or a crash
 * loses at most that much progress and the next open resumes where it stopped. */
#define EAGER_CHUNK (256ull << 20)
#define ZERO_STEP (8ull << 20)       /* eager zeroing looks for a stop this often */
#define ZERO_STACK (512u << 10)      /* its thread's stack: it calls little, and a store may
				      * have many images zeroing (or ended, not yet joined) */

/* Every block is allocated: make the bits durable, then record the image eagerzeroedthick and
 * zeroed in the map header (in place), under all the stripe locks so that a grow cannot commit
 * clear blocks in between.  0 when recorded, 1 when clear blocks are there again (a grow came
 * first), or -errno. */
static int mark_zeroed(struct sfs_image *im)
{
	int rc = sfs_map_flush(im->map, im->fd);

	if (rc < 0)
		return rc;
	image_lock_stripes(im);
	if (sfs_map_next_clear(im->map, 0) < sfs_map_nblocks(im->map))
		rc = 1;
	else
		rc = sfs_map_set_prov(im->map, SFS_PROV_EAGERZEROEDTHICK,
				      sfs_map_info(im->map)->flags | SFS_MAP_F_ZEROED);
	if (rc == 0)
		im->sc.prov = SFS_PROV_EAGERZEROEDTHICK;
	image_unlock_stripes(im);
	return rc;
}

/* Flush the map; then -ECANCELED, or the flush's -errno. */
static int stop_zeroing(struct sfs_image *im)
{
	int rc = sfs_map_flush(im->map, im->fd);

	return rc < 0 ? rc : -ECANCELED;
}

/* The blocks the zeroing of im looks at (of nb): all, but for a growing image (created through
 * the mount, its creator writing) those its writes reached.  The room ahead of them is written
 * by the copy or given back at the creator's close (a trim, which refuses to drop blocks marked
 * allocated), so it is not zeroed now: the close starts the zeroing of what is left. */
static uint64_t growing_end(struct sfs_image *im, uint64_t nb)
{
	uint64_t bs = image_cur_geom(im).block_size, shown;

	if (!__atomic_load_n(&im->growing, __ATOMIC_ACQUIRE))
		return nb;
	shown = (__atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE) + bs - 1) / bs;
	return shown < nb ? shown : nb;
}

/* The one zeroing loop: zero and mark every clear block, ZERO_STEP at a time, the map flushed
 * every EAGER_CHUNK, fn (may be NULL) told after each step the bytes done of those clear at the
 * start.  Then an eagerzeroedthick image is recorded zeroed (once more if a grow added clear
 * blocks), another one flushed.  -ECANCELED (map flushed) once zero_stop is set (stoppable) or
 * fn returns non-zero; 1 when it stopped at the room ahead of a growing image (growing_end);
 * 0, or -errno with the progress made kept in memory. */
static int zero_blocks(struct sfs_image *im, bool stoppable, sfs_progress_fn fn, void *ctx)
{
	struct sfs_geom g0 = image_cur_geom(im);
	uint64_t b = 0, since_flush = 0, done = 0, total;
	int rc;

	if (sfs_map_info(im->map)->flags & SFS_MAP_F_ZEROED)
		return 0;
	total = sfs_blocks_bytes(&g0, 0, sfs_map_nblocks(im->map)) - sfs_allocated_bytes(im->map, &g0);
	if (fn && fn(ctx, 0, total))
		return -ECANCELED;
	for (;;) {
		struct sfs_geom g = image_cur_geom(im);
		uint64_t nb = sfs_map_nblocks(im->map), per = ZERO_STEP / g.block_size, e, s0, e0, len;

		b = sfs_map_next_clear(im->map, b);
		/* the room ahead of a growing image's writes is its creator's to write or give back */
		if (b >= growing_end(im, nb) && b < nb)
			return sfs_map_flush(im->map, im->fd) < 0 ? -EIO : 1;
		if (b >= nb) {
			if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK)
				return sfs_image_flush(im);
			rc = mark_zeroed(im);
			if (rc <= 0)
				return rc;
			b = 0;                       /* a grow added blocks: once more */
			continue;
		}
		if (stoppable && __atomic_load_n(&im->zero_stop, __ATOMIC_ACQUIRE))
			return stop_zeroing(im);
		e = sfs_map_next_set(im->map, b);
		if (per == 0)
			per = 1;
		if (e - b > per)
			e = b + per;
		sfs_geom_block_range(&g, b, &s0, &e0);
		len = sfs_blocks_bytes(&g, b, e);
		rc = image_allocate_range(im, s0, len);
		if (rc < 0)
			return rc;
		done += len;
		since_flush += len;
		if (since_flush >= EAGER_CHUNK) {
			rc = sfs_map_flush(im->map, im->fd);
			if (rc < 0)
				return rc;
			since_flush = 0;
		}
		if (fn && fn(ctx, done < total ? done : total, total))
			return stop_zeroing(im);
		b = e;
	}
}

int sfs_image_finish_zeroing(struct sfs_image *im)
{
	int rc;

	if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK)
		return 0;
	rc = zero_blocks(im, false, NULL, NULL);
	return rc > 0 ? 0 : rc;
}

int sfs_image_fill(struct sfs_image *im, sfs_progress_fn fn, void *ctx)
{
	int rc = sfs_image_pin(im);

	if (rc == 0) {
		rc = zero_blocks(im, false, fn, ctx);
		rc = rc > 0 ? 0 : rc;
		sfs_image_unpin(im);
	}
	return rc;
}

int sfs_image_make_eager(struct sfs_image *im)
{
	int rc = sfs_image_pin(im);

	if (rc == 0) {
		rc = mark_zeroed(im);
		sfs_image_unpin(im);
	}
	return rc == 1 ? -EAGAIN : rc;
}

/* Bytes of the disk zeroed (or written) so far, count blocks allocated, and the disk size. */
static void zero_progress(const struct sfs_image *im, uint64_t count, uint64_t *done, uint64_t *total)
{
	struct sfs_geom g = image_cur_geom(im);
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
		rc = zero_blocks(im, true, NULL, NULL);
		pthread_mutex_lock(&im->zero_lk);
		if (rc >= 0 && im->zero_again && !__atomic_load_n(&im->zero_stop, __ATOMIC_ACQUIRE)) {
			im->zero_again = false;
			pthread_mutex_unlock(&im->zero_lk);
			continue;
		}
		__atomic_store_n(&im->zero_err, rc == -ECANCELED || rc == 1 ? 0 : rc, __ATOMIC_RELAXED);
		__atomic_store_n(&im->zero_active, false, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&im->zero_lk);
		break;
	}
	zero_progress(im, sfs_map_count(im->map), &done, &total);
	sfs_format_human(rc == 0 && im->zero_from < done ? done - im->zero_from : done, a, sizeof(a));
	sfs_format_human(total, b, sizeof(b));
	if (rc == 1)
		;                        /* a growing image: the rest when its creator closes it */
	else if (rc == 0)
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
	char a[32];
	int rc = 0;

	if (im->sc.prov != SFS_PROV_EAGERZEROEDTHICK || (sfs_map_info(im->map)->flags & SFS_MAP_F_ZEROED))
		return 0;
	if (__atomic_load_n(&im->growing, __ATOMIC_ACQUIRE))
		return 0;                    /* its creator's close starts it (growing_end) */
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
	rc = -pthread_attr_init(&attr);
	if (rc == 0) {
		pthread_attr_setstacksize(&attr, ZERO_STACK);
		rc = sfs_thread_start(&im->zero_thr, &attr, zero_thread, im);   /* signals: the daemon's */
		pthread_attr_destroy(&attr);
	}
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
void image_zero_join(struct sfs_image *im)
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

	image_map_state(im, &mi, &count, &nblocks);
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
