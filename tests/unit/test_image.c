/*
 * test_image.c - unit tests of core/image.c: one disk image without FUSE.
 *
 * For every provisioning mode (thin, zeroedthick, eagerzeroedthick) and
 * sector format (512n, 512e, 4kn): open creates the backing file (sparse
 * or reserved), writes read back (checked against an in-memory model of
 * the whole disk), misaligned I/O is EINVAL, writes past the end are
 * ENOSPC and change nothing, reads past the end return 0 bytes.  The
 * zeroing contract: never-written blocks read as zeros whatever junk the
 * backing file holds, a first write zeroes the rest of its block on disk
 * (with zero offload on and off, and on tmpfs, which has no ZERO_RANGE),
 * one write over new and written blocks, discard frees thin blocks and zeroes
 * thick ones, write_zeroes and allocate, grow, close and reopen, the
 * recorded geometry winning over an edited sidecar, refused backing files
 * (symlink, hard link, FIFO, directory), import of a raw file with holes
 * (thin keeps them unallocated, thick reserves them),
 * resumed eager zeroing, map durability at flush, eight threads racing
 * on first writes to one block, and exact stats counters after known I/O.
 * Each test gets its own store directory (mkdtemp), removed by the fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "allocmap.h"
#include "image.h"
#include "sidecar.h"
#include "stats.h"
#include "tmpstore.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define BS (64 * KiB)                  /* block size of most tests */
#define NB 17                          /* blocks of SIZE: 16 whole and a half one */
#define SIZE (16 * BS + 32 * KiB)
#define NAME "disk"
#define JUNK 0xa5

static struct tmpstore ts, shm = { "", -1, -1 };
static struct logcap cap;
static struct sfs_log lg;

static void setup(void)
{
	tmpstore_make(&ts, "image", true);
	logcap_init(&cap);
	lg = logcap_sink(&cap);
}

static void teardown(void)
{
	tmpstore_destroy(&ts);
	tmpstore_destroy(&shm);
}

TestSuite(image, .init = setup, .fini = teardown, .timeout = 60);

/* ---- parameters ---- */

struct fmt {
	enum sfs_prov prov;
	uint32_t lss, pss;
	bool offload;
};

static const char *fmt_str(const struct fmt *f)
{
	static char s[64];

	snprintf(s, sizeof(s), "%s/%s/offload=%d", sfs_prov_name(f->prov), sfs_sector_name(f->lss, f->pss),
		 f->offload);
	return s;
}

/* Fill out with every prov in provs x every sector format x every offload in offs. */
static size_t make_fmts(struct fmt *out, const enum sfs_prov *provs, size_t nprov, const bool *offs,
			size_t noff)
{
	static const uint32_t sec[3][2] = { { 512, 512 }, { 512, 4096 }, { 4096, 4096 } };
	size_t n = 0;

	for (size_t p = 0; p < nprov; p++)
		for (size_t s = 0; s < 3; s++)
			for (size_t o = 0; o < noff; o++)
				out[n++] = (struct fmt){ provs[p], sec[s][0], sec[s][1], offs[o] };
	return n;
}

static const enum sfs_prov all_provs[] = { SFS_PROV_THIN, SFS_PROV_ZEROEDTHICK, SFS_PROV_EAGERZEROEDTHICK };
static const enum sfs_prov lazy_provs[] = { SFS_PROV_THIN, SFS_PROV_ZEROEDTHICK };
static const enum sfs_prov thick_provs[] = { SFS_PROV_ZEROEDTHICK, SFS_PROV_EAGERZEROEDTHICK };
static const enum sfs_prov thin_only[] = { SFS_PROV_THIN };
static const bool offload_on[] = { true };
static const bool offload_both[] = { true, false };

#define FMTS(provs, offs)                                                                  \
	do {                                                                               \
		static struct fmt f[3 * 3 * 2];                                            \
		size_t n = make_fmts(f, provs, sizeof(provs) / sizeof(provs[0]), offs,     \
				     sizeof(offs) / sizeof(offs[0]));                      \
		return cr_make_param_array(struct fmt, f, n);                              \
	} while (0)

