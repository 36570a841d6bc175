/* SPDX-License-Identifier: MIT */
/*
 * test_image_whole.c - unit tests of the whole-image operations of core
 * (sfs_image_fill and sfs_image_make_eager in core/image/zero.c,
 * sfs_image_import_raw in core/image/import.c, sfs_blocks_bytes in core/map/map.c),
 * without a mount.
 *
 * Fill: every clear block ends allocated and zero, written data stays,
 * progress ends at done == total, a cancel from the callback gives
 * -ECANCELED.  Import: the data extents of a sparse raw file are copied
 * and marked, its holes stay clear, a file bigger than the disk is
 * -EFBIG, a tail shorter than a sector is padded with zeros.  Making an
 * image eagerzeroedthick: the map header, rewritten in place (the same
 * file), says the new mode and flags, keeps the bits, and the image opens
 * again with it; it is refused while a block is clear.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sys/stat.h>

#include "image/image.h"
#include "fixtures/tmpstore.h"

#define K 1024ull
#define BS (64 * K)

static struct tmpstore st;

static void setup(void)
{
	tmpstore_make(&st, "image_whole", true);
}

static void teardown(void)
{
	tmpstore_destroy(&st);
}

TestSuite(image_whole, .init = setup, .fini = teardown);

static struct sfs_image *open_image(const char *name, uint64_t size, uint32_t lss, enum sfs_prov prov)
{
	struct sfs_sidecar sc;
	struct sfs_image *im = NULL;
	char err[512];

	sfs_sidecar_defaults(&sc);
	sc.size = size;
	sc.lss = sc.pss = lss;
	sc.block_size = BS;
	sc.prov = prov;
	cr_assert_eq(sfs_image_open(st.fd, st.statefd, name, &sc, false, NULL, &im, err, sizeof(err)), 0,
		     "open %s: %s", name, err);
	return im;
}

struct calls {
	unsigned n;
	uint64_t done, total;
	unsigned cancel_at;      /* cancel on this call (1-based), 0 never */
};

