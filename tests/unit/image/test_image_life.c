/* SPDX-License-Identifier: MIT */
/*
 * test_image_life.c - unit tests of core/image/io.c, part two: an image's life.
 *
 * Grow, close and reopen, the map made durable by flush, the recorded
 * geometry winning over an edited sidecar, refused backing files
 * (symlink, hard link, FIFO, directory), import of a raw file with holes
 * (thin keeps them unallocated, thick reserves them), resumed eager
 * zeroing, eight threads racing on first writes to one block, and exact
 * stats counters after known I/O.  Each test gets its own store directory.
 */
#include "fixtures/image_fixture.h"

/* ---- grow ---- */

FMT_TEST(grow, all_provs, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	uint32_t l = f->lss;
	uint64_t nsize = SIZE + 2 * BS + 4096;     /* not a multiple of the block */
	uint64_t nnb = NB + 2;                      /* 18 whole blocks and 36K */
	unsigned char *model = new_model(nsize);
	struct sfs_sidecar sc;

	put(im, model, 0, l, 1);
	put(im, model, SIZE - l, l, 2);            /* the partial last block is allocated */
	cr_assert_eq(sfs_image_flush(im), 0);
	/* junk past the old end, as a crash during an earlier grow could leave */
	plant_junk(sfs_image_fd(im), SIZE, BS);

	cr_expect_eq(sfs_image_grow(im, SIZE - l), -EINVAL, "%s: shrink", d);
	cr_expect_eq(sfs_image_grow(im, nsize + 100), -EINVAL, "%s: not a sector multiple", d);
	cr_expect_eq(sfs_image_grow(im, SIZE), 0, "%s: same size", d);
	cr_expect_eq(sfs_image_geom(im).size, SIZE, "%s", d);

	cr_assert_eq(sfs_image_grow(im, nsize), 0, "%s", d);
	cr_expect_eq(sfs_image_geom(im).size, nsize, "%s", d);
	cr_expect_eq(sfs_image_sidecar(im).size, nsize, "%s", d);
	cr_expect_eq(sfs_map_nblocks(sfs_image_map(im)), nnb, "%s", d);
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)nsize, "%s", d);
	cr_expect(bit(im, 0) && bit(im, NB - 1), "%s: old bits kept", d);
	if (f->prov == SFS_PROV_EAGERZEROEDTHICK)
		cr_expect_eq(count_of(im), nnb, "%s: new blocks eagerly zeroed", d);
	else
		cr_expect_eq(sfs_map_next_set(sfs_image_map(im), NB), nnb, "%s: new blocks clear", d);
	if (f->prov != SFS_PROV_THIN)
		cr_expect_geq((uint64_t)backing_blocks(NAME) * 512, nsize, "%s: new space reserved", d);
	expect_model(im, model, 0, nsize, d);      /* old data, new area zero (old tail too) */

	put(im, model, nsize - l, l, 3);
	put(im, model, SIZE, BS, 4);
	expect_model(im, model, 0, nsize, d);
	cr_expect_eq(sfs_image_close(im), 0);

	/* the sidecar still says the old size: the image never shrinks */
	sc = sc_of(f);
	im = open_as(NAME, &sc, true);
	cr_expect_eq(sfs_image_geom(im).size, nsize, "%s", d);
	cr_expect_geq(logcap_lines(&cap, "never shrink", NULL, NULL), 1, "%s: %s", d, cap.buf);
	expect_model(im, model, 0, nsize, d);
	close_model(im, model);
}

/* ---- reopen ---- */

FMT_TEST(reopen_keeps_data_and_map, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint64_t cnt;

	put(im, model, BS + f->lss, 2 * BS, 1);
	put(im, model, 9 * BS, f->lss, 2);
	cnt = count_of(im);
	im = reopen_expect(im, f, model, cnt, d);
	cr_expect(bit(im, 1) && bit(im, 2) && bit(im, 3) && bit(im, 9), "%s", d);
	cr_expect_eq(logcap_level_lines(&cap, SFS_LOG_WARN), 0, "%s: no warning on a plain reopen: %s", d, cap.buf);
	close_model(im, model);
}

