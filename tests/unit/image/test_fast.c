/* SPDX-License-Identifier: MIT */
/*
 * test_fast.c - unit tests of core/image/fast.c: the plans of the fast
 * path (fast.h).
 *
 * An aligned read of allocated blocks and an overwrite are one transfer
 * of the O_DIRECT descriptor, counted only once it has ended whole; a
 * read of blocks never written is answered with zeros; refusals are
 * answered and counted as the blocking calls count them; everything that
 * is not one plain transfer (blocks in part allocated, first writes, a
 * profile, a growing image, an image that takes ranges, a handle without
 * O_DIRECT and a partial sector, a buffer O_DIRECT cannot take, a short
 * transfer) is SLOW with nothing counted; sfs_image_need_ranges waits for
 * an issued transfer until its end.  A flush is one fdatasync only while
 * the map has nothing to write and no flush of it is under way.
 */
#include "fixtures/image_fixture.h"

#include "image/fast.h"

/* One test's image, an aligned buffer past which it checks nothing is touched, and the plan's io and answer. */
struct fx {
	struct sfs_image *im;
	unsigned char *buf;
	struct sfs_fast_io io;
	ssize_t res;
};

/* The image im, a buffer of len bytes and a page more of 0x5a, and res in the answer. */
static struct fx fx_with(struct sfs_image *im, size_t len, ssize_t res)
{
	struct fx f = { .im = im, .res = res };
	void *p = NULL;

	cr_assert_eq(posix_memalign(&p, 4096, len + 4096), 0);
	memset(p, 0x5a, len + 4096);
	f.buf = p;
	return f;
}

/* fx_with an image of sector lss/pss and provisioning prov, stats on. */
static struct fx fx_open(enum sfs_prov prov, uint32_t lss, uint32_t pss, size_t len, ssize_t res)
{
	struct sfs_sidecar sc = sidecar(prov, lss, pss, SIZE, BS, true);

	return fx_with(open_as(NAME, &sc, true), len, res);
}

static void fx_close(struct fx *f)
{
	free(f->buf);
	cr_expect_eq(sfs_image_close(f->im), 0);
}

/* The plans of a read and a write of len bytes at off from f->buf + skew, with O_DIRECT. */
static enum sfs_fast rd(struct fx *f, size_t skew, size_t len, uint64_t off)
{
	return sfs_image_fast_read(f->im, f->buf + skew, len, off, true, &f->io, &f->res);
}

static enum sfs_fast wr(struct fx *f, size_t skew, size_t len, uint64_t off)
{
	return sfs_image_fast_write(f->im, f->buf + skew, len, off, true, &f->io, &f->res);
}

/* Do the transfer of an ISSUE with plain pread/pwrite, as a loop's io_uring would. */
static ssize_t transfer(const struct sfs_fast_io *io, void *buf)
{
	if (io->op == SFS_FAST_SYNC)
		return fdatasync(io->fd) < 0 ? -errno : 0;
	return io->op == SFS_FAST_WRITE ? pwrite(io->fd, buf, io->len, (off_t)io->off)
					: pread(io->fd, buf, io->len, (off_t)io->off);
}

/* Do f's ISSUEd transfer of n bytes and end it: DONE, answered n. */
static void fx_finish(struct fx *f, ssize_t n)
{
	cr_assert_eq(transfer(&f->io, f->buf), n);
	cr_assert_eq(sfs_image_fast_end(&f->io, n, &f->res), SFS_FAST_DONE);
	cr_expect_eq(f->res, n);
}

/* An empty store again, for the next round of a test's loop. */
static void fresh_store(void)
{
	tmpstore_destroy(&ts);
	tmpstore_make(&ts, "image", true);
}

static const uint32_t formats[3][2] = { { 512, 512 }, { 512, 4096 }, { 4096, 4096 } };

