/* SPDX-License-Identifier: MIT */
/*
 * test_zeroing.c - unit tests of eager zeroing in the background
 * (core/image/io.c opened SFS_IMAGE_ZERO_BG, and core/store/store.c with
 * zero_background).
 *
 * Zeroing while writes and reads land: every byte reads as its written
 * data or zero, never the junk planted in the backing file, and in the end
 * the map is full, flagged zeroed, the backing file holds the data and
 * zeros.  Close during zeroing returns before the zeroing could have
 * finished and keeps the progress in the map; the reopened image resumes
 * from there (zeroing only the rest) and finishes.  A cancelled zeroing
 * stops and does not start again.  A grow while zeroing, and one after it,
 * are zeroed too.  Without SFS_IMAGE_ZERO_BG open zeroes before it
 * returns.  Through the store: a lookup returns while the image zeroes,
 * the tally counts it, unlink cancels it (the holder keeps a working disk)
 * and closing the store stops it.
 */
#include <time.h>

#include "fixtures/image_fixture.h"
#include "store/store.h"

#define ZBS (64 * KiB)
#define ZSIZE (512 * MiB)
#define ZNB (ZSIZE / ZBS)

static struct sfs_image *open_bg(const char *name, const struct sfs_sidecar *sc)
{
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_image_open(ts.fd, ts.statefd, name, sc, SFS_IMAGE_STATS | SFS_IMAGE_ZERO_BG, &lg, &im,
				    err, sizeof(err)), 0, "open %s: %s", name, err);
	cr_assert_not_null(im);
	return im;
}

static struct sfs_sidecar ezt(uint64_t size)
{
	return sidecar(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, size, ZBS, false);
}

static enum sfs_zeroing zstate(struct sfs_image *im, uint64_t *done)
{
	uint64_t d, total;
	int err;
	enum sfs_zeroing z = sfs_image_zeroing(im, &d, &total, &err);

	if (done)
		*done = d;
	return z;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait (up to 60 s) until im's zeroing is no longer running; its state then. */
static enum sfs_zeroing wait_not_running(struct sfs_image *im)
{
	const struct timespec tick = { 0, 2 * 1000 * 1000 };
	double t0 = now_s();
	enum sfs_zeroing z;

	while ((z = zstate(im, NULL)) == SFS_ZEROING_RUNNING && now_s() - t0 < 60)
		nanosleep(&tick, NULL);
	return z;
}

/* Wait (up to 60 s) until at least bytes are zeroed; false if the zeroing ended first. */
static bool wait_progress(struct sfs_image *im, uint64_t bytes)
{
	const struct timespec tick = { 0, 200 * 1000 };
	double t0 = now_s();
	uint64_t done;

	while (zstate(im, &done) == SFS_ZEROING_RUNNING && now_s() - t0 < 60) {
		if (done >= bytes)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

static bool zeroed_flag(struct sfs_image *im)
{
	return (sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED) != 0;
}

/* ---- zeroing while the disk is in use ---- */

struct user {
	struct sfs_image *im;
	unsigned id;                 /* writers 0..NW-1 write blocks b with b % NW == id */
	uint64_t writes_while_zeroing;
	int rc;
};

#define NW 3

/* A block's data: written by one writer once, whole, with seed b + 1. */
static unsigned char block_byte(uint64_t pos)
{
	return pat(pos, (unsigned)(pos / ZBS) + 1);
}

/* Is block b written by the writers (every 7th block, spread over the disk)? */
static bool written(uint64_t b)
{
	return b % 7 == 3;
}

static void *writer(void *arg)
{
	struct user *u = arg;
	unsigned char *buf = malloc(ZBS);

	if (!buf) {
		u->rc = -ENOMEM;
		return NULL;
	}
	/* from the far end: mostly ahead of the zeroing */
	for (uint64_t b = ZNB; b-- > 0;) {
		if (!written(b) || b % NW != u->id)
			continue;
		fill(buf, ZBS, b * ZBS, (unsigned)b + 1);
		if (sfs_image_write(u->im, buf, ZBS, b * ZBS) != (ssize_t)ZBS) {
			u->rc = -EIO;
			break;
		}
		if (zstate(u->im, NULL) == SFS_ZEROING_RUNNING)
			u->writes_while_zeroing++;
	}
	free(buf);
	return NULL;
}

/* The reader reads all over the disk, 4 blocks at a time: every byte zero or its block's data. */
static uint64_t anywhere(struct checker *c)
{
	c->state = c->state * 6364136223846793005ull + 1442695040888963407ull;
	return (c->state >> 20) % (ZNB - 4) * ZBS;
}

Test(image, background_zeroing_while_writes_and_reads_land)
{
	struct sfs_sidecar sc = ezt(ZSIZE);
	struct sfs_image *im = open_bg(NAME, &sc);
	struct user w[NW];
	struct checker rd;
	pthread_t wt[NW], rt;
	uint64_t during = 0;
	int stop = 0;
	unsigned char *model;

	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_STOPPED, "opened ZERO_BG, nothing zeroes until started");
	cr_expect_eq(count_of(im), 0);
	/* what a crashed earlier life could have left in blocks never marked */
	plant_junk(sfs_image_fd(im), 0, ZSIZE);
	cr_assert_eq(sfs_image_zero_start(im), 0);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_RUNNING);
	rd = (struct checker){ .im = im, .stop = &stop, .len = 4 * ZBS, .next = anywhere, .want = block_byte,
			       .state = 12345 };
	cr_assert_eq(pthread_create(&rt, NULL, checker_run, &rd), 0);
	for (unsigned i = 0; i < NW; i++) {
		w[i] = (struct user){ im, i, 0, 0 };
		cr_assert_eq(pthread_create(&wt[i], NULL, writer, &w[i]), 0);
	}
	for (unsigned i = 0; i < NW; i++) {
		pthread_join(wt[i], NULL);
		cr_expect_eq(w[i].rc, 0, "writer %u: a write failed", i);
		during += w[i].writes_while_zeroing;
	}
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_DONE);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(rt, NULL);
	cr_expect_gt(during, 0, "no write landed while the image was zeroing");
	expect_checked(&rd, "a read during the zeroing");
	cr_expect_eq(count_of(im), ZNB, "the map ends full");
	cr_expect(zeroed_flag(im), "the image is recorded zeroed");
	model = new_model(ZSIZE);
	for (uint64_t b = 0; b < ZNB; b++)
		if (written(b))
			fill(model + b * ZBS, ZBS, b * ZBS, (unsigned)b + 1);
	expect_model(im, model, 0, ZSIZE, "after background zeroing with writes");
	expect_backing(im, model, 0, ZSIZE, "after background zeroing with writes (no junk left)");
	close_model(im, model);
	cr_expect_geq(logcap_lines(&cap, "eager zeroing in the background", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "eager zeroing done", NULL, NULL), 1, "%s", cap.buf);
}