Test(image, flush_makes_the_map_durable)
{
	/* a second, independent open of the map file shows what a crash would leave */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_map *ondisk = NULL;
	unsigned char buf[4096];
	char err[256] = "";

	memset(buf, 1, sizeof(buf));
	cr_assert_eq(sfs_image_write(im, buf, sizeof(buf), 3 * BS), (ssize_t)sizeof(buf));
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", SFS_MAP_RDONLY, NULL, &ondisk, err, sizeof(err)), 0, "%s", err);
	cr_expect(!sfs_map_test(ondisk, 3), "not durable before the flush");
	sfs_map_close(ondisk);
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", SFS_MAP_RDONLY, NULL, &ondisk, err, sizeof(err)), 0, "%s", err);
	cr_expect(sfs_map_test(ondisk, 3), "durable after the flush");
	sfs_map_close(ondisk);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, other_sector_size_is_refused)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true), other;
	struct sfs_image *im = open_as(NAME, &sc, true), *im2 = NULL;
	unsigned char *model = new_model(SIZE);
	char err[512] = "";

	put(im, model, 0, 4096, 1);
	cr_expect_eq(sfs_image_close(im), 0);

	other = sidecar(SFS_PROV_THIN, 4096, 4096, SIZE, BS, true);
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &other, true, &lg, &im2, err, sizeof(err)), -EINVAL);
	cr_expect_null(im2);
	cr_expect(strstr(err, "'sector'"), "'%s' should name the key 'sector'", err);
	cr_expect(strstr(err, NAME ".json"), "'%s' should name the sidecar", err);
	cr_expect(strstr(err, "4096"), "'%s' should give the sizes", err);

	other = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	err[0] = '\0';
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &other, true, &lg, &im2, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'sector'"), "'%s' should name the key 'sector'", err);

	/* the image itself is untouched */
	im = open_as(NAME, &sc, true);
	expect_model(im, model, 0, SIZE, "thin/512e");
	close_model(im, model);
}

Test(image, recorded_provisioning_and_block_size_win)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true), other;
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_sidecar got;

	cr_expect_eq(sfs_image_close(im), 0);
	other = sidecar(SFS_PROV_ZEROEDTHICK, 512, 512, SIZE, 2 * BS, true);
	im = open_as(NAME, &other, true);
	got = sfs_image_sidecar(im);
	cr_expect_eq(got.prov, SFS_PROV_THIN);
	cr_expect_eq(got.block_size, BS);
	cr_expect_eq(sfs_image_geom(im).block_size, BS);
	cr_expect_geq(logcap_lines(&cap, "provisioning", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_geq(logcap_lines(&cap, "block_size", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- refused backing files ---- */

static void expect_open_refused(int want, const char *word)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	struct sfs_image *im = NULL;
	char err[512] = "";
	int rc = sfs_image_open(ts.fd, ts.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err));

	cr_expect_eq(rc, want, "got %d (%s): %s", rc, strerror(-rc), err);
	cr_expect_null(im);
	cr_expect(strstr(err, NAME), "'%s' should name the image", err);
	if (word)
		cr_expect(strstr(err, word), "'%s' should say '%s'", err, word);
	if (im)
		sfs_image_close(im);
}

Test(image, symlink_backing_refused)
{
	unsigned char junk[4096];

	memset(junk, JUNK, sizeof(junk));
	tmp_write_file(ts.fd, "elsewhere", junk, sizeof(junk));
	cr_assert_eq(symlinkat("elsewhere", ts.fd, NAME), 0);
	expect_open_refused(-EPERM, "symbolic link");
	cr_expect_eq(tmp_stat(ts.fd, "elsewhere").st_size, 4096, "the target must be left alone");
}

Test(image, dangling_symlink_backing_refused)
{
	cr_assert_eq(symlinkat("nowhere", ts.fd, NAME), 0);
	expect_open_refused(-EPERM, NULL);
	cr_expect(!tmp_exists(ts.fd, "nowhere"), "nothing may be created through the link");
}

Test(image, hard_linked_backing_refused)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);

	cr_expect_eq(sfs_image_close(open_as(NAME, &sc, true)), 0);
	cr_assert_eq(linkat(ts.fd, NAME, ts.fd, "second", 0), 0);
	expect_open_refused(-EPERM, "hard-linked");
}

Test(image, fifo_backing_refused)
{
	cr_assert_eq(mkfifoat(ts.fd, NAME, 0600), 0);
	expect_open_refused(-EPERM, "not a regular file");
}

Test(image, directory_backing_refused)
{
	/* image.h: "a backing file that is not a regular file ... -EPERM" */
	cr_assert_eq(mkdirat(ts.fd, NAME, 0700), 0);
	expect_open_refused(-EPERM, NULL);
}