Test(image, fast_read_of_written_blocks_is_one_transfer)
{
	for (int i = 0; i < 3; i++) {
		struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, formats[i][0], formats[i][1], 3 * BS, 12345);
		unsigned char *model = new_model(SIZE);
		struct sfs_stats_snap s;

		put(f.im, model, BS / 2, 2 * BS, 3);
		s = snap_of(f.im);
		cr_assert_eq(rd(&f, 0, 2 * BS, BS / 2), SFS_FAST_ISSUE);
		cr_expect_eq(f.res, 12345, "an ISSUE leaves *res alone");
		cr_expect_eq(f.io.fd >= 0 && f.io.op == SFS_FAST_READ && f.io.off == BS / 2 && f.io.len == 2 * BS, true);
		cr_expect_eq(snap_of(f.im).reads, s.reads, "nothing counted before the end");
		fx_finish(&f, 2 * BS);
		cr_expect_eq(first_diff(f.buf, model + BS / 2, 2 * BS), 2 * BS, "the data written");
		cr_expect_eq(snap_of(f.im).reads, s.reads + 1);
		cr_expect_eq(snap_of(f.im).bytes_read, s.bytes_read + 2 * BS);
		cr_expect_eq(snap_of(f.im).lat[SFS_LAT_READ].count, s.lat[SFS_LAT_READ].count + 1);
		free(model);
		fx_close(&f);
		fresh_store();
	}
}

Test(image, fast_read_of_never_written_blocks_is_zeros)
{
	struct fx f = fx_open(SFS_PROV_THIN, 4096, 4096, 2 * BS, 0);
	size_t i = 0;

	plant_junk(sfs_image_fd(f.im), 0, 2 * BS);
	cr_assert_eq(rd(&f, 0, 2 * BS, 0), SFS_FAST_DONE);
	cr_expect_eq(f.res, (ssize_t)(2 * BS));
	while (i < 2 * BS && f.buf[i] == 0)
		i++;
	cr_expect_eq(i, 2 * BS, "byte %zu is 0x%02x: a block never written reads as zeros", i, f.buf[i]);
	cr_expect_eq(f.buf[2 * BS], 0x5a, "nothing past the read is touched");
	cr_expect_eq(snap_of(f.im).reads, 1);
	cr_expect_eq(snap_of(f.im).bytes_read, 2 * BS);
	fx_close(&f);
}

Test(image, fast_read_of_blocks_in_part_written_is_slow)
{
	struct fx f = fx_open(SFS_PROV_THIN, 512, 512, 2 * BS, 7);

	put(f.im, NULL, 0, 512, 1);
	cr_expect_eq(rd(&f, 0, 2 * BS, 0), SFS_FAST_SLOW);
	cr_expect_eq(f.res, 7);
	cr_expect_eq(snap_of(f.im).reads, 0, "a SLOW request is not counted");
	cr_expect_eq(f.buf[0], 0x5a, "nor is its buffer touched");
	fx_close(&f);
}

Test(image, fast_refusals_are_answered_and_counted)
{
	/* what each request is answered, with nothing issued: len, off, read or write, answer */
	static const struct { size_t len; uint64_t off; bool write; ssize_t res; } refused[] = {
		{ 4096, 512, false, -EINVAL }, { 512, 4096, true, -EINVAL }, { 8192, SIZE - 4096, true, -ENOSPC },
		{ 4096, SIZE, false, 0 /* a read at the end returns 0 bytes */ }, { 0, 0, true, 0 },
	};
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 8192, 0);

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		f.res = 1;
		cr_expect_eq(refused[i].write ? wr(&f, 0, refused[i].len, refused[i].off)
					      : rd(&f, 0, refused[i].len, refused[i].off), SFS_FAST_DONE, "request %zu", i);
		cr_expect_eq(f.res, refused[i].res, "request %zu", i);
	}
	cr_expect_eq(snap_of(f.im).misaligned_rejected, 2);
	cr_expect_eq(snap_of(f.im).out_of_range, 1);
	cr_expect_eq(snap_of(f.im).reads + snap_of(f.im).writes, 0);
	/* across the end: what is left */
	cr_assert_eq(rd(&f, 0, 8192, SIZE - 4096), SFS_FAST_ISSUE);
	cr_expect_eq(f.io.len, 4096);
	fx_finish(&f, 4096);
	fx_close(&f);
}