/* ---- close during zeroing, reopen resumes ---- */

Test(image, close_during_zeroing_keeps_progress_and_reopen_resumes)
{
	struct sfs_sidecar sc = ezt(ZSIZE);
	struct sfs_image *im = open_bg(NAME, &sc);
	struct sfs_map *m;
	struct sfs_stats_snap s;
	uint64_t kept;
	double t0, dt_close, dt_rest;

	cr_assert_eq(sfs_image_zero_start(im), 0);
	cr_assert(wait_progress(im, ZSIZE / 8), "the zeroing ended before an eighth of the disk");
	t0 = now_s();
	cr_expect_eq(sfs_image_close(im), 0);
	dt_close = now_s() - t0;
	cr_expect_eq(logcap_lines(&cap, "eager zeroing stopped at", "resumes", NULL), 1, "%s", cap.buf);

	m = tmp_map_open_ro(ts.statefd, NAME ".map");
	kept = sfs_map_count(m);
	cr_expect(!(sfs_map_info(m)->flags & SFS_MAP_F_ZEROED), "not recorded zeroed after a stop");
	cr_expect_geq(kept, ZNB / 8, "the map keeps the progress made before the close");
	cr_expect_lt(kept, ZNB, "close waited for the zeroing to finish");
	sfs_map_close(m);

	im = open_bg(NAME, &sc);
	cr_expect_eq(count_of(im), kept);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_STOPPED);
	t0 = now_s();
	cr_assert_eq(sfs_image_zero_start(im), 0);
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_DONE);
	dt_rest = now_s() - t0;
	cr_expect_eq(count_of(im), ZNB);
	cr_expect(zeroed_flag(im));
	s = snap_of(im);
	cr_expect_eq(s.zeroed_bytes, (ZNB - kept) * ZBS, "the reopened image zeroed only what was left");
	expect_zero(im, 0, ZSIZE, "resumed zeroing");
	cr_expect_eq(sfs_image_close(im), 0);
	cr_log_info("close during zeroing took %.3f s; the rest of the zeroing %.3f s", dt_close, dt_rest);
}

Test(image, cancelled_zeroing_stops_for_good)
{
	struct sfs_sidecar sc = ezt(ZSIZE);
	struct sfs_image *im = open_bg(NAME, &sc);
	uint64_t done;

	cr_assert_eq(sfs_image_zero_start(im), 0);
	cr_assert(wait_progress(im, 4 * MiB), "the zeroing ended before 4 MiB");
	sfs_image_zero_cancel(im);
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_STOPPED);
	done = count_of(im);
	cr_expect_lt(done, ZNB, "cancel did not stop the zeroing");
	cr_expect_eq(sfs_image_zero_start(im), 0);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_STOPPED, "a cancelled zeroing started again");
	/* the disk still works, as zeroedthick: a write to a block not zeroed zeroes it first */
	put(im, NULL, ZSIZE - 4096, 4096, 9);
	cr_expect(bit(im, ZNB - 1));
	expect_zero(im, ZSIZE - ZBS, ZBS - 4096, "the rest of a block first written after the cancel");
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- grows ---- */

