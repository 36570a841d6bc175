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

/* An image of sector lss/pss and provisioning prov, stats on. */
static struct sfs_image *open_img(enum sfs_prov prov, uint32_t lss, uint32_t pss)
{
	struct sfs_sidecar sc = sidecar(prov, lss, pss, SIZE, BS, true);

	return open_as(NAME, &sc, true);
}

static unsigned char *abuf(size_t len)
{
	void *p = NULL;

	cr_assert_eq(posix_memalign(&p, 4096, len + 4096), 0);
	memset(p, 0x5a, len + 4096);
	return p;
}

/* Do the transfer of an ISSUE with plain pread/pwrite, as a loop's io_uring would. */
static ssize_t transfer(const struct sfs_fast_io *io, void *buf)
{
	if (io->op == SFS_FAST_SYNC)
		return fdatasync(io->fd) < 0 ? -errno : 0;
	return io->op == SFS_FAST_WRITE ? pwrite(io->fd, buf, io->len, (off_t)io->off)
					: pread(io->fd, buf, io->len, (off_t)io->off);
}

static const uint32_t formats[3][2] = { { 512, 512 }, { 512, 4096 }, { 4096, 4096 } };

Test(image, fast_read_of_written_blocks_is_one_transfer)
{
	for (int i = 0; i < 3; i++) {
		struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, formats[i][0], formats[i][1]);
		unsigned char *model = new_model(SIZE), *buf = abuf(3 * BS);
		struct sfs_fast_io io;
		struct sfs_stats_snap s;
		ssize_t res = 12345;

		put(im, model, BS / 2, 2 * BS, 3);
		s = snap_of(im);
		cr_assert_eq(sfs_image_fast_read(im, buf, 2 * BS, BS / 2, true, &io, &res), SFS_FAST_ISSUE);
		cr_expect_eq(res, 12345, "an ISSUE leaves *res alone");
		cr_expect_eq(io.fd >= 0 && io.op == SFS_FAST_READ && io.off == BS / 2 && io.len == 2 * BS, true);
		cr_expect_eq(snap_of(im).reads, s.reads, "nothing counted before the end");
		cr_assert_eq(transfer(&io, buf), (ssize_t)(2 * BS));
		cr_assert_eq(sfs_image_fast_end(&io, 2 * BS, &res), SFS_FAST_DONE);
		cr_expect_eq(res, (ssize_t)(2 * BS));
		cr_expect_eq(first_diff(buf, model + BS / 2, 2 * BS), 2 * BS, "the data written");
		cr_expect_eq(snap_of(im).reads, s.reads + 1);
		cr_expect_eq(snap_of(im).bytes_read, s.bytes_read + 2 * BS);
		cr_expect_eq(snap_of(im).lat[SFS_LAT_READ].count, s.lat[SFS_LAT_READ].count + 1);
		free(buf);
		close_model(im, model);
		tmpstore_destroy(&ts);
		tmpstore_make(&ts, "image", true);
	}
}