Test(image, fast_without_o_direct_takes_only_whole_sectors)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 512, 4096, 8192, 0);

	cr_expect_eq(sfs_image_fast_read(f.im, f.buf, 100, 7, false, &f.io, &f.res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_fast_write(f.im, f.buf, 100, 7, false, &f.io, &f.res), SFS_FAST_SLOW);
	cr_expect_eq(snap_of(f.im).misaligned_rejected, 0, "the page cache's requests are not refused");
	cr_assert_eq(sfs_image_fast_read(f.im, f.buf, 4096, 4096, false, &f.io, &f.res), SFS_FAST_ISSUE);
	fx_finish(&f, 4096);
	fx_close(&f);
}

Test(image, fast_overwrite_is_one_transfer)
{
	for (int i = 0; i < 3; i++) {
		struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, formats[i][0], formats[i][1], BS, 0);
		unsigned char *model = new_model(SIZE);
		struct sfs_stats_snap s;
		uint64_t n = count_of(f.im);

		fill(f.buf, 512, 3 * BS, 9);
		memcpy(model + 3 * BS, f.buf, 512);
		cr_assert_eq(wr(&f, 0, 512, 3 * BS), formats[i][0] == 512 ? SFS_FAST_ISSUE : SFS_FAST_DONE);
		if (formats[i][0] == 512) {
			cr_expect_eq(f.io.op == SFS_FAST_WRITE && f.io.off == 3 * BS && f.io.len == 512, true);
			cr_expect_eq(snap_of(f.im).writes, 0, "nothing counted before the end");
			fx_finish(&f, 512);
			s = snap_of(f.im);
			cr_expect_eq(s.writes, 1);
			cr_expect_eq(s.overwrites, 1);
			cr_expect_eq(s.first_writes, 0);
			cr_expect_eq(s.bytes_written, 512);
			cr_expect_eq(s.rmw_writes, formats[i][1] == 4096 ? 1 : 0, "512 B of a 4 KiB physical sector");
			cr_expect_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].count, 1);
			cr_expect_eq(count_of(f.im), n, "the map does not change");
			expect_model(f.im, model, 0, SIZE, "after a fast overwrite");
		} else {
			cr_expect_eq(f.res, -EINVAL);
		}
		free(model);
		fx_close(&f);
		fresh_store();
	}
}

Test(image, fast_first_write_is_slow)
{
	struct fx f = fx_open(SFS_PROV_THIN, 4096, 4096, BS, 0);

	put(f.im, NULL, 0, 4096, 1);
	/* block 0 allocated, block 1 not: the write spans both */
	cr_expect_eq(wr(&f, 0, 8192, BS - 4096), SFS_FAST_SLOW);
	cr_expect_eq(wr(&f, 0, 4096, BS), SFS_FAST_SLOW);
	cr_expect_eq(snap_of(f.im).writes, 1, "only the put");
	cr_expect_eq(count_of(f.im), 1);
	fx_close(&f);
}

Test(image, fast_unaligned_buffer_is_slow)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 8192, 0);

	cr_expect_eq(rd(&f, 1, 4096, 0), SFS_FAST_SLOW);
	cr_expect_eq(wr(&f, 1, 4096, 0), SFS_FAST_SLOW);
	fx_close(&f);
}

/* f's read and write of its first 4 KiB are SLOW, for the reason why. */
static void expect_slow(struct fx *f, const char *why)
{
	cr_expect_eq(rd(f, 0, 4096, 0), SFS_FAST_SLOW, "read: %s", why);
	cr_expect_eq(wr(f, 0, 4096, 0), SFS_FAST_SLOW, "write: %s", why);
}

