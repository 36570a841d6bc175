/* SPDX-License-Identifier: MIT */
/*
 * image_fixture.h - what the two image test programs share: a temporary
 * store per test, the disk formats they run over, an in-memory model of
 * the disk and the helpers that compare an image with it.
 */
#ifndef SFS_IMAGE_FIXTURE_H
#define SFS_IMAGE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "map/map.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "stats/stats.h"
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

static inline void setup(void)
{
	tmpstore_make(&ts, "image", true);
	logcap_init(&cap);
	lg = logcap_sink(&cap);
}

static inline void teardown(void)
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

static inline const char *fmt_str(const struct fmt *f)
{
	static char s[64];

	snprintf(s, sizeof(s), "%s/%s/offload=%d", sfs_prov_name(f->prov), sfs_sector_name(f->lss, f->pss),
		 f->offload);
	return s;
}

/* Fill out with every prov in provs x every sector format x every offload in offs. */
static inline size_t make_fmts(struct fmt *out, const enum sfs_prov *provs, size_t nprov, const bool *offs,
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

/* A test of suite image run once per format of FMTS(provs, offs), the format in f. */
#define FMT_TEST(name, provs, offs)                                                        \
	ParameterizedTestParameters(image, name)                                           \
	{                                                                                  \
		FMTS(provs, offs);                                                         \
	}                                                                                  \
	ParameterizedTest(struct fmt *f, image, name)

/* ---- helpers ---- */

static inline struct sfs_sidecar sidecar(enum sfs_prov prov, uint32_t lss, uint32_t pss, uint64_t size,
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

static inline struct sfs_sidecar sc_of(const struct fmt *f)
{
	return sidecar(f->prov, f->lss, f->pss, SIZE, BS, f->offload);
}

static inline struct sfs_image *open_as(const char *name, const struct sfs_sidecar *sc, bool stats)
{
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_image_open(ts.fd, ts.statefd, name, sc, stats, &lg, &im, err, sizeof(err)), 0,
		     "open %s: %s", name, err);
	cr_assert_not_null(im);
	return im;
}

/* Open NAME with sfs_image_open flags (SFS_IMAGE_STATS, SFS_IMAGE_BUFFERED). */
static inline struct sfs_image *open_flags(const struct sfs_sidecar *sc, unsigned flags)
{
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_image_open(ts.fd, ts.statefd, NAME, sc, flags, &lg, &im, err, sizeof(err)), 0,
		     "open: %s", err);
	return im;
}

static inline struct sfs_image *open_fmt(const struct fmt *f)
{
	struct sfs_sidecar sc = sc_of(f);

	return open_as(NAME, &sc, true);
}

/* A byte of test data: never zero, depends on the position and a seed. */
static inline unsigned char pat(uint64_t pos, unsigned seed)
{
	return (unsigned char)((pos * 131 + seed * 29 + pos / 4093) % 255 + 1);
}

static inline void fill(unsigned char *buf, size_t len, uint64_t off, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(off + i, seed);
}

/* Write len bytes of pattern seed at off, and apply them to the model. */
static inline void put(struct sfs_image *im, unsigned char *model, uint64_t off, size_t len, unsigned seed)
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

static inline size_t first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return len;
}

/* Read [off, off+len) through the image and compare with the model. */
static inline void expect_model(struct sfs_image *im, const unsigned char *model, uint64_t off, size_t len,
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

/*
 * A reader thread beside writers (checker_run): until *stop, reads len bytes
 * at next(c) again and again, where every byte must be zero or want(its
 * position); expect_checked then says whether one was not.
 */
struct checker {
	struct sfs_image *im;
	int *stop;
	size_t len;
	uint64_t (*next)(struct checker *c);    /* the offset of the next read */
	unsigned char (*want)(uint64_t pos);
	void *arg;                              /* for next */
	uint64_t state;                         /* for next */
	uint64_t reads, bad_pos;
	int bad_byte, rc;
};

static inline void *checker_run(void *arg)
{
	struct checker *c = arg;
	unsigned char *buf = malloc(c->len);

	c->bad_byte = -1;
	c->rc = buf ? 0 : -ENOMEM;
	while (buf && !__atomic_load_n(c->stop, __ATOMIC_ACQUIRE) && c->bad_byte < 0) {
		uint64_t off = c->next(c);

		if (sfs_image_read(c->im, buf, c->len, off) != (ssize_t)c->len) {
			c->rc = -EIO;
			break;
		}
		c->reads++;
		for (size_t i = 0; i < c->len; i++) {
			if (buf[i] && buf[i] != c->want(off + i)) {
				c->bad_pos = off + i;
				c->bad_byte = buf[i];
				break;
			}
		}
	}
	free(buf);
	return NULL;
}

/* The checker c, joined: every read succeeded and saw only zeros or data. */
static inline void expect_checked(const struct checker *c, const char *what)
{
	cr_expect_eq(c->rc, 0, "%s: a read failed (%d)", what, c->rc);
	cr_expect_eq(c->bad_byte, -1, "%s saw 0x%02x at %llu: neither zero nor the data", what, c->bad_byte,
		     (unsigned long long)c->bad_pos);
}

/* Read [off, off+len) through the image and expect zeros. */
static inline void expect_zero(struct sfs_image *im, uint64_t off, size_t len, const char *what)
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
static inline void expect_backing(struct sfs_image *im, const unsigned char *model, uint64_t off, size_t len,
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
static inline void plant_junk(int fd, uint64_t off, size_t len)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	memset(buf, JUNK, len);
	cr_assert_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	free(buf);
}

static inline unsigned char *new_model(size_t len)
{
	unsigned char *m = calloc(1, len);

	cr_assert_not_null(m);
	return m;
}

/* The end of a test: the model freed and the image closed cleanly. */
static inline void close_model(struct sfs_image *im, unsigned char *model)
{
	free(model);
	cr_expect_eq(sfs_image_close(im), 0);
}

static inline blkcnt_t backing_blocks(const char *name)
{
	return tmp_stat(ts.fd, name).st_blocks;
}

static inline struct sfs_stats_snap snap_of(struct sfs_image *im)
{
	struct sfs_stats_snap s;

	cr_assert_not_null(sfs_image_stats(im));
	sfs_stats_snapshot(sfs_image_stats(im), &s);
	return s;
}

static inline uint64_t count_of(struct sfs_image *im)
{
	return sfs_map_count(sfs_image_map(im));
}

static inline bool bit(struct sfs_image *im, uint64_t blk)
{
	return sfs_map_test(sfs_image_map(im), blk);
}

#endif
