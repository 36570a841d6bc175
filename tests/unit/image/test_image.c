/* SPDX-License-Identifier: MIT */
/*
 * test_image.c - unit tests of core/image/io.c, part one: opening and I/O.
 *
 * For every provisioning mode (thin, zeroedthick, eagerzeroedthick) and
 * sector format (512n, 512e, 4kn): open creates the backing file (sparse
 * or reserved), writes read back (checked against an in-memory model of
 * the whole disk), misaligned I/O is EINVAL, writes past the end are
 * ENOSPC and change nothing, reads past the end return 0 bytes.  The
 * zeroing contract: never-written blocks read as zeros whatever junk the
 * backing file holds, a first write zeroes the rest of its block on disk
 * (with zero offload on and off, and on tmpfs, which has no ZERO_RANGE),
 * one write over new and written blocks, discard frees thin blocks and
 * zeroes thick ones, write_zeroes and allocate.  Part two is
 * test_image_life.c.  Each test gets its own store directory (mkdtemp).
 */
#include "fixtures/image_fixture.h"

/* ---- open ---- */

FMT_TEST(open_creates_backing, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	struct stat st = tmp_stat(ts.fd, NAME), ist;
	struct sfs_geom g = sfs_image_geom(im);
	struct sfs_stats_info info;

	cr_expect(S_ISREG(st.st_mode), "%s", d);
	cr_expect_eq(st.st_size, (off_t)SIZE, "%s", d);
	if (f->prov == SFS_PROV_THIN)
		cr_expect_eq(st.st_blocks, 0, "%s: a thin backing file must be sparse", d);
	else
		cr_expect_geq((uint64_t)st.st_blocks * 512, SIZE, "%s: thick space must be reserved", d);
	cr_expect(tmp_exists(ts.statefd, NAME ".map"), "%s: map in the state directory", d);
	cr_expect_eq(g.size, SIZE);
	cr_expect_eq(g.lss, f->lss);
	cr_expect_eq(g.pss, f->pss);
	cr_expect_eq(g.block_size, BS);
	cr_expect_eq(sfs_map_nblocks(sfs_image_map(im)), NB);
	if (f->prov == SFS_PROV_EAGERZEROEDTHICK) {
		cr_expect_eq(count_of(im), NB, "%s: eager zeroing marks every block", d);
		cr_expect(sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED, "%s", d);
	} else {
		cr_expect_eq(count_of(im), 0, "%s", d);
	}
	cr_assert_eq(sfs_image_stat(im, &ist), 0);
	cr_expect_eq(ist.st_size, (off_t)SIZE);
	cr_expect_eq(ist.st_blksize, (blksize_t)f->pss);
	cr_expect_str_eq(sfs_image_name(im), NAME);
	cr_expect_eq(sfs_image_sidecar(im).prov, f->prov);
	sfs_image_stats_info(im, &info);
	cr_expect_eq(info.total_blocks, NB);
	cr_expect_eq(info.allocated_blocks, count_of(im));
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, stats_only_when_asked)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, false);

	cr_expect_null(sfs_image_stats(im));
	put(im, NULL, 0, 512, 1);               /* recording into no stats must not crash */
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, empty_disk)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, 0, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);
	char buf[512];

	cr_expect_eq(sfs_image_geom(im).size, 0);
	cr_expect_eq(sfs_image_read(im, buf, sizeof(buf), 0), 0);
	cr_expect_eq(sfs_image_write(im, buf, sizeof(buf), 0), -ENOSPC);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- reads and writes ---- */

FMT_TEST(write_read_round_trip, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;

	/* writes (each of its own pattern), then reads of other shapes */
	const struct { uint64_t off, len; } w[] = {
		{ 0, l },                                 /* first sector */
		{ BS - l, 2 * l },                        /* across blocks 0 and 1 */
		{ 5 * BS + l, 3 * BS },                   /* over three blocks, unaligned to them */
		{ SIZE - l, l },                          /* last sector, in the partial block */
		{ 5 * BS + 2 * l, l },                    /* overwrite inside written data */
		{ 12 * BS, BS },                          /* one whole block */
	}, r[] = { { 0, SIZE }, { BS - l, 2 * l }, { 6 * BS, l }, { 4 * BS, 5 * BS } };

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		put(im, model, w[i].off, w[i].len, i + 1);
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		expect_model(im, model, r[i].off, r[i].len, d);
	cr_expect_eq(sfs_image_write(im, model, 0, 0), 0, "%s: zero-length write", d);
	close_model(im, model);
}