/* ---- import of an existing raw file ---- */

/* Write 4 KiB of data at off in the raw file fd and in model. */
static void raw_put(int fd, unsigned char *model, uint64_t off)
{
	fill(model + off, 4096, off, 1);
	cr_assert_eq(pwrite(fd, model + off, 4096, (off_t)off), 4096);
}

/*
 * A raw file of size bytes with data in blocks 0, 5 and (if it reaches
 * there) 16, the rest holes; returns a new model of SIZE bytes holding it.
 */
static unsigned char *make_raw(const char *name, uint64_t size)
{
	unsigned char *model = new_model(SIZE);
	int fd = openat(ts.fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	raw_put(fd, model, 0);
	raw_put(fd, model, 5 * BS + 8192);
	if (size >= SIZE)
		raw_put(fd, model, SIZE - 4096);
	cr_assert_eq(fsync(fd), 0);
	close(fd);
	return model;
}

/* Opens NAME, a raw file, as an image of sc: count blocks mapped and the
 * model's data. */
static struct sfs_image *import_expect(const struct sfs_sidecar *sc, const unsigned char *model, uint64_t count,
				       const char *what)
{
	struct sfs_image *im = open_as(NAME, sc, true);

	cr_expect_eq(count_of(im), count, "%s: %llu blocks mapped, want %llu", what,
		     (unsigned long long)count_of(im), (unsigned long long)count);
	expect_model(im, model, 0, SIZE, what);
	return im;
}

Test(image, import_raw_file_with_holes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	unsigned char *model;
	struct sfs_image *im;

	model = make_raw(NAME, SIZE);
	im = import_expect(&sc, model, 3, "import: data blocks 0, 5, 16 and nothing else");
	cr_expect(bit(im, 0) && bit(im, 5) && bit(im, 16));
	cr_expect_eq(sfs_map_next_set(sfs_image_map(im), 1), 5);
	cr_expect_geq(logcap_lines(&cap, "import", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_image_close(im), 0);
	/* holes are unallocated: junk there does not show; the map persisted */
	plant_junk_in_file(2 * BS, BS);
	im = import_expect(&sc, model, 3, "import, reopened");
	close_model(im, model);
}

Test(image, import_shorter_raw_file_is_extended)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	unsigned char *model;
	struct sfs_image *im;

	model = make_raw(NAME, 8 * BS);
	im = import_expect(&sc, model, 2, "short import");
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)SIZE);
	close_model(im, model);
}

Test(image, import_thick_reserves_the_holes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 512, 4096, SIZE, BS, true);
	unsigned char *model;
	struct sfs_image *im;

	model = make_raw(NAME, SIZE);
	cr_assert_lt((uint64_t)backing_blocks(NAME) * 512, SIZE, "the raw file has holes");
	im = import_expect(&sc, model, 3, "thick import");
	cr_expect_geq((uint64_t)backing_blocks(NAME) * 512, SIZE, "a zeroedthick image reserves all its space");
	close_model(im, model);
}

Test(image, import_larger_raw_file_refused)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, 8 * BS, BS, true);
	struct sfs_image *im = NULL;
	char err[512] = "";

	free(make_raw(NAME, SIZE));
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err)), -EINVAL);
	cr_expect_null(im);
	cr_expect(strstr(err, "'size'"), "'%s' should name the key 'size'", err);
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)SIZE, "the raw file is left alone");
}

Test(image, import_eagerzeroedthick_keeps_data)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 512, 512, SIZE, BS, false);
	unsigned char *model;
	struct sfs_image *im;

	model = make_raw(NAME, SIZE);
	im = import_expect(&sc, model, NB, "eager import");
	cr_expect(sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED);
	expect_backing(im, model, 0, SIZE, "eager import");
	close_model(im, model);
}

Test(image, interrupted_eager_zeroing_resumes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 512, 4096, SIZE, BS, true);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_map *m = NULL;
	char err[256] = "";

	put(im, model, 0, 4096, 1);
	cr_expect_eq(sfs_image_close(im), 0);
	/* as if zeroing had stopped before block 2 and the flag was never set */
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", 0, NULL, &m, err, sizeof(err)), 0, "%s", err);
	for (uint64_t b = 2; b < NB; b++)
		sfs_map_clear(m, b);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	cr_assert_eq(sfs_map_set_prov(m, sfs_map_info(m)->prov, 0), 0);
	sfs_map_close(m);
	plant_junk_in_file(2 * BS, SIZE - 2 * BS);

	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), NB);
	cr_expect(sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED);
	expect_model(im, model, 0, SIZE, "resumed eager zeroing");
	expect_backing(im, model, 0, SIZE, "resumed eager zeroing");
	close_model(im, model);
}