/* ---- helpers ---- */

static struct sfs_sidecar sidecar(enum sfs_prov prov, uint32_t lss, uint32_t pss, uint64_t size,
				  uint64_t bs, bool offload)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.prov = prov;
	sc.lss = lss;
	sc.pss = pss;
	sc.size = size;
	sc.block_size = bs;
	sc.zero_offload = offload;
	return sc;
}

static struct sfs_sidecar sc_of(const struct fmt *f)
{
	return sidecar(f->prov, f->lss, f->pss, SIZE, BS, f->offload);
}

static struct sfs_image *open_as(const char *name, const struct sfs_sidecar *sc, bool stats)
{
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_image_open(ts.fd, ts.statefd, name, sc, stats, &lg, &im, err, sizeof(err)), 0,
		     "open %s: %s", name, err);
	cr_assert_not_null(im);
	return im;
}

static struct sfs_image *open_fmt(const struct fmt *f)
{
	struct sfs_sidecar sc = sc_of(f);

	return open_as(NAME, &sc, true);
}

/* A byte of test data: never zero, depends on the position and a seed. */
static unsigned char pat(uint64_t pos, unsigned seed)
{
	return (unsigned char)((pos * 131 + seed * 29 + pos / 4093) % 255 + 1);
}

static void fill(unsigned char *buf, size_t len, uint64_t off, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(off + i, seed);
}

/* Write len bytes of pattern seed at off, and apply them to the model. */
static void put(struct sfs_image *im, unsigned char *model, uint64_t off, size_t len, unsigned seed)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	fill(buf, len, off, seed);
	cr_assert_eq(sfs_image_write(im, buf, len, off), (ssize_t)len, "write %zu at %llu", len,
		     (unsigned long long)off);
	if (model)
		memcpy(model + off, buf, len);
	free(buf);
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return len;
}

/* Read [off, off+len) through the image and compare with the model. */
static void expect_model(struct sfs_image *im, const unsigned char *model, uint64_t off, size_t len,
			 const char *what)
{
	unsigned char *buf = malloc(len);
	size_t d;

	cr_assert_not_null(buf);
	memset(buf, 0x5a, len);
	cr_assert_eq(sfs_image_read(im, buf, len, off), (ssize_t)len, "%s: read", what);
	d = first_diff(buf, model + off, len);
	cr_expect_eq(d, len, "%s: disk byte %llu is 0x%02x, expected 0x%02x", what,
		     (unsigned long long)(off + d), d < len ? buf[d] : 0, d < len ? model[off + d] : 0);
	free(buf);
}

/* Read [off, off+len) through the image and expect zeros. */
static void expect_zero(struct sfs_image *im, uint64_t off, size_t len, const char *what)
{
	unsigned char *buf = malloc(len);
	size_t i = 0;

	cr_assert_not_null(buf);
	memset(buf, 0x5a, len);
	cr_assert_eq(sfs_image_read(im, buf, len, off), (ssize_t)len, "%s: read", what);
	while (i < len && buf[i] == 0)
		i++;
	cr_expect_eq(i, len, "%s: disk byte %llu is 0x%02x, expected 0", what,
		     (unsigned long long)(off + i), i < len ? buf[i] : 0);
	free(buf);
}

/* Bytes of the backing file (through its fd), compared with the model. */
static void expect_backing(struct sfs_image *im, const unsigned char *model, uint64_t off, size_t len,
			   const char *what)
{
	unsigned char *buf = malloc(len);
	size_t d;

	cr_assert_not_null(buf);
	cr_assert_eq(pread(sfs_image_fd(im), buf, len, (off_t)off), (ssize_t)len, "%s: pread", what);
	d = first_diff(buf, model + off, len);
	cr_expect_eq(d, len, "%s: backing byte %llu is 0x%02x, expected 0x%02x", what,
		     (unsigned long long)(off + d), d < len ? buf[d] : 0, d < len ? model[off + d] : 0);
	free(buf);
}