Test(image, fast_profile_growing_and_ranged_images_are_slow)
{
	static const char prof[] = "{ \"name\": \"p\", \"channels\": 4, \"read\": [ { \"size\": 512, \"us\": 0 } ],"
				   " \"write\": [ { \"size\": 512, \"us\": 0 } ], \"flush_us\": 0 }";
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, SIZE, BS, true);
	int fd = openat(ts.fd, "p.prof", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct fx f;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, prof, sizeof(prof) - 1), (ssize_t)(sizeof(prof) - 1));
	close(fd);
	snprintf(sc.profile, sizeof(sc.profile), "./p.prof");
	f = fx_with(open_as(NAME, &sc, true), 4096, 0);
	expect_slow(&f, "a profile waits");
	cr_expect_eq(sfs_image_fast_flush(f.im, &f.io), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_close(f.im), 0);

	sc.profile[0] = '\0';
	f.im = open_as("other", &sc, true);
	sfs_image_set_growing(f.im, true);
	expect_slow(&f, "growing");
	sfs_image_set_growing(f.im, false);
	cr_assert_eq(rd(&f, 0, 4096, 0), SFS_FAST_ISSUE);
	fx_finish(&f, 4096);
	sfs_image_need_ranges(f.im);
	expect_slow(&f, "ranged");
	cr_expect_eq(sfs_image_close(f.im), 0);

	f.im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
	expect_slow(&f, "buffered backing");
	fx_close(&f);
}

struct ranger {
	struct sfs_image *im;
	int done;
};

static void *need_ranges(void *arg)
{
	struct ranger *r = arg;

	sfs_image_need_ranges(r->im);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(image, need_ranges_waits_for_an_issued_transfer)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 4096, 0);
	struct ranger r = { f.im, 0 };
	struct timespec ts50 = { 0, 50 * 1000 * 1000 };
	pthread_t t;

	cr_assert_eq(wr(&f, 0, 4096, 0), SFS_FAST_ISSUE);
	cr_assert_eq(pthread_create(&t, NULL, need_ranges, &r), 0);
	nanosleep(&ts50, NULL);
	cr_expect_eq(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE), 0, "need_ranges returned with a transfer in flight");
	fx_finish(&f, 4096);
	pthread_join(t, NULL);
	cr_expect_eq(r.done, 1);
	fx_close(&f);
}

Test(image, fast_short_or_failed_transfer_is_slow)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 8192, 3);

	cr_assert_eq(rd(&f, 0, 8192, 0), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&f.io, 4096, &f.res), SFS_FAST_SLOW, "short");
	cr_assert_eq(wr(&f, 0, 8192, 0), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&f.io, -EIO, &f.res), SFS_FAST_SLOW, "failed");
	cr_expect_eq(f.res, 3);
	cr_expect_eq(snap_of(f.im).reads + snap_of(f.im).writes, 0, "nothing counted");
	sfs_image_need_ranges(f.im);   /* returns: neither is in flight any more */
	fx_close(&f);
}

Test(image, fast_flush_is_one_fdatasync_when_the_map_is_on_disk)
{
	struct fx f = fx_open(SFS_PROV_THIN, 4096, 4096, 0, 9);
	struct sfs_image *im = f.im;

	cr_assert_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_ISSUE, "nothing written yet");
	cr_expect_eq(f.io.op == SFS_FAST_SYNC && f.io.fd >= 0 && f.io.len == 0, true);
	fx_finish(&f, 0);
	cr_expect_eq(snap_of(im).flushes, 1);
	cr_expect_eq(snap_of(im).lat[SFS_LAT_FLUSH].count, 1);

	put(im, NULL, 0, 4096, 1);              /* a first write: the map has a page to write */
	cr_expect_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_SLOW, "an allocation to make durable");
	/* a flush that has taken the dirty pages but not written them: the map looks clean */
	cr_assert_eq(sfs_map_flush_begin(sfs_image_map(im)), 0);
	cr_expect_eq(sfs_map_dirty(sfs_image_map(im)), false);
	cr_expect_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_SLOW, "a flush of the map under way");
	cr_assert_eq(sfs_map_flush_end(sfs_image_map(im)), 0);
	cr_assert_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_ISSUE, "the map is on disk now");
	cr_expect_eq(sfs_image_fast_end(&f.io, -EIO, &f.res), SFS_FAST_SLOW, "a failed fdatasync");
	cr_expect_eq(snap_of(im).flushes, 1, "not counted");
	sfs_image_set_growing(im, true);
	cr_expect_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_SLOW, "a growing image settles its size");
	sfs_image_set_growing(im, false);
	sfs_image_need_ranges(im);
	cr_expect_eq(sfs_image_fast_flush(im, &f.io), SFS_FAST_SLOW, "an image that takes ranges");
	fx_close(&f);
}