/* ---- concurrency ---- */

#define NTHREAD 8
#define CBS MiB
#define CBLOCKS 24

struct racer {
	struct sfs_image *im;
	unsigned id;
	pthread_barrier_t *go;
	uint64_t *cur;          /* block being raced on, for the reader */
	int rc;
};

/* Thread t writes 4 KiB at a place of its own in each block, all threads at once. */
static uint64_t racer_off(uint64_t blk, unsigned t)
{
	return blk * CBS + t * (CBS / NTHREAD) + t * 512;
}

static void *race_first_writes(void *arg)
{
	struct racer *r = arg;
	unsigned char buf[4096];

	for (uint64_t b = 0; b < CBLOCKS; b++) {
		uint64_t off = racer_off(b, r->id);

		fill(buf, sizeof(buf), off, r->id + 1);
		if (r->id == 0)
			__atomic_store_n(r->cur, b, __ATOMIC_RELEASE);
		pthread_barrier_wait(r->go);
		if (sfs_image_write(r->im, buf, sizeof(buf), off) != (ssize_t)sizeof(buf) && r->rc == 0)
			r->rc = -1;
	}
	return NULL;
}

/* Byte expected at pos once every racer wrote: a racer's pattern or zero. */
static unsigned char race_final(uint64_t pos)
{
	uint64_t blk = pos / CBS;

	for (unsigned t = 0; t < NTHREAD; t++)
		if (pos >= racer_off(blk, t) && pos < racer_off(blk, t) + 4096)
			return pat(pos, t + 1);
	return 0;
}

/* The reader reads the block under race again and again: every byte zero or its final value, never junk. */
static uint64_t race_block(struct checker *c)
{
	return __atomic_load_n((uint64_t *)c->arg, __ATOMIC_ACQUIRE) * CBS;
}

static void race(bool offload)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, CBLOCKS * CBS, CBS, offload);
	struct sfs_image *im = open_as(NAME, &sc, true);
	unsigned char *model = new_model(CBLOCKS * CBS);
	struct racer r[NTHREAD];
	pthread_t th[NTHREAD], rth;
	pthread_barrier_t go;
	struct sfs_stats_snap s;
	uint64_t cur = 0;
	int done = 0;
	struct checker rd = {
		.im = im, .stop = &done, .len = CBS, .next = race_block, .want = race_final, .arg = &cur,
	};

	plant_junk(sfs_image_fd(im), 0, CBLOCKS * CBS);
	pthread_barrier_init(&go, NULL, NTHREAD);
	cr_assert_eq(pthread_create(&rth, NULL, checker_run, &rd), 0);
	for (unsigned i = 0; i < NTHREAD; i++) {
		r[i] = (struct racer){ im, i, &go, &cur, 0 };
		cr_assert_eq(pthread_create(&th[i], NULL, race_first_writes, &r[i]), 0);
	}
	for (unsigned i = 0; i < NTHREAD; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(r[i].rc, 0, "thread %u: a write failed", i);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(rth, NULL);
	pthread_barrier_destroy(&go);
	expect_checked(&rd, offload ? "race reader, offload" : "race reader, no offload");
	cr_expect_gt(rd.reads, 0);
	for (uint64_t b = 0; b < CBLOCKS; b++)
		for (unsigned t = 0; t < NTHREAD; t++)
			fill(model + racer_off(b, t), 4096, racer_off(b, t), t + 1);
	expect_model(im, model, 0, CBLOCKS * CBS, offload ? "race, offload" : "race, no offload");
	expect_backing(im, model, 0, CBLOCKS * CBS, offload ? "race, offload" : "race, no offload");
	cr_expect_eq(count_of(im), CBLOCKS);
	s = snap_of(im);
	cr_expect_eq(s.first_writes, CBLOCKS, "exactly one first write per block");
	cr_expect_eq(s.overwrites, CBLOCKS * (NTHREAD - 1));
	cr_expect_eq(s.writes, CBLOCKS * NTHREAD);
	cr_expect_eq(s.zeroed_bytes, CBLOCKS * (CBS - 4096), "each block zeroed once, around one write");
	close_model(im, model);
}