FMT_TEST(misaligned_is_einval, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), buf[3 * 4096];
	uint32_t l = f->lss;
	uint64_t before = count_of(im);

	memset(buf, 0x77, sizeof(buf));
	cr_expect_eq(sfs_image_write(im, buf, l, l / 2), -EINVAL, "%s", d);
	cr_expect_eq(sfs_image_write(im, buf, l + l / 2, 0), -EINVAL, "%s", d);
	cr_expect_eq(sfs_image_write(im, buf, l, 1), -EINVAL, "%s", d);
	if (l == 4096)
		cr_expect_eq(sfs_image_write(im, buf, 4096, 512), -EINVAL, "%s: 512-aligned is not enough", d);
	cr_expect_eq(sfs_image_read(im, buf, l, l / 2), -EINVAL, "%s", d);
	cr_expect_eq(sfs_image_read(im, buf, l / 2, 0), -EINVAL, "%s", d);
	cr_expect_eq(sfs_image_discard(im, l / 2, l), -EINVAL, "%s", d);
	cr_expect_eq(sfs_image_write_zeroes(im, 0, l / 2), -EINVAL, "%s", d);
	/* misaligned and past the end: alignment is checked first */
	cr_expect_eq(sfs_image_write(im, buf, l, SIZE + l / 2), -EINVAL, "%s", d);
	cr_expect_eq(count_of(im), before, "%s: nothing allocated", d);
	expect_model(im, model, 0, SIZE, d);
	close_model(im, model);
}

FMT_TEST(write_past_end_changes_nothing, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), *buf = malloc(2 * BS);
	uint32_t l = f->lss;
	uint64_t before = count_of(im);

	cr_assert_not_null(buf);
	memset(buf, 0x77, 2 * BS);
	cr_expect_eq(sfs_image_write(im, buf, 2 * l, SIZE - l), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_write(im, buf, 2 * BS, SIZE - BS), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_write(im, buf, l, SIZE), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_write(im, buf, l, SIZE + BS), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_write_zeroes(im, SIZE - l, 2 * l), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_discard(im, SIZE - l, 2 * l), -ENOSPC, "%s", d);
	cr_expect_eq(count_of(im), before, "%s: no block allocated by a refused write", d);
	expect_model(im, model, 0, SIZE, d);
	expect_backing(im, model, SIZE - 2 * BS, 2 * BS, d);
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)SIZE, "%s: backing file not extended", d);
	free(buf);
	close_model(im, model);
}

FMT_TEST(reads_at_and_past_end, all_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), buf[4 * 4096];
	uint32_t l = f->lss;

	put(im, model, SIZE - l, l, 9);
	cr_expect_eq(sfs_image_read(im, buf, l, SIZE), 0, "%s", d);
	cr_expect_eq(sfs_image_read(im, buf, l, SIZE + BS), 0, "%s", d);
	cr_expect_eq(sfs_image_read(im, buf, 0, 0), 0, "%s", d);
	memset(buf, 0, sizeof(buf));
	cr_expect_eq(sfs_image_read(im, buf, 4 * l, SIZE - l), (ssize_t)l, "%s: shortened", d);
	cr_expect_eq(memcmp(buf, model + SIZE - l, l), 0, "%s", d);
	close_model(im, model);
}

/* ---- the zeroing contract ---- */

FMT_TEST(never_written_reads_zero_over_junk, lazy_provs, offload_on)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);

	plant_junk(sfs_image_fd(im), 0, SIZE);
	expect_model(im, model, 0, SIZE, d);
	put(im, model, 2 * BS + 4096, f->lss, 3);
	expect_model(im, model, 0, SIZE, d);
	cr_expect_eq(count_of(im), 1, "%s", d);
	close_model(im, model);
}

Test(image, never_written_reads_zero_through_the_path_too)
{
	/* junk planted by opening STORE/NAME directly, as another program would */
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 512, 4096, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);

	plant_junk_in_file(3 * BS, BS);
	expect_zero(im, 3 * BS, BS, "zeroedthick/512e");
	cr_expect_eq(sfs_image_close(im), 0);
}