/* Write junk into the backing file behind the image's back. */
static void plant_junk(int fd, uint64_t off, size_t len)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	memset(buf, JUNK, len);
	cr_assert_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	free(buf);
}

static unsigned char *new_model(size_t len)
{
	unsigned char *m = calloc(1, len);

	cr_assert_not_null(m);
	return m;
}

static blkcnt_t backing_blocks(const char *name)
{
	return tmp_stat(ts.fd, name).st_blocks;
}

static struct sfs_stats_snap snap_of(struct sfs_image *im)
{
	struct sfs_stats_snap s;

	cr_assert_not_null(sfs_image_stats(im));
	sfs_stats_snapshot(sfs_image_stats(im), &s);
	return s;
}

static uint64_t count_of(struct sfs_image *im)
{
	return sfs_map_count(sfs_image_map(im));
}

static bool bit(struct sfs_image *im, uint64_t blk)
{
	return sfs_map_test(sfs_image_map(im), blk);
}

/* ---- open ---- */

ParameterizedTestParameters(image, open_creates_backing)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, open_creates_backing)
{
	struct sfs_image *im = open_fmt(f);
	struct stat st = tmp_stat(ts.fd, NAME), ist;
	struct sfs_geom g = sfs_image_geom(im);
	struct sfs_stats_info info;
	const char *d = fmt_str(f);

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

ParameterizedTestParameters(image, write_read_round_trip)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, write_read_round_trip)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	const char *d = fmt_str(f);

	put(im, model, 0, l, 1);                          /* first sector */
	put(im, model, BS - l, 2 * l, 2);                 /* across blocks 0 and 1 */
	put(im, model, 5 * BS + l, 3 * BS, 3);            /* over three blocks, unaligned to them */
	put(im, model, SIZE - l, l, 4);                   /* last sector, in the partial block */
	put(im, model, 5 * BS + 2 * l, l, 5);             /* overwrite inside written data */
	put(im, model, 12 * BS, BS, 6);                   /* one whole block */
	expect_model(im, model, 0, SIZE, d);
	/* reads of other shapes see the same bytes */
	expect_model(im, model, BS - l, 2 * l, d);
	expect_model(im, model, 6 * BS, l, d);
	expect_model(im, model, 4 * BS, 5 * BS, d);
	cr_expect_eq(sfs_image_write(im, model, 0, 0), 0, "%s: zero-length write", d);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, misaligned_is_einval)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, misaligned_is_einval)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), buf[3 * 4096];
	uint32_t l = f->lss;
	uint64_t before = count_of(im);
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, write_past_end_changes_nothing)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, write_past_end_changes_nothing)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), *buf = malloc(2 * BS);
	uint32_t l = f->lss;
	uint64_t before = count_of(im);
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, reads_at_and_past_end)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, reads_at_and_past_end)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE), buf[4 * 4096];
	uint32_t l = f->lss;
	const char *d = fmt_str(f);

	put(im, model, SIZE - l, l, 9);
	cr_expect_eq(sfs_image_read(im, buf, l, SIZE), 0, "%s", d);
	cr_expect_eq(sfs_image_read(im, buf, l, SIZE + BS), 0, "%s", d);
	cr_expect_eq(sfs_image_read(im, buf, 0, 0), 0, "%s", d);
	memset(buf, 0, sizeof(buf));
	cr_expect_eq(sfs_image_read(im, buf, 4 * l, SIZE - l), (ssize_t)l, "%s: shortened", d);
	cr_expect_eq(memcmp(buf, model + SIZE - l, l), 0, "%s", d);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- the zeroing contract ---- */