Test(image, racing_first_writes_to_one_block)
{
	race(true);
}

Test(image, racing_first_writes_to_one_block_without_offload)
{
	race(false);
}

/* ---- stats ---- */

static void stats_sequence(bool offload)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, MiB, BS, offload);
	struct sfs_image *im = open_as(NAME, &sc, true);
	unsigned char buf[8192];
	struct sfs_stats_snap s;

	memset(buf, 3, sizeof(buf));
	cr_assert_eq(sfs_image_write(im, buf, 4096, 0), 4096);                 /* first, zeroes 60K */
	cr_assert_eq(sfs_image_write(im, buf, 512, 512), 512);                  /* overwrite, rmw */
	cr_assert_eq(sfs_image_write(im, buf, 4096, 100), -EINVAL);             /* misaligned */
	cr_assert_eq(sfs_image_read(im, buf, 512, 3), -EINVAL);                 /* misaligned */
	cr_assert_eq(sfs_image_write(im, buf, 4096, MiB), -ENOSPC);             /* past the end */
	cr_assert_eq(sfs_image_write(im, buf, 8192, BS + 4096), 8192);          /* first, zeroes 56K */
	cr_assert_eq(sfs_image_write_zeroes(im, 0, 4096), 0);                   /* zeroes 4K */
	cr_assert_eq(sfs_image_discard(im, 2 * BS, BS), 0);                     /* never written */
	cr_assert_eq(sfs_image_read(im, buf, 4096, 0), 4096);
	cr_assert_eq(sfs_image_read(im, buf, 4096, MiB), 0);                    /* at the end */
	cr_assert_eq(sfs_image_flush(im), 0);

	s = snap_of(im);
	cr_expect_eq(s.writes, 3);
	cr_expect_eq(s.bytes_written, 4096 + 512 + 8192);
	cr_expect_eq(s.first_writes, 2);
	cr_expect_eq(s.overwrites, 1);
	cr_expect_eq(s.rmw_writes, 1);
	cr_expect_eq(s.misaligned_rejected, 2);
	cr_expect_eq(s.zeroed_bytes, (BS - 4096) + (BS - 8192) + 4096);
	cr_expect_eq(s.write_zeroes, 1);
	cr_expect_eq(s.discards, 1);
	cr_expect_eq(s.reads, 1);
	cr_expect_eq(s.bytes_read, 4096);
	cr_expect_eq(s.flushes, 1);
	cr_expect_eq(s.lat[SFS_LAT_WRITE_FIRST].count, 2);
	cr_expect_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].count, 1);
	cr_expect_eq(s.lat[SFS_LAT_READ].count, 1);
	cr_expect_eq(s.lat[SFS_LAT_FLUSH].count, 1);
	cr_expect_eq(s.out_of_range, 1);
	cr_expect_eq(s.align_hist[SFS_ALIGN_4K], 3, "write at 0, read at 0, write of 8K at 68K");
	cr_expect_eq(s.align_hist[SFS_ALIGN_512], 3, "512 at 512 and both misaligned ones");
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, stats_after_known_io)
{
	stats_sequence(true);
}

Test(image, stats_after_known_io_without_offload)
{
	stats_sequence(false);
}

Test(image, eagerzeroedthick_has_no_first_writes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, MiB, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);
	unsigned char buf[4096];
	struct sfs_stats_snap s0, s;

	s0 = snap_of(im);
	memset(buf, 3, sizeof(buf));
	cr_assert_eq(sfs_image_write(im, buf, 4096, 3 * BS), 4096);
	s = snap_of(im);
	cr_expect_eq(s.first_writes, 0);
	cr_expect_eq(s.overwrites, 1);
	cr_expect_eq(s.zeroed_bytes, s0.zeroed_bytes, "no first-write cost");
	cr_expect_eq(s.rmw_writes, 0);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, set_name)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, false);
	char longname[300];

	cr_expect_eq(sfs_image_set_name(im, "other"), 0);
	cr_expect_str_eq(sfs_image_name(im), "other");
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cr_expect_eq(sfs_image_set_name(im, longname), -ENAMETOOLONG);
	cr_expect_str_eq(sfs_image_name(im), "other");
	cr_expect_eq(sfs_image_close(im), 0);
}