FMT_TEST(partial_first_write_zeroes_the_block, lazy_provs, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;

	plant_junk(sfs_image_fd(im), 3 * BS, BS);         /* a whole block of junk */
	plant_junk(sfs_image_fd(im), 16 * BS, SIZE - 16 * BS);
	put(im, model, 3 * BS + 2 * l, l, 7);             /* one sector in its middle */
	put(im, model, 16 * BS + l, l, 8);                /* and in the partial last block */
	expect_model(im, model, 3 * BS, BS, d);
	expect_model(im, model, 16 * BS, SIZE - 16 * BS, d);
	/* the zeroing happened in the backing file, not only in what reads show */
	expect_backing(im, model, 3 * BS, BS, d);
	expect_backing(im, model, 16 * BS, SIZE - 16 * BS, d);
	cr_expect(bit(im, 3) && bit(im, 16), "%s", d);
	cr_expect_eq(count_of(im), 2, "%s", d);
	close_model(im, model);
}

Test(image, first_write_over_two_blocks_zeroes_both_ends)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, false);
	struct sfs_image *im = open_as(NAME, &sc, true);
	unsigned char *model = new_model(SIZE);

	plant_junk(sfs_image_fd(im), 4 * BS, 2 * BS);
	put(im, model, 5 * BS - 1024, 2048, 1);
	expect_backing(im, model, 4 * BS, 2 * BS, "thin/512n");
	expect_model(im, model, 0, SIZE, "thin/512n");
	cr_expect_eq(count_of(im), 2);
	close_model(im, model);
}

FMT_TEST(one_write_over_mixed_blocks, lazy_provs, offload_both)
{
	/* one write crossing new, written, new, written, new blocks, junk under the new ones */
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;

	put(im, model, 8 * BS, BS, 1);
	put(im, model, 10 * BS + l, l, 2);
	plant_junk(sfs_image_fd(im), 7 * BS, BS);
	plant_junk(sfs_image_fd(im), 9 * BS, BS);
	plant_junk(sfs_image_fd(im), 11 * BS, BS);
	put(im, model, 7 * BS + BS / 2, 4 * BS, 3);     /* 7.5 .. 11.5 */
	cr_expect_eq(count_of(im), 5, "%s", d);
	expect_model(im, model, 0, SIZE, d);
	expect_backing(im, model, 7 * BS, 5 * BS, d);
	close_model(im, model);
}

Test(image, zeroing_without_zero_range_support)
{
	/* tmpfs has no FALLOC_FL_ZERO_RANGE: zeroing falls back to writing zeros, said once */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	struct sfs_stats_info info;
	struct sfs_image *im = NULL;
	unsigned char *model = new_model(SIZE);
	char err[512] = "";
	struct stat st;

	if (stat("/dev/shm", &st) < 0 || !S_ISDIR(st.st_mode))
		cr_skip_test("no /dev/shm");
	tmpstore_make_in(&shm, "/dev/shm", "image", true);
	cr_assert_eq(sfs_image_open(shm.fd, shm.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err)), 0,
		     "%s", err);
	if (fallocate(sfs_image_fd(im), FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0) {
		sfs_image_close(im);
		cr_skip_test("/dev/shm supports ZERO_RANGE here");
	}
	plant_junk(sfs_image_fd(im), 0, SIZE);
	put(im, model, 2 * BS + 4096, 4096, 1);
	put(im, model, 5 * BS, 4096, 2);
	cr_expect_eq(sfs_image_write_zeroes(im, 5 * BS, 4096), 0);
	memset(model + 5 * BS, 0, 4096);
	expect_model(im, model, 0, SIZE, "tmpfs");
	expect_backing(im, model, 2 * BS, BS, "tmpfs");
	expect_backing(im, model, 5 * BS, BS, "tmpfs");
	cr_expect_eq(logcap_lines(&cap, "ZERO_RANGE", NULL, NULL), 1, "said once: %s", cap.buf);
	cr_expect_eq(snap_of(im).zeroed_bytes, 2 * (BS - 4096) + 4096);
	sfs_image_stats_info(im, &info);
	cr_expect(info.zero_offload, "the sidecar's setting");
	cr_expect_eq(info.zero_offload_fallback, EOPNOTSUPP, "and why it is not in force");
	close_model(im, model);
}