ParameterizedTestParameters(image, never_written_reads_zero_over_junk)
{
	FMTS(lazy_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, never_written_reads_zero_over_junk)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	const char *d = fmt_str(f);

	plant_junk(sfs_image_fd(im), 0, SIZE);
	expect_model(im, model, 0, SIZE, d);
	put(im, model, 2 * BS + 4096, f->lss, 3);
	expect_model(im, model, 0, SIZE, d);
	cr_expect_eq(count_of(im), 1, "%s", d);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, never_written_reads_zero_through_the_path_too)
{
	/* junk planted by opening STORE/NAME directly, as another program would */
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 512, 4096, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);
	int fd = openat(ts.fd, NAME, O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	plant_junk(fd, 3 * BS, BS);
	close(fd);
	expect_zero(im, 3 * BS, BS, "zeroedthick/512e");
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, partial_first_write_zeroes_the_block)
{
	FMTS(lazy_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, partial_first_write_zeroes_the_block)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, one_write_over_mixed_blocks)
{
	FMTS(lazy_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, one_write_over_mixed_blocks)
{
	/* one write crossing new, written, new, written, new blocks, junk under the new ones */
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	const char *d = fmt_str(f);

	put(im, model, 8 * BS, BS, 1);
	put(im, model, 10 * BS + l, l, 2);
	plant_junk(sfs_image_fd(im), 7 * BS, BS);
	plant_junk(sfs_image_fd(im), 9 * BS, BS);
	plant_junk(sfs_image_fd(im), 11 * BS, BS);
	put(im, model, 7 * BS + BS / 2, 4 * BS, 3);     /* 7.5 .. 11.5 */
	cr_expect_eq(count_of(im), 5, "%s", d);
	expect_model(im, model, 0, SIZE, d);
	expect_backing(im, model, 7 * BS, 5 * BS, d);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, zeroing_without_zero_range_support)
{
	/* tmpfs has no FALLOC_FL_ZERO_RANGE: zeroing falls back to writing zeros, said once */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- discard, write_zeroes, allocate ---- */

ParameterizedTestParameters(image, discard_frees_thin_blocks)
{
	FMTS(thin_only, offload_both);
}

ParameterizedTest(struct fmt *f, image, discard_frees_thin_blocks)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	blkcnt_t before;
	const char *d = fmt_str(f);

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
	cr_expect_eq(sfs_image_close(im), 0);
	im = open_fmt(f);
	cr_expect_eq(count_of(im), 2, "%s", d);
	expect_model(im, model, 0, SIZE, d);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, discard_zeroes_thick_blocks)
{
	FMTS(thick_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, discard_zeroes_thick_blocks)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint64_t cnt;
	blkcnt_t before;
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, write_zeroes)
{
	FMTS(all_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, write_zeroes)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	uint64_t cnt;
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

ParameterizedTestParameters(image, allocate)
{
	FMTS(all_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, allocate)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint32_t l = f->lss;
	blkcnt_t before = backing_blocks(NAME);
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- grow ---- */

ParameterizedTestParameters(image, grow)
{
	FMTS(all_provs, offload_both);
}

ParameterizedTest(struct fmt *f, image, grow)
{
	struct sfs_image *im = open_fmt(f);
	uint32_t l = f->lss;
	uint64_t nsize = SIZE + 2 * BS + 4096;     /* not a multiple of the block */
	uint64_t nnb = NB + 2;                      /* 18 whole blocks and 36K */
	unsigned char *model = new_model(nsize);
	struct sfs_sidecar sc;
	const char *d = fmt_str(f);

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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, sidecar_larger_than_image_grows_it)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4096, 4096, SIZE, BS, true);
	struct sfs_image *im = open_as(NAME, &sc, true);
	unsigned char *model = new_model(SIZE + 4 * BS);

	put(im, model, SIZE - 4096, 4096, 1);
	cr_expect_eq(sfs_image_close(im), 0);
	sc.size = SIZE + 4 * BS;
	im = open_as(NAME, &sc, true);
	cr_expect_eq(sfs_image_geom(im).size, SIZE + 4 * BS);
	cr_expect_eq(sfs_map_nblocks(sfs_image_map(im)), NB + 4);
	expect_model(im, model, 0, SIZE + 4 * BS, "thin/4kn");
	cr_expect_eq(sfs_image_close(im), 0);
}

/* ---- reopen ---- */

ParameterizedTestParameters(image, reopen_keeps_data_and_map)
{
	FMTS(all_provs, offload_on);
}

ParameterizedTest(struct fmt *f, image, reopen_keeps_data_and_map)
{
	struct sfs_image *im = open_fmt(f);
	unsigned char *model = new_model(SIZE);
	uint64_t cnt;
	const char *d = fmt_str(f);

	put(im, model, BS + f->lss, 2 * BS, 1);
	put(im, model, 9 * BS, f->lss, 2);
	cnt = count_of(im);
	cr_expect_eq(sfs_image_close(im), 0);
	im = open_fmt(f);
	cr_expect_eq(count_of(im), cnt, "%s", d);
	cr_expect(bit(im, 1) && bit(im, 2) && bit(im, 3) && bit(im, 9), "%s", d);
	expect_model(im, model, 0, SIZE, d);
	cr_expect_eq(logcap_level_lines(&cap, SFS_LOG_WARN), 0, "%s: no warning on a plain reopen: %s", d, cap.buf);
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
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
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", &ondisk, err, sizeof(err)), 0, "%s", err);
	cr_expect(!sfs_map_test(ondisk, 3), "not durable before the flush");
	sfs_map_close(ondisk);
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", &ondisk, err, sizeof(err)), 0, "%s", err);
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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
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

static void make_raw(const char *name, uint64_t size)
{
	unsigned char buf[4096];
	int fd = openat(ts.fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	fill(buf, sizeof(buf), 0, 1);
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	fill(buf, sizeof(buf), 5 * BS + 8192, 1);
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 5 * BS + 8192), (ssize_t)sizeof(buf));
	if (size >= SIZE) {
		fill(buf, sizeof(buf), SIZE - 4096, 1);
		cr_assert_eq(pwrite(fd, buf, sizeof(buf), SIZE - 4096), (ssize_t)sizeof(buf));
	}
	cr_assert_eq(fsync(fd), 0);
	close(fd);
}

static void model_raw(unsigned char *model, uint64_t size)
{
	fill(model, 4096, 0, 1);
	fill(model + 5 * BS + 8192, 4096, 5 * BS + 8192, 1);
	if (size >= SIZE)
		fill(model + SIZE - 4096, 4096, SIZE - 4096, 1);
}

Test(image, import_raw_file_with_holes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, SIZE, BS, true);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im;

	make_raw(NAME, SIZE);
	model_raw(model, SIZE);
	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), 3, "data blocks 0, 5, 16 and nothing else");
	cr_expect(bit(im, 0) && bit(im, 5) && bit(im, 16));
	cr_expect_eq(sfs_map_next_set(sfs_image_map(im), 1), 5);
	expect_model(im, model, 0, SIZE, "import");
	cr_expect_geq(logcap_lines(&cap, "import", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_image_close(im), 0);
	/* holes are unallocated: junk there does not show; the map persisted */
	{
		int fd = openat(ts.fd, NAME, O_RDWR | O_CLOEXEC);

		cr_assert_geq(fd, 0);
		plant_junk(fd, 2 * BS, BS);
		close(fd);
	}
	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), 3);
	expect_model(im, model, 0, SIZE, "import, reopened");
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, import_shorter_raw_file_is_extended)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im;

	make_raw(NAME, 8 * BS);
	model_raw(model, 8 * BS);
	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), 2);
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)SIZE);
	expect_model(im, model, 0, SIZE, "short import");
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, import_thick_reserves_the_holes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 512, 4096, SIZE, BS, true);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im;

	make_raw(NAME, SIZE);
	model_raw(model, SIZE);
	cr_assert_lt((uint64_t)backing_blocks(NAME) * 512, SIZE, "the raw file has holes");
	im = open_as(NAME, &sc, true);
	cr_expect_geq((uint64_t)backing_blocks(NAME) * 512, SIZE, "a zeroedthick image reserves all its space");
	cr_expect_eq(count_of(im), 3);
	expect_model(im, model, 0, SIZE, "thick import");
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, import_larger_raw_file_refused)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 512, 8 * BS, BS, true);
	struct sfs_image *im = NULL;
	char err[512] = "";

	make_raw(NAME, SIZE);
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, true, &lg, &im, err, sizeof(err)), -EINVAL);
	cr_expect_null(im);
	cr_expect(strstr(err, "'size'"), "'%s' should name the key 'size'", err);
	cr_expect_eq(tmp_stat(ts.fd, NAME).st_size, (off_t)SIZE, "the raw file is left alone");
}