Test(image, fast_read_of_never_written_blocks_is_zeros)
{
	struct sfs_image *im = open_img(SFS_PROV_THIN, 4096, 4096);
	unsigned char *buf = abuf(2 * BS);
	struct sfs_fast_io io;
	ssize_t res = 0;
	size_t i = 0;

	plant_junk(sfs_image_fd(im), 0, 2 * BS);
	cr_assert_eq(sfs_image_fast_read(im, buf, 2 * BS, 0, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, (ssize_t)(2 * BS));
	while (i < 2 * BS && buf[i] == 0)
		i++;
	cr_expect_eq(i, 2 * BS, "byte %zu is 0x%02x: a block never written reads as zeros", i, buf[i]);
	cr_expect_eq(buf[2 * BS], 0x5a, "nothing past the read is touched");
	cr_expect_eq(snap_of(im).reads, 1);
	cr_expect_eq(snap_of(im).bytes_read, 2 * BS);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_read_of_blocks_in_part_written_is_slow)
{
	struct sfs_image *im = open_img(SFS_PROV_THIN, 512, 512);
	unsigned char *buf = abuf(2 * BS);
	struct sfs_fast_io io;
	ssize_t res = 7;

	put(im, NULL, 0, 512, 1);
	cr_expect_eq(sfs_image_fast_read(im, buf, 2 * BS, 0, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(res, 7);
	cr_expect_eq(snap_of(im).reads, 0, "a SLOW request is not counted");
	cr_expect_eq(buf[0], 0x5a, "nor is its buffer touched");
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_refusals_are_answered_and_counted)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	ssize_t res = 0;

	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 512, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, -EINVAL);
	cr_expect_eq(sfs_image_fast_write(im, buf, 512, 4096, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, -EINVAL);
	cr_expect_eq(snap_of(im).misaligned_rejected, 2);
	cr_expect_eq(sfs_image_fast_write(im, buf, 8192, SIZE - 4096, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, -ENOSPC);
	cr_expect_eq(snap_of(im).out_of_range, 1);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, SIZE, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, 0, "a read at the end returns 0 bytes");
	cr_expect_eq(sfs_image_fast_write(im, buf, 0, 0, true, &io, &res), SFS_FAST_DONE);
	cr_expect_eq(res, 0);
	cr_expect_eq(snap_of(im).reads + snap_of(im).writes, 0);
	/* across the end: what is left */
	cr_assert_eq(sfs_image_fast_read(im, buf, 8192, SIZE - 4096, true, &io, &res), SFS_FAST_ISSUE);
	cr_expect_eq(io.len, 4096);
	cr_assert_eq(transfer(&io, buf), 4096);
	cr_expect_eq(sfs_image_fast_end(&io, 4096, &res), SFS_FAST_DONE);
	cr_expect_eq(res, 4096);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_without_o_direct_takes_only_whole_sectors)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 512, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	ssize_t res = 0;

	cr_expect_eq(sfs_image_fast_read(im, buf, 100, 7, false, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_fast_write(im, buf, 100, 7, false, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(snap_of(im).misaligned_rejected, 0, "the page cache's requests are not refused");
	cr_assert_eq(sfs_image_fast_read(im, buf, 4096, 4096, false, &io, &res), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&io, transfer(&io, buf), &res), SFS_FAST_DONE);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_overwrite_is_one_transfer)
{
	for (int i = 0; i < 3; i++) {
		struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, formats[i][0], formats[i][1]);
		unsigned char *model = new_model(SIZE), *buf = abuf(BS);
		struct sfs_fast_io io;
		struct sfs_stats_snap s;
		ssize_t res = 0;
		uint64_t n = count_of(im);

		fill(buf, 512, 3 * BS, 9);
		memcpy(model + 3 * BS, buf, 512);
		cr_assert_eq(sfs_image_fast_write(im, buf, 512, 3 * BS, true, &io, &res),
			     formats[i][0] == 512 ? SFS_FAST_ISSUE : SFS_FAST_DONE);
		if (formats[i][0] == 512) {
			cr_expect_eq(io.op == SFS_FAST_WRITE && io.off == 3 * BS && io.len == 512, true);
			cr_expect_eq(snap_of(im).writes, 0, "nothing counted before the end");
			cr_assert_eq(transfer(&io, buf), 512);
			cr_assert_eq(sfs_image_fast_end(&io, 512, &res), SFS_FAST_DONE);
			cr_expect_eq(res, 512);
			s = snap_of(im);
			cr_expect_eq(s.writes, 1);
			cr_expect_eq(s.overwrites, 1);
			cr_expect_eq(s.first_writes, 0);
			cr_expect_eq(s.bytes_written, 512);
			cr_expect_eq(s.rmw_writes, formats[i][1] == 4096 ? 1 : 0, "512 B of a 4 KiB physical sector");
			cr_expect_eq(s.lat[SFS_LAT_WRITE_OVERWRITE].count, 1);
			cr_expect_eq(count_of(im), n, "the map does not change");
			expect_model(im, model, 0, SIZE, "after a fast overwrite");
		} else {
			cr_expect_eq(res, -EINVAL);
		}
		free(buf);
		close_model(im, model);
		tmpstore_destroy(&ts);
		tmpstore_make(&ts, "image", true);
	}
}

Test(image, fast_first_write_is_slow)
{
	struct sfs_image *im = open_img(SFS_PROV_THIN, 4096, 4096);
	unsigned char *buf = abuf(BS);
	struct sfs_fast_io io;
	ssize_t res = 0;

	put(im, NULL, 0, 4096, 1);
	/* block 0 allocated, block 1 not: the write spans both */
	cr_expect_eq(sfs_image_fast_write(im, buf, 8192, BS - 4096, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_fast_write(im, buf, 4096, BS, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(snap_of(im).writes, 1, "only the put");
	cr_expect_eq(count_of(im), 1);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_unaligned_buffer_is_slow)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	ssize_t res = 0;

	cr_expect_eq(sfs_image_fast_read(im, buf + 1, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_fast_write(im, buf + 1, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_profile_growing_and_ranged_images_are_slow)
{
	static const char prof[] = "{ \"name\": \"p\", \"channels\": 4, \"read\": [ { \"size\": 512, \"us\": 0 } ],"
				   " \"write\": [ { \"size\": 512, \"us\": 0 } ], \"flush_us\": 0 }";
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, SIZE, BS, true);
	unsigned char *buf = abuf(4096);
	struct sfs_fast_io io;
	struct sfs_image *im;
	ssize_t res = 0;
	int fd = openat(ts.fd, "p.prof", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, prof, sizeof(prof) - 1), (ssize_t)(sizeof(prof) - 1));
	close(fd);
	snprintf(sc.profile, sizeof(sc.profile), "./p.prof");
	im = open_as(NAME, &sc, true);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW, "a profile waits");
	cr_expect_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_close(im), 0);

	sc.profile[0] = '\0';
	im = open_as("other", &sc, true);
	sfs_image_set_growing(im, true);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW, "growing");
	cr_expect_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	sfs_image_set_growing(im, false);
	cr_assert_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&io, transfer(&io, buf), &res), SFS_FAST_DONE);
	sfs_image_need_ranges(im);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW, "ranged");
	cr_expect_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_close(im), 0);

	im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW, "buffered backing");
	cr_expect_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW);
	cr_expect_eq(sfs_image_close(im), 0);
	free(buf);
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
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(4096);
	struct ranger r = { im, 0 };
	struct timespec ts50 = { 0, 50 * 1000 * 1000 };
	struct sfs_fast_io io;
	ssize_t res = 0;
	pthread_t t;

	cr_assert_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_ISSUE);
	cr_assert_eq(pthread_create(&t, NULL, need_ranges, &r), 0);
	nanosleep(&ts50, NULL);
	cr_expect_eq(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE), 0, "need_ranges returned with a transfer in flight");
	cr_assert_eq(transfer(&io, buf), 4096);
	cr_expect_eq(sfs_image_fast_end(&io, 4096, &res), SFS_FAST_DONE);
	pthread_join(t, NULL);
	cr_expect_eq(r.done, 1);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_short_or_failed_transfer_is_slow)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	ssize_t res = 3;

	cr_assert_eq(sfs_image_fast_read(im, buf, 8192, 0, true, &io, &res), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&io, 4096, &res), SFS_FAST_SLOW, "short");
	cr_assert_eq(sfs_image_fast_write(im, buf, 8192, 0, true, &io, &res), SFS_FAST_ISSUE);
	cr_expect_eq(sfs_image_fast_end(&io, -EIO, &res), SFS_FAST_SLOW, "failed");
	cr_expect_eq(res, 3);
	cr_expect_eq(snap_of(im).reads + snap_of(im).writes, 0, "nothing counted");
	sfs_image_need_ranges(im);   /* returns: neither is in flight any more */
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_flush_is_one_fdatasync_when_the_map_is_on_disk)
{
	struct sfs_image *im = open_img(SFS_PROV_THIN, 4096, 4096);
	struct sfs_fast_io io;
	ssize_t res = 9;

	cr_assert_eq(sfs_image_fast_flush(im, &io), SFS_FAST_ISSUE, "nothing written yet");
	cr_expect_eq(io.op == SFS_FAST_SYNC && io.fd >= 0 && io.len == 0, true);
	cr_assert_eq(sfs_image_fast_end(&io, transfer(&io, NULL), &res), SFS_FAST_DONE);
	cr_expect_eq(res, 0);
	cr_expect_eq(snap_of(im).flushes, 1);
	cr_expect_eq(snap_of(im).lat[SFS_LAT_FLUSH].count, 1);

	put(im, NULL, 0, 4096, 1);              /* a first write: the map has a page to write */
	cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW, "an allocation to make durable");
	/* a flush that has taken the dirty pages but not written them: the map looks clean */
	cr_assert_eq(sfs_map_flush_begin(sfs_image_map(im)), 0);
	cr_expect_eq(sfs_map_dirty(sfs_image_map(im)), false);
	cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW, "a flush of the map under way");
	cr_assert_eq(sfs_map_flush_end(sfs_image_map(im)), 0);
	cr_assert_eq(sfs_image_fast_flush(im, &io), SFS_FAST_ISSUE, "the map is on disk now");
	cr_expect_eq(sfs_image_fast_end(&io, -EIO, &res), SFS_FAST_SLOW, "a failed fdatasync");
	cr_expect_eq(snap_of(im).flushes, 1, "not counted");
	sfs_image_set_growing(im, true);
	cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW, "a growing image settles its size");
	sfs_image_set_growing(im, false);
	sfs_image_need_ranges(im);
	cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW, "an image that takes ranges");
	cr_expect_eq(sfs_image_close(im), 0);
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
		struct sfs_image *im = open_keys(keys[k]);
		unsigned char *buf = abuf(8192);
		struct sfs_fast_io io;
		char err[256];
		ssize_t res = 7;

		cr_assert_eq(sfs_image_write(im, buf, 8192, 0), 8192, "%s", keys[k]);
		if (k == 1)
			cr_assert_eq(sfs_image_fail_attr_set(im, "bad_sectors", "+9", 2, err, sizeof(err)), 0, "%s", err);
		cr_expect_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW,
			     "%s: a write goes through the failure state's hooks", keys[k]);
		cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW,
			     "%s: a read goes through them too (a bad sector, power off)", keys[k]);
		cr_expect_eq(sfs_image_fast_flush(im, &io), SFS_FAST_SLOW, "%s: a flush destages the cache",
			     keys[k]);
		cr_expect_eq(res, 7);
		free(buf);
		cr_expect_eq(sfs_image_close(im), 0);
		tmpstore_destroy(&ts);
		tmpstore_make(&ts, "image", true);
	}
}