Test(image, zero_range_probe_says_what_the_store_filesystem_does)
{
	/* tmpfs has no FALLOC_FL_ZERO_RANGE, ext4 and XFS have it; known before any zeroing */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	struct sfs_stats_info info;
	struct sfs_image *im = NULL;
	char err[512] = "";
	int why = -1, fd;
	struct stat st;

	if (stat("/dev/shm", &st) < 0 || !S_ISDIR(st.st_mode))
		cr_skip_test("no /dev/shm");
	tmpstore_make_in(&shm, "/dev/shm", "image", true);
	tmp_write_file(shm.fd, "probe", "", 0);
	fd = openat(shm.fd, "probe", O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0)
		cr_skip_test("/dev/shm supports ZERO_RANGE here");
	close(fd);
	unlinkat(shm.fd, "probe", 0);
	cr_expect_eq(sfs_zero_range_probe(shm.fd, &why), 0);
	cr_expect_eq(why, EOPNOTSUPP);
	cr_expect_not(tmp_exists(shm.fd, "probe"), "nothing left in the directory");
	cr_assert_eq(sfs_image_open(shm.fd, shm.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err)), 0,
		     "%s", err);
	sfs_image_stats_info(im, &info);
	cr_expect_eq(info.zero_offload_fallback, EOPNOTSUPP, "known at open, before any zeroing");
	cr_expect_eq(logcap_lines(&cap, "has no FALLOC_FL_ZERO_RANGE (Operation not supported)", NULL, NULL), 1,
		     "%s", cap.buf);
	sfs_image_close(im);
	sc.zero_offload = false;
	cr_assert_eq(sfs_image_open(shm.fd, shm.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err)), 0,
		     "%s", err);
	sfs_image_stats_info(im, &info);
	cr_expect_eq(info.zero_offload_fallback, 0, "zero_offload false: nothing fell back");
	sfs_image_close(im);
}

Test(image, zero_range_probe_on_a_filesystem_that_has_it)
{
	struct sfs_stats_info info;
	struct sfs_image *im = open_fmt(&(struct fmt){ SFS_PROV_THIN, 512, 4096, true });
	int why = -1, fd;

	fd = openat(ts.fd, "probe", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0)
		cr_skip_test("the test store's filesystem has no ZERO_RANGE");
	close(fd);
	cr_expect_eq(sfs_zero_range_probe(ts.fd, &why), 0);
	cr_expect_eq(why, 0);
	sfs_image_stats_info(im, &info);
	cr_expect(info.zero_offload && info.zero_offload_fallback == 0);
	sfs_image_close(im);
}

/* ---- discard, write_zeroes, allocate ---- */

FMT_TEST(discard_frees_thin_blocks, thin_only, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	blkcnt_t before;

	put(im, model, BS, 4 * BS, 1);                    /* blocks 1..4 */
	put(im, model, 16 * BS, SIZE - 16 * BS, 2);       /* the partial last block */
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert_eq(count_of(im), 5);
	before = backing_blocks(NAME);

	cr_expect_eq(sfs_image_discard(im, BS, 2 * BS), 0, "%s", d);
	memset(model + BS, 0, 2 * BS);
	cr_expect_eq(count_of(im), 3, "%s: two whole blocks freed", d);
	cr_expect(!bit(im, 1) && !bit(im, 2) && bit(im, 3), "%s", d);
	cr_expect_lt(backing_blocks(NAME), before, "%s: backing space released", d);
	/* freed means "reads zero whatever the backing holds" */
	plant_junk(sfs_image_fd(im), BS, 2 * BS);
	expect_model(im, model, 0, SIZE, d);

	/* a partial discard zeroes its part and keeps the block */
	cr_expect_eq(sfs_image_discard(im, 3 * BS + l, 2 * l), 0, "%s", d);
	memset(model + 3 * BS + l, 0, 2 * l);
	cr_expect(bit(im, 3), "%s", d);
	expect_model(im, model, 0, SIZE, d);

	/* the partial last block is a whole block */
	cr_expect_eq(sfs_image_discard(im, 16 * BS, SIZE - 16 * BS), 0, "%s", d);
	memset(model + 16 * BS, 0, SIZE - 16 * BS);
	cr_expect(!bit(im, 16), "%s", d);
	cr_expect_eq(count_of(im), 2, "%s", d);

	/* never-written blocks: nothing to do */
	cr_expect_eq(sfs_image_discard(im, 8 * BS, 2 * BS), 0, "%s", d);
	cr_expect_eq(count_of(im), 2, "%s", d);
	expect_model(im, model, 0, SIZE, d);

	/* and it all survives close and reopen */
	im = reopen_expect(im, f, model, 2, d);
	close_model(im, model);
}