Test(image, import_eagerzeroedthick_keeps_data)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 512, 512, SIZE, BS, false);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im;

	make_raw(NAME, SIZE);
	model_raw(model, SIZE);
	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), NB);
	cr_expect(sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED);
	expect_model(im, model, 0, SIZE, "eager import");
	expect_backing(im, model, 0, SIZE, "eager import");
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

Test(image, interrupted_eager_zeroing_resumes)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, 512, 4096, SIZE, BS, true);
	unsigned char *model = new_model(SIZE);
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_map *m = NULL;
	char err[256] = "";
	int fd;

	put(im, model, 0, 4096, 1);
	cr_expect_eq(sfs_image_close(im), 0);
	/* as if zeroing had stopped before block 2 and the flag was never set */
	cr_assert_eq(sfs_map_open(ts.statefd, NAME ".map", &m, err, sizeof(err)), 0, "%s", err);
	for (uint64_t b = 2; b < NB; b++)
		sfs_map_clear(m, b);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	cr_assert_eq(sfs_map_set_flags(m, 0), 0);
	sfs_map_close(m);
	fd = openat(ts.fd, NAME, O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	plant_junk(fd, 2 * BS, SIZE - 2 * BS);
	close(fd);

	im = open_as(NAME, &sc, true);
	cr_expect_eq(count_of(im), NB);
	cr_expect(sfs_map_info(sfs_image_map(im))->flags & SFS_MAP_F_ZEROED);
	expect_model(im, model, 0, SIZE, "resumed eager zeroing");
	expect_backing(im, model, 0, SIZE, "resumed eager zeroing");
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
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

struct reader {
	struct sfs_image *im;
	uint64_t *cur;
	int *done;
	uint64_t reads, bad_pos;
	int bad_byte, rc;
};

/* Byte expected at pos once every racer wrote: a racer's pattern or zero. */
static unsigned char race_final(uint64_t pos)
{
	uint64_t blk = pos / CBS;

	for (unsigned t = 0; t < NTHREAD; t++)
		if (pos >= racer_off(blk, t) && pos < racer_off(blk, t) + 4096)
			return pat(pos, t + 1);
	return 0;
}

/* Read the block under race again and again: every byte is zero or its final value, never junk. */
static void *race_reader(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(CBS);

	if (!buf) {
		r->rc = -ENOMEM;
		return NULL;
	}
	while (!__atomic_load_n(r->done, __ATOMIC_ACQUIRE) && r->bad_byte < 0) {
		uint64_t b = __atomic_load_n(r->cur, __ATOMIC_ACQUIRE), base = b * CBS;

		if (sfs_image_read(r->im, buf, CBS, base) != (ssize_t)CBS) {
			r->rc = -EIO;
			break;
		}
		r->reads++;
		for (uint64_t i = 0; i < CBS; i++) {
			if (buf[i] && buf[i] != race_final(base + i)) {
				r->bad_pos = base + i;
				r->bad_byte = buf[i];
				break;
			}
		}
	}
	free(buf);
	return NULL;
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
	struct reader rd = { im, &cur, &done, 0, 0, -1, 0 };

	plant_junk(sfs_image_fd(im), 0, CBLOCKS * CBS);
	pthread_barrier_init(&go, NULL, NTHREAD);
	cr_assert_eq(pthread_create(&rth, NULL, race_reader, &rd), 0);
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
	cr_expect_eq(rd.rc, 0, "reader: a read failed");
	cr_expect_eq(rd.bad_byte, -1, "a concurrent reader saw 0x%02x at %llu: neither zero nor written data",
		     rd.bad_byte, (unsigned long long)rd.bad_pos);
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
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
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