Test(image, grow_while_zeroing_and_after)
{
	struct sfs_sidecar sc = ezt(ZSIZE / 4);
	struct sfs_image *im = open_bg(NAME, &sc);

	cr_assert_eq(sfs_image_zero_start(im), 0);
	cr_assert_eq(sfs_image_grow(im, ZSIZE / 2), 0);   /* while it runs, or just after */
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_DONE);
	cr_expect_eq(sfs_map_nblocks(sfs_image_map(im)), ZNB / 2);
	cr_expect_eq(count_of(im), ZNB / 2, "the blocks the grow added are zeroed too");
	cr_expect(zeroed_flag(im));

	/* a grow once it is done: the new blocks zero in the background, grow returns first */
	plant_junk(sfs_image_fd(im), ZSIZE / 2, ZSIZE / 2);
	cr_assert_eq(sfs_image_grow(im, ZSIZE), 0);
	cr_expect(!zeroed_flag(im) || count_of(im) == ZNB);
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_DONE);
	cr_expect_eq(count_of(im), ZNB);
	cr_expect(zeroed_flag(im));
	expect_zero(im, 0, ZSIZE, "after two grows");
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, without_zero_bg_open_zeroes_before_it_returns)
{
	struct sfs_sidecar sc = ezt(ZSIZE / 8);
	struct sfs_image *im = open_as(NAME, &sc, true);

	cr_expect_eq(count_of(im), ZNB / 8);
	cr_expect(zeroed_flag(im));
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_DONE);
	cr_expect_eq(sfs_image_zero_start(im), 0, "nothing left to zero");
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, other_modes_have_no_zeroing)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 4096, 4096, ZSIZE / 8, ZBS, false);
	struct sfs_image *im = open_bg(NAME, &sc);

	cr_expect_eq(sfs_image_zero_start(im), 0);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_NONE);
	cr_expect_eq(count_of(im), 0);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- through the store ---- */

static struct sfs_store *open_store(bool background)
{
	struct sfs_store_opts o = { .stats = true, .log = lg, .holder = "test", .zero_background = background };
	struct sfs_store *s = NULL;
	char err[512] = "";

	sfs_sidecar_defaults(&o.defaults);
	cr_assert_eq(sfs_store_open(ts.path, &o, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

#define EZT_JSON "{\"size\": \"512M\", \"sector\": \"4kn\", \"block_size\": \"64K\", " \
		 "\"provisioning\": \"eagerzeroedthick\", \"zero_offload\": false}"

Test(image, store_serves_while_zeroing_and_close_stops_it)
{
	struct sfs_store_tally t;
	struct sfs_store *s;
	struct sfs_image *im;
	struct sfs_map *m;
	double t0;

	tmp_write_sidecar(ts.fd, "ez", EZT_JSON);
	t0 = now_s();
	s = open_store(true);
	cr_assert_eq(sfs_store_get(s, "ez", &im), 0);
	cr_expect_lt(now_s() - t0, 10);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_RUNNING, "the store opened before the zeroing ended");
	sfs_store_tally(s, &t);
	cr_expect_eq(t.served, 1);
	cr_expect_eq(t.zeroing, 1);
	cr_assert(wait_progress(im, 4 * MiB));
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
	m = tmp_map_open_ro(ts.statefd, "ez.map");
	cr_expect_lt(sfs_map_count(m), ZNB, "closing the store waited for the zeroing");
	cr_expect(!(sfs_map_info(m)->flags & SFS_MAP_F_ZEROED));
	sfs_map_close(m);

	/* the next open resumes it; without zero_background the lookup finishes it */
	s = open_store(false);
	cr_assert_eq(sfs_store_get(s, "ez", &im), 0);
	cr_expect_eq(zstate(im, NULL), SFS_ZEROING_DONE);
	cr_expect_eq(count_of(im), ZNB);
	sfs_store_tally(s, &t);
	cr_expect_eq(t.zeroing, 0);
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(image, store_unlink_during_zeroing_cancels_it)
{
	struct sfs_store *s;
	struct sfs_image *im;

	tmp_write_sidecar(ts.fd, "ez", EZT_JSON);
	s = open_store(true);
	cr_assert_eq(sfs_store_get(s, "ez", &im), 0);
	cr_assert(wait_progress(im, 4 * MiB));
	cr_expect_eq(sfs_store_unlink(s, "ez"), 0);
	cr_expect_eq(wait_not_running(im), SFS_ZEROING_STOPPED, "the zeroing of an unlinked image goes on");
	cr_expect_lt(count_of(im), ZNB);
	/* the holder still has a disk that reads zeros and takes writes */
	put(im, NULL, 0, 4096, 3);
	expect_zero(im, ZSIZE - ZBS, ZBS, "an unlinked image still held");
	sfs_store_put(s, im);
	cr_expect(!tmp_exists(ts.fd, "ez"));
	cr_expect_eq(sfs_store_close(s), 0);
}