FMT_TEST(discard_zeroes_thick_blocks, thick_provs, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint64_t cnt;
	blkcnt_t before;

	put(im, model, BS, 3 * BS, 1);
	cr_assert_eq(sfs_image_flush(im), 0);
	cnt = count_of(im);
	before = backing_blocks(NAME);
	cr_expect_eq(sfs_image_discard(im, BS, 2 * BS), 0, "%s", d);
	memset(model + BS, 0, 2 * BS);
	expect_model(im, model, 0, SIZE, d);
	expect_backing(im, model, BS, 3 * BS, d);
	cr_expect_eq(count_of(im), cnt, "%s: thick blocks stay allocated", d);
	cr_expect(bit(im, 1) && bit(im, 2), "%s", d);
	cr_expect_geq(backing_blocks(NAME), before, "%s: thick space stays reserved", d);
	close_model(im, model);
}

FMT_TEST(write_zeroes, all_provs, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	uint64_t cnt;

	put(im, model, 0, 3 * BS, 1);
	cnt = count_of(im);
	cr_expect_eq(sfs_image_write_zeroes(im, l, BS), 0, "%s", d);
	memset(model + l, 0, BS);
	expect_model(im, model, 0, SIZE, d);
	expect_backing(im, model, 0, 3 * BS, d);
	cr_expect_eq(count_of(im), cnt, "%s", d);
	/* never written: stays unallocated on thin and zeroedthick */
	cr_expect_eq(sfs_image_write_zeroes(im, 6 * BS, 2 * BS), 0, "%s", d);
	cr_expect_eq(count_of(im), cnt, "%s", d);
	expect_model(im, model, 0, SIZE, d);
	cr_expect_eq(sfs_image_write_zeroes(im, 0, 0), 0, "%s", d);
	cr_expect_eq(sfs_image_write_zeroes(im, SIZE, l), -ENOSPC, "%s", d);
	close_model(im, model);
}

FMT_TEST(allocate, all_provs, offload_both)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	blkcnt_t before = backing_blocks(NAME);

	put(im, model, 2 * BS, BS, 1);
	if (f->prov != SFS_PROV_EAGERZEROEDTHICK)
		plant_junk(sfs_image_fd(im), 6 * BS, BS);
	/* a range inside block 6 allocates the whole block, zeroed */
	cr_expect_eq(sfs_image_allocate(im, 6 * BS + l, l), 0, "%s", d);
	cr_expect(bit(im, 6), "%s", d);
	expect_backing(im, model, 6 * BS, BS, d);
	/* allocating written data keeps it */
	cr_expect_eq(sfs_image_allocate(im, 2 * BS, BS), 0, "%s", d);
	expect_model(im, model, 0, SIZE, d);
	if (f->prov == SFS_PROV_THIN) {
		cr_expect_eq(count_of(im), 2, "%s", d);
		cr_expect_gt(backing_blocks(NAME), before, "%s", d);
	}
	cr_expect_eq(sfs_image_allocate(im, SIZE - l, 2 * l), -ENOSPC, "%s", d);
	cr_expect_eq(sfs_image_allocate(im, SIZE + BS, l), -ENOSPC, "%s", d);
	/* allocated blocks are durable at the next flush */
	cr_expect_eq(sfs_image_close(im), 0);
	im = open_fmt(f);
	cr_expect(bit(im, 6), "%s", d);
	expect_model(im, model, 0, SIZE, d);
	close_model(im, model);
}

/* ---- backing I/O: O_DIRECT, or buffered when asked ---- */

/* Pages of [off, off+len) of the backing file that are in the page cache. */
static size_t cached_pages(struct sfs_image *im, uint64_t off, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = len / pg, in = 0;
	unsigned char *vec = calloc(n, 1);
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, sfs_image_fd(im), (off_t)off);

	cr_assert_not_null(vec);
	cr_assert_neq(m, MAP_FAILED, "mmap: %s", strerror(errno));
	cr_assert_eq(mincore(m, len, vec), 0, "mincore: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	munmap(m, len);
	free(vec);
	return in;
}