static int record(void *ctx, uint64_t done, uint64_t total)
{
	struct calls *c = ctx;

	c->n++;
	cr_expect_leq(done, total);
	cr_expect_geq(done, c->done, "progress went back");
	c->done = done;
	c->total = total;
	return c->cancel_at && c->n >= c->cancel_at;
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

Test(image_whole, blocks_bytes_clips_the_last_block)
{
	struct sfs_geom g = { 10 * BS + 4096, 512, 512, BS };

	cr_expect_eq(sfs_blocks_bytes(&g, 0, 11), g.size);
	cr_expect_eq(sfs_blocks_bytes(&g, 10, 11), 4096);
	cr_expect_eq(sfs_blocks_bytes(&g, 2, 4), 2 * BS);
	cr_expect_eq(sfs_blocks_bytes(&g, 3, 3), 0);
}

Test(image_whole, fill_allocates_every_block_and_keeps_data)
{
	struct sfs_image *im = open_image("d", 16 * BS + 4096, 512, SFS_PROV_THIN);
	struct sfs_map *m = sfs_image_map(im);
	struct calls c = { 0 };
	char *buf = malloc(16 * BS + 4096);

	memset(buf, 0xab, 4096);
	cr_assert_eq(sfs_image_write(im, buf, 4096, 3 * BS), 4096);
	/* junk in the backing file of a never-written block must not survive */
	cr_assert_eq(pwrite(sfs_image_fd(im), "junk", 4, 5 * BS), 4);
	cr_assert_eq(sfs_image_fill(im, record, &c), 0);
	cr_expect_eq(sfs_map_count(m), 17);
	cr_expect_eq(c.total, 16 * BS + 4096 - BS);
	cr_expect_eq(c.done, c.total);
	cr_expect_geq(c.n, 2);
	cr_assert_eq(sfs_image_read(im, buf, 16 * BS + 4096, 0), (ssize_t)(16 * BS + 4096));
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq((unsigned char)buf[3 * BS + i], 0xab);
	cr_expect(all_zero(buf, 3 * BS));
	cr_expect(all_zero(buf + 3 * BS + 4096, 13 * BS));
	cr_assert_eq(pread(sfs_image_fd(im), buf, 4, 5 * BS), 4);
	cr_expect(all_zero(buf, 4), "fill did not zero the backing file");
	free(buf);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image_whole, fill_cancelled_by_the_callback)
{
	struct sfs_image *im = open_image("d", 8 * BS, 512, SFS_PROV_THIN);
	struct calls c = { .cancel_at = 1 };

	cr_expect_eq(sfs_image_fill(im, record, &c), -ECANCELED);
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), 0);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image_whole, import_keeps_data_and_holes)
{
	struct sfs_image *im = open_image("d", 16 * BS, 4096, SFS_PROV_THIN);
	struct sfs_map *m = sfs_image_map(im);
	char *data = malloc(2 * BS), *got = malloc(16 * BS);
	struct calls c = { 0 };
	int fd = openat(st.fd, "raw", O_RDWR | O_CREAT | O_TRUNC, 0644);

	cr_assert_geq(fd, 0);
	for (size_t i = 0; i < 2 * BS; i++)
		data[i] = (char)(i * 7 + 1);
	cr_assert_eq(ftruncate(fd, 12 * BS + 1000), 0);
	cr_assert_eq(pwrite(fd, data, 2 * BS, 4 * BS), (ssize_t)(2 * BS));
	cr_assert_eq(pwrite(fd, data, 1000, 12 * BS), 1000);        /* tail: not a whole sector */
	cr_assert_eq(sfs_image_import_raw(im, fd, record, &c), 0);
	cr_expect_eq(c.done, c.total);
	for (uint64_t b = 0; b < 16; b++)
		cr_expect_eq(sfs_map_test(m, b), b == 4 || b == 5 || b == 12, "block %llu", (unsigned long long)b);
	cr_assert_eq(sfs_image_read(im, got, 16 * BS, 0), (ssize_t)(16 * BS));
	cr_expect(all_zero(got, 4 * BS));
	cr_expect_eq(memcmp(got + 4 * BS, data, 2 * BS), 0);
	cr_expect(all_zero(got + 6 * BS, 6 * BS));
	cr_expect_eq(memcmp(got + 12 * BS, data, 1000), 0);
	cr_expect(all_zero(got + 12 * BS + 1000, 4 * BS - 1000));
	cr_assert_eq(ftruncate(fd, 16 * BS + 1), 0);
	cr_expect_eq(sfs_image_import_raw(im, fd, NULL, NULL), -EFBIG);
	close(fd);
	free(data);
	free(got);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image_whole, make_eager_rewrites_the_map_header_in_place)
{
	struct sfs_image *im = open_image("d", 8 * BS, 512, SFS_PROV_ZEROEDTHICK);
	struct sfs_map *m;
	struct stat before, after;
	char buf[4096];

	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(sfs_image_write(im, buf, sizeof(buf), 2 * BS), (ssize_t)sizeof(buf));
	cr_expect_eq(sfs_image_make_eager(im), -EAGAIN, "blocks are clear");
	cr_assert_eq(fstatat(st.statefd, "d.map", &before, 0), 0);
	cr_assert_eq(sfs_image_fill(im, NULL, NULL), 0);
	cr_assert_eq(sfs_image_make_eager(im), 0);
	cr_expect_eq(sfs_image_sidecar(im).prov, SFS_PROV_EAGERZEROEDTHICK, "served as eagerzeroedthick");
	cr_expect_eq(sfs_image_close(im), 0);
	cr_expect_eq(count_tmp(st.statefd), 0);
	cr_assert_eq(fstatat(st.statefd, "d.map", &after, 0), 0);
	cr_expect_eq(after.st_ino, before.st_ino, "the map was replaced, not rewritten in place");
	m = tmp_map_open_ro(st.statefd, "d.map");
	cr_expect_eq(sfs_map_info(m)->prov, SFS_PROV_EAGERZEROEDTHICK);
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	cr_expect_eq(sfs_map_count(m), 8);
	sfs_map_close(m);
	im = open_image("d", 8 * BS, 512, SFS_PROV_EAGERZEROEDTHICK);
	cr_expect_eq(sfs_image_sidecar(im).prov, SFS_PROV_EAGERZEROEDTHICK);
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), 2 * BS), (ssize_t)sizeof(buf));
	cr_expect_eq((unsigned char)buf[4095], 0x5a);
	cr_expect_eq(sfs_image_close(im), 0);
}