Test(image, fast_power_cut_by_attribute_makes_it_slow)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	char err[256];
	ssize_t res = 0;

	cr_assert_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_ISSUE);
	cr_assert_eq(transfer(&io, buf), 4096);
	cr_assert_eq(sfs_image_fast_end(&io, 4096, &res), SFS_FAST_DONE);
	cr_assert_eq(sfs_image_fail_attr_set(im, "power", "off", 3, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_image_fast_read(im, buf, 4096, 0, true, &io, &res), SFS_FAST_SLOW,
		     "a disk without power is the slow path's to refuse");
	cr_expect_eq(sfs_image_read(im, buf, 4096, 0), -EIO);
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, fast_requests_leave_the_stats_cell)
{
	struct sfs_image *im = open_img(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096);
	unsigned char *buf = abuf(8192);
	struct sfs_fast_io io;
	ssize_t res = 0;
	int packed = 0;

	cr_assert_eq(sfs_image_fast_write(im, buf, 4096, 0, true, &io, &res), SFS_FAST_ISSUE);
	for (int i = 0; i < 3; i++)
		packed |= sfs_image_stats_idle(im);
	cr_expect_eq(packed, 0, "stats are never packed under a transfer in flight");
	cr_assert_eq(transfer(&io, buf), 4096);
	cr_assert_eq(sfs_image_fast_end(&io, 4096, &res), SFS_FAST_DONE);
	cr_assert_eq(sfs_image_fast_read(im, buf, 512, 0, true, &io, &res), SFS_FAST_DONE, "misaligned: refused");
	cr_assert_eq(sfs_image_fast_read(im, buf, 4096, 2 * BS, true, &io, &res), SFS_FAST_ISSUE);
	cr_assert_eq(sfs_image_fast_end(&io, -EIO, &res), SFS_FAST_SLOW);
	for (int i = 0; i < 3 && !packed; i++)
		packed = sfs_image_stats_idle(im);
	cr_expect_eq(packed, 1, "with every request answered, the idle looks pack the stats");
	cr_expect_eq(snap_of(im).writes, 1, "and packing keeps what they counted");
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}