Test(image, direct_backing_io_bypasses_the_page_cache)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 4096, 4096, SIZE, BS, true);
	struct sfs_image *im = open_flags(&sc, SFS_IMAGE_STATS);
	unsigned char *model = new_model(SIZE);

	if (!sfs_image_direct(im)) {
		sfs_image_close(im);
		cr_skip_test("the filesystem of /tmp has no O_DIRECT");
	}
	posix_fadvise(sfs_image_fd(im), 0, SIZE, POSIX_FADV_DONTNEED);
	put(im, model, 2 * BS, 4 * BS, 1);
	expect_model(im, model, 0, SIZE, "direct");
	cr_expect_eq(cached_pages(im, 0, 8 * BS), 0, "O_DIRECT writes and reads left pages in the page cache");
	cr_expect_eq(sfs_image_close(im), 0);

	/* asked for buffered I/O, the same writes land in the page cache */
	im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
	cr_expect_not(sfs_image_direct(im));
	put(im, model, 2 * BS, 4 * BS, 2);
	cr_expect_eq(cached_pages(im, 2 * BS, 4 * BS), 4 * BS / (size_t)sysconf(_SC_PAGESIZE));
	expect_model(im, model, 0, SIZE, "buffered");
	cr_expect_eq(sfs_image_close(im), 0);
	free(model);
}

/* The image's bounced_bytes counter now. */
static uint64_t bounced_bytes(struct sfs_image *im)
{
	struct sfs_stats_snap *snap = malloc(sizeof(*snap));
	uint64_t n;

	cr_assert_not_null(snap);
	sfs_stats_snapshot(sfs_image_stats(im), snap);
	n = snap->bounced_bytes;
	free(snap);
	return n;
}

Test(image, direct_backing_io_from_any_buffer)
{
	/* Callers' buffers are not aligned (FUSE hands data 80 bytes into its
	 * request buffer): they are copied through bounce buffers, in 1 MiB
	 * pieces; aligned ones go straight to the file.  A thin image, so first
	 * writes zero around the data through the same path. */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, false);
	struct sfs_image *im = open_flags(&sc, SFS_IMAGE_STATS);
	unsigned char *model = new_model(SIZE), *raw = malloc(SIZE + 128), *al = NULL;
	size_t big = MiB + 8 * KiB;

	if (!sfs_image_direct(im)) {
		sfs_image_close(im);
		cr_skip_test("the filesystem of /tmp has no O_DIRECT");
	}
	cr_assert_not_null(raw);
	cr_assert_eq(posix_memalign((void **)&al, 4096, SIZE), 0);
	for (unsigned k = 0; k < 2; k++) {
		unsigned char *buf = k ? al : raw + 80;
		uint64_t off = k ? 512 : 3 * 512, bounced = bounced_bytes(im);

		fill(buf, big, off, 3 + k);
		cr_assert_eq(sfs_image_write(im, buf, big, off), (ssize_t)big);
		memcpy(model + off, buf, big);
		memset(buf, 0, big);
		cr_assert_eq(sfs_image_read(im, buf, big, off), (ssize_t)big);
		cr_expect_eq(first_diff(buf, model + off, big), big, "%s buffer", k ? "aligned" : "unaligned");
		memset(buf, 0, SIZE);
		cr_assert_eq(sfs_image_read(im, buf, SIZE, 0), (ssize_t)SIZE);
		cr_expect_eq(first_diff(buf, model, SIZE), SIZE, "%s buffer, whole disk", k ? "aligned" : "unaligned");
		/* the copies are counted: every byte of the unaligned transfers, none of the aligned */
		if (k)
			cr_expect_eq(bounced_bytes(im), bounced, "aligned buffers bounced %llu bytes",
				     (unsigned long long)(bounced_bytes(im) - bounced));
		else
			cr_expect_geq(bounced_bytes(im), bounced + big, "unaligned buffers: bounced_bytes %llu",
				      (unsigned long long)bounced_bytes(im));
	}
	expect_backing(im, model, 0, 16 * BS, "backing");
	cr_expect_eq(sfs_image_close(im), 0);
	free(model);
	free(raw);
	free(al);
}