/* An image of 4 MiB, 512e, 1 MiB blocks, with the sidecar keys extra (JSON members) added. */
static struct sfs_image *open_keys(const char *extra)
{
	char json[512], err[512] = "";
	struct sfs_sidecar sc;

	snprintf(json, sizeof(json), "{\"size\": \"4M\", \"sector\": \"512e\", \"block_size\": \"1M\", %s}", extra);
	cr_assert_eq(sfs_sidecar_parse(json, strlen(json), "disk.json", &sc, err, sizeof(err)), 0, "%s", err);
	return open_as(NAME, &sc, true);
}

Test(image, fast_images_with_failures_are_slow)
{
	/* a volatile write cache from the sidecar; a bad sector planted by attribute */
	static const char *const keys[] = { "\"write_cache\": \"volatile\"", "\"write_cache\": \"none\"" };

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct fx f = fx_with(open_keys(keys[k]), 8192, 7);
		char err[256];

		cr_assert_eq(sfs_image_write(f.im, f.buf, 8192, 0), 8192, "%s", keys[k]);
		if (k == 1)
			cr_assert_eq(sfs_image_fail_attr_set(f.im, "bad_sectors", "+9", 2, err, sizeof(err)), 0, "%s", err);
		cr_expect_eq(wr(&f, 0, 4096, 0), SFS_FAST_SLOW, "%s: a write goes through the failure state's hooks",
			     keys[k]);
		cr_expect_eq(rd(&f, 0, 4096, 0), SFS_FAST_SLOW,
			     "%s: a read goes through them too (a bad sector, power off)", keys[k]);
		cr_expect_eq(sfs_image_fast_flush(f.im, &f.io), SFS_FAST_SLOW, "%s: a flush destages the cache",
			     keys[k]);
		cr_expect_eq(f.res, 7);
		fx_close(&f);
		fresh_store();
	}
}

Test(image, fast_power_cut_by_attribute_makes_it_slow)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 8192, 0);
	char err[256];

	cr_assert_eq(wr(&f, 0, 4096, 0), SFS_FAST_ISSUE);
	fx_finish(&f, 4096);
	cr_assert_eq(sfs_image_fail_attr_set(f.im, "power", "off", 3, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rd(&f, 0, 4096, 0), SFS_FAST_SLOW, "a disk without power is the slow path's to refuse");
	cr_expect_eq(sfs_image_read(f.im, f.buf, 4096, 0), -EIO);
	fx_close(&f);
}

Test(image, fast_requests_leave_the_stats_cell)
{
	struct fx f = fx_open(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, 8192, 0);
	int packed = 0;

	cr_assert_eq(wr(&f, 0, 4096, 0), SFS_FAST_ISSUE);
	for (int i = 0; i < 3; i++)
		packed |= sfs_image_stats_idle(f.im);
	cr_expect_eq(packed, 0, "stats are never packed under a transfer in flight");
	fx_finish(&f, 4096);
	cr_assert_eq(rd(&f, 0, 512, 0), SFS_FAST_DONE, "misaligned: refused");
	cr_assert_eq(rd(&f, 0, 4096, 2 * BS), SFS_FAST_ISSUE);
	cr_assert_eq(sfs_image_fast_end(&f.io, -EIO, &f.res), SFS_FAST_SLOW);
	for (int i = 0; i < 3 && !packed; i++)
		packed = sfs_image_stats_idle(f.im);
	cr_expect_eq(packed, 1, "with every request answered, the idle looks pack the stats");
	cr_expect_eq(snap_of(f.im).writes, 1, "and packing keeps what they counted");
	fx_close(&f);
}
