/* SPDX-License-Identifier: MIT */
/*
 * test_storemake.c - unit tests of core/store/make.c: making an image and
 * inflating one through the store, as sectorfs-img create and inflate do.
 *
 * Make: the three files, the sidecar as given, the data of a raw file in
 * and its holes unallocated, eagerzeroedthick zeroed and recorded so in
 * the map, the phases reported in order ("copying", "zeroing", then NULL
 * before the commit) with progress ending at done == total; an existing
 * file of the image (sidecar, backing file or map) refuses it with
 * -EEXIST and is left as it was; a cancel from a phase or from the
 * progress, and a failing copy, leave nothing behind (no file, no record);
 * a failing make leaves a file someone renamed over its backing file
 * while it ran.
 * Inflate: data kept, every block allocated, map and sidecar say
 * eagerzeroedthick, the map is the same file (rewritten in place), the
 * store goes on serving the image (its sidecar is the store's); a second
 * inflate has nothing to do (0); a cancel leaves the image in its old mode with no
 * record; an image whose map says eagerzeroedthick while its sidecar says
 * another mode (a crash between the two) gets its sidecar fixed.
 * (Every step cut by a failure or a crash: test_steps.c.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "util/step_test.h"
#include "store/store.h"
#include "fixtures/tmpstore.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define BS (64 * KiB)

static struct tmpstore ts;
static struct logcap cap;

static void setup(void)
{
	tmpstore_make(&ts, "storemake", true);
	logcap_init(&cap);
}

static void teardown(void)
{
	tmpstore_destroy(&ts);
}

TestSuite(storemake, .init = setup, .fini = teardown, .timeout = 30);

/* ---- helpers ---- */

/* The store, opened lazily (as the tools open it), its log captured. */
static struct sfs_store *open_store(void)
{
	struct sfs_store_opts o = { .log = logcap_sink(&cap), .holder = "test_storemake", .lazy = true };
	struct sfs_store *s = NULL;
	char err[1024] = "";

	sfs_sidecar_defaults(&o.defaults);
	cr_assert_eq(sfs_store_open(ts.path, &o, &s, err, sizeof(err)), 0, "open: %s", err);
	return s;
}

static struct sfs_sidecar sidecar(enum sfs_prov prov)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.size = MiB;
	sc.lss = sc.pss = 4096;
	sc.block_size = BS;
	sc.prov = prov;
	return sc;
}

/* A 1 MiB raw file (memfd) holding v over [0, 4K) and [512K, 512K + 4K), holes elsewhere. */
static int raw_file(int v)
{
	unsigned char buf[4096];
	int fd = memfd_create("raw", 0);

	cr_assert_geq(fd, 0);
	memset(buf, v, sizeof(buf));
	cr_assert_eq(ftruncate(fd, MiB), 0);
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 512 * KiB), (ssize_t)sizeof(buf));
	return fd;
}

/* What the progress saw. */
struct seen {
	char phases[128];        /* "copying zeroing -" (- for NULL) */
	uint64_t done, total;
	unsigned calls;
	const char *cancel_phase;   /* cancel when this phase starts ("-" for NULL) */
	unsigned cancel_call;       /* cancel on this progress call (1-based), 0 never */
};

static int on_phase(void *ctx, const char *name)
{
	struct seen *w = ctx;
	const char *n = name ? name : "-";

	snprintf(w->phases + strlen(w->phases), sizeof(w->phases) - strlen(w->phases), "%s%s",
		 w->phases[0] ? " " : "", n);
	return w->cancel_phase && strcmp(w->cancel_phase, n) == 0;
}

static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct seen *w = ctx;

	cr_expect_leq(done, total);
	w->done = done;
	w->total = total;
	w->calls++;
	return w->cancel_call && w->calls >= w->cancel_call;
}

static struct sfs_image *get(struct sfs_store *s, const char *name)
{
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_store_lookup(s, name, &im, err, sizeof(err)), 0, "get %s: %s", name, err);
	return im;
}

/* The 4 KiB at off of im all read v. */
static void expect_bytes(struct sfs_image *im, uint64_t off, int v, const char *what)
{
	unsigned char got[4096], want[4096];

	memset(want, v, sizeof(want));
	cr_assert_eq(sfs_image_read(im, got, sizeof(got), off), (ssize_t)sizeof(got), "%s", what);
	cr_expect_eq(memcmp(got, want, sizeof(got)), 0, "%s: the 4 KiB at %llu do not all read 0x%02x", what,
		     (unsigned long long)off, v);
}

/* Nothing of image name in the store: no file, no record, no temporary file. */
static void expect_nothing(const char *name, const char *what)
{
	char f[64];

	cr_expect(!tmp_exists(ts.fd, name), "%s: backing file left", what);
	snprintf(f, sizeof(f), "%s.json", name);
	cr_expect(!tmp_exists(ts.fd, f), "%s: sidecar left", what);
	snprintf(f, sizeof(f), "%s.map", name);
	cr_expect(!tmp_exists(ts.statefd, f), "%s: map left", what);
	snprintf(f, sizeof(f), "%s.create", name);
	cr_expect(!tmp_exists(ts.statefd, f), "%s: record left", what);
	cr_expect_eq(count_tmp(ts.statefd), 0, "%s: temporary file left", what);
}

static enum sfs_prov sidecar_prov(const char *name)
{
	struct sfs_sidecar sc;
	char f[64], err[512] = "";

	snprintf(f, sizeof(f), "%s.json", name);
	cr_assert_eq(sfs_sidecar_load(ts.fd, f, &sc, err, sizeof(err)), 0, "%s", err);
	return sc.prov;
}

/* ---- make ---- */

Test(storemake, make_copies_the_raw_file_and_zeroes_eagerly)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK);
	struct seen w = { .calls = 0 };
	struct sfs_store_progress pr = { on_phase, on_progress, &w };
	struct sfs_store *s;
	struct sfs_image *im;
	const struct sfs_map_info *mi;
	char err[512] = "";
	int fd = raw_file(0x5c);

	s = open_store();
	cr_assert_eq(sfs_store_make_image(s, "m", &sc, fd, &pr, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_expect_str_eq(w.phases, "copying zeroing -");
	cr_expect_eq(w.done, w.total, "the progress ends at its total");
	cr_expect_eq(w.total, MiB - 2 * BS, "zeroing: what the copy left clear");
	cr_expect(!tmp_exists(ts.statefd, "m.create"), "the record stays");
	cr_expect_eq(sidecar_prov("m"), SFS_PROV_EAGERZEROEDTHICK);
	im = get(s, "m");
	mi = sfs_map_info(sfs_image_map(im));
	cr_expect_eq(mi->prov, SFS_PROV_EAGERZEROEDTHICK);
	cr_expect(mi->flags & SFS_MAP_F_ZEROED);
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), MiB / BS);
	expect_bytes(im, 0, 0x5c, "copied");
	expect_bytes(im, 512 * KiB, 0x5c, "copied");
	expect_bytes(im, 64 * KiB, 0, "a hole");
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storemake, make_keeps_holes_of_a_thin_image)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN);
	struct seen w = { .calls = 0 };
	struct sfs_store_progress pr = { on_phase, on_progress, &w };
	struct sfs_store *s = open_store();
	struct sfs_image *im;
	char err[512] = "";
	int fd = raw_file(0x5d);

	cr_assert_eq(sfs_store_make_image(s, "t", &sc, fd, &pr, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_expect_str_eq(w.phases, "copying -");
	im = get(s, "t");
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), 2, "only the data's blocks");
	cr_expect(sfs_map_test(sfs_image_map(im), 0) && sfs_map_test(sfs_image_map(im), 8));
	expect_bytes(im, 512 * KiB, 0x5d, "copied");
	sfs_store_put(s, im);
	/* without a raw file and a progress: no phase but the data's end */
	cr_assert_eq(sfs_store_make_image(s, "u", &sc, -1, NULL, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(tmp_stat(ts.fd, "u").st_size, (off_t)MiB);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storemake, make_never_overwrites)
{
	static const char *const files[] = { "x.json", "x", "x.map" };
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN);
	struct sfs_store *s = open_store();
	char err[512], buf[16];

	for (int i = 0; i < 3; i++) {
		int sfd = i == 2 ? ts.statefd : ts.fd;
		const char *f = files[i];

		tmp_write_file(sfd, f, "mine", 4);
		err[0] = '\0';
		cr_expect_eq(sfs_store_make_image(s, "x", &sc, -1, NULL, err, sizeof(err)), -EEXIST, "%s", files[i]);
		cr_expect(strstr(err, f) != NULL, "the message names %s: %s", f, err);
		cr_expect_eq(tmp_read_file(sfd, f, buf, sizeof(buf)), 4, "%s", files[i]);
		cr_expect_eq(memcmp(buf, "mine", 4), 0, "%s changed", files[i]);
		cr_assert_eq(unlinkat(sfd, f, 0), 0);
	}
	cr_expect_eq(sfs_store_make_image(s, "bad/name", &sc, -1, NULL, err, sizeof(err)), -EINVAL);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storemake, make_cancelled_or_failed_leaves_nothing)
{
	static const struct { const char *phase; unsigned call; } cuts[] = {
		{ "copying", 0 }, { "zeroing", 0 }, { "-", 0 }, { NULL, 1 }, { NULL, 3 },
	};
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK);
	struct sfs_store *s = open_store();
	char err[512], what[64];
	int fd = raw_file(0x5e);

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct seen w = { .cancel_phase = cuts[i].phase, .cancel_call = cuts[i].call };
		struct sfs_store_progress pr = { on_phase, on_progress, &w };

		snprintf(what, sizeof(what), "cancel at %s / call %u", cuts[i].phase ? cuts[i].phase : "",
			 cuts[i].call);
		cr_expect_eq(sfs_store_make_image(s, "c", &sc, fd, &pr, err, sizeof(err)), -ECANCELED, "%s", what);
		expect_nothing("c", what);
	}
	/* a raw file that cannot be read (opened write-only): the copy fails, and says so */
	close(fd);
	tmp_write_file(ts.statefd, "w.raw", "x", 1);
	fd = openat(ts.statefd, "w.raw", O_WRONLY);
	cr_assert_geq(fd, 0);
	err[0] = '\0';
	cr_expect_lt(sfs_store_make_image(s, "c", &sc, fd, NULL, err, sizeof(err)), 0);
	cr_expect(strstr(err, "copying the raw file failed") != NULL, "%s", err);
	expect_nothing("c", "failed copy");
	close(fd);
	unlinkat(ts.statefd, "w.raw", 0);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* A step hook that renames someone else's file over the image's backing file after make's step
 * foreign_at (2: the image made and open, 3: its record names it, 4: closed), then fails the
 * make there. */
static int foreign_at;

static int put_foreign(const char *op, int n)
{
	if (strcmp(op, "make") != 0 || n != foreign_at)
		return 0;
	tmp_write_file(ts.fd, "f.mine", "mine", 4);
	cr_assert_eq(renameat(ts.fd, "f.mine", ts.fd, "f"), 0);
	return -EIO;
}

Test(storemake, make_failing_leaves_a_file_put_under_its_name)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN);
	struct sfs_store *s = open_store();
	char err[512], buf[16], what[64];

	for (foreign_at = 2; foreign_at <= 4; foreign_at++) {
		snprintf(what, sizeof(what), "a file renamed over it after step %d", foreign_at);
		sfs_step_hook = put_foreign;
		err[0] = '\0';
		cr_expect_eq(sfs_store_make_image(s, "f", &sc, -1, NULL, err, sizeof(err)), -EIO, "%s", what);
		sfs_step_hook = NULL;
		cr_expect_eq(tmp_read_file(ts.fd, "f", buf, sizeof(buf)), 4, "%s: removed", what);
		cr_expect_eq(memcmp(buf, "mine", 4), 0, "%s: changed", what);
		cr_expect(!tmp_exists(ts.fd, "f.json"), "%s: a sidecar", what);
		cr_expect(!tmp_exists(ts.statefd, "f.create"), "%s: the record stays", what);
		cr_assert_eq(unlinkat(ts.fd, "f", 0), 0);
		unlinkat(ts.statefd, "f.map", 0);
	}
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- inflate ---- */

/* Image name of prov with 0x71 written at 0, through the store. */
static void make_with_data(struct sfs_store *s, const char *name, enum sfs_prov prov)
{
	struct sfs_sidecar sc = sidecar(prov);
	struct sfs_image *im;
	unsigned char buf[4096];
	char err[512] = "";

	cr_assert_eq(sfs_store_make_image(s, name, &sc, -1, NULL, err, sizeof(err)), 0, "%s", err);
	im = get(s, name);
	memset(buf, 0x71, sizeof(buf));
	cr_assert_eq(sfs_image_write(im, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	sfs_store_put(s, im);
}

Test(storemake, inflate_converts_in_place_and_keeps_data)
{
	struct sfs_store *s = open_store();
	struct seen w = { .calls = 0 };
	struct sfs_store_progress pr = { on_phase, on_progress, &w };
	struct sfs_image *im;
	const struct sfs_map_info *mi;
	struct stat before, after;
	char err[512] = "";

	make_with_data(s, "i", SFS_PROV_THIN);
	cr_assert_eq(fstatat(ts.statefd, "i.map", &before, 0), 0);
	im = get(s, "i");
	cr_assert_eq(sfs_store_inflate(s, im, &pr, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(w.phases, "zeroing -");
	cr_expect_eq(w.done, w.total);
	cr_expect_eq(w.total, MiB - BS);
	mi = sfs_map_info(sfs_image_map(im));
	cr_expect_eq(mi->prov, SFS_PROV_EAGERZEROEDTHICK);
	cr_expect(mi->flags & SFS_MAP_F_ZEROED);
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), MiB / BS);
	cr_expect_eq(sfs_image_sidecar(im).prov, SFS_PROV_EAGERZEROEDTHICK);
	expect_bytes(im, 0, 0x71, "data kept");
	expect_bytes(im, 4096, 0, "zeroed");
	sfs_store_put(s, im);
	cr_expect_eq(sidecar_prov("i"), SFS_PROV_EAGERZEROEDTHICK);
	cr_assert_eq(fstatat(ts.statefd, "i.map", &after, 0), 0);
	cr_expect_eq(after.st_ino, before.st_ino, "the map was replaced, not rewritten in place");
	cr_expect(!tmp_exists(ts.statefd, "i.inflate"), "the record stays");
	cr_expect_eq(count_tmp(ts.statefd), 0);
	/* still served, the store's own sidecar: and a second inflate has nothing to do */
	im = get(s, "i");
	cr_expect_eq(sfs_store_inflate(s, im, &pr, err, sizeof(err)), 0, "%s", err);
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
	s = open_store();
	im = get(s, "i");
	expect_bytes(im, 0, 0x71, "after a reopen");
	cr_expect_eq(sfs_map_info(sfs_image_map(im))->prov, SFS_PROV_EAGERZEROEDTHICK);
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storemake, inflate_cancelled_keeps_the_old_mode)
{
	struct sfs_store *s = open_store();
	struct seen w = { .cancel_call = 2 };
	struct sfs_store_progress pr = { on_phase, on_progress, &w };
	struct sfs_image *im;
	char err[512] = "";

	make_with_data(s, "z", SFS_PROV_ZEROEDTHICK);
	im = get(s, "z");
	cr_expect_eq(sfs_store_inflate(s, im, &pr, err, sizeof(err)), -ECANCELED);
	cr_expect_eq(sfs_map_info(sfs_image_map(im))->prov, SFS_PROV_ZEROEDTHICK);
	cr_expect_eq(sfs_image_sidecar(im).prov, SFS_PROV_ZEROEDTHICK);
	expect_bytes(im, 0, 0x71, "data kept");
	sfs_store_put(s, im);
	cr_expect_eq(sidecar_prov("z"), SFS_PROV_ZEROEDTHICK);
	cr_expect(!tmp_exists(ts.statefd, "z.inflate"), "a record left");
	cr_expect_eq(sfs_store_close(s), 0);
}

/* Fails inflate after step fail_inflate_at. */
static int fail_inflate_at;

static int fail_inflate(const char *op, int n)
{
	return strcmp(op, "inflate") == 0 && n == fail_inflate_at ? -EIO : 0;
}

Test(storemake, inflate_failing_says_why_and_what_comes_next)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im;
	char err[512];

	make_with_data(s, "y", SFS_PROV_THIN);
	im = get(s, "y");
	for (fail_inflate_at = 2; fail_inflate_at <= 3; fail_inflate_at++) {
		sfs_step_hook = fail_inflate;
		err[0] = '\0';
		cr_expect_eq(sfs_store_inflate(s, im, NULL, err, sizeof(err)), -EIO, "step %d", fail_inflate_at);
		sfs_step_hook = NULL;
		cr_expect(strstr(err, strerror(EIO)) != NULL, "step %d: %s", fail_inflate_at, err);
		/* past the map's commit (step 3), the record stays and the next start finishes */
		cr_expect_eq(strstr(err, "next start") != NULL, fail_inflate_at == 3, "step %d: %s",
			     fail_inflate_at, err);
		cr_expect_eq(tmp_exists(ts.statefd, "y.inflate"), fail_inflate_at == 3, "step %d: the record",
			     fail_inflate_at);
	}
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storemake, inflate_fixes_a_sidecar_left_behind)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im;
	char err[512] = "";

	make_with_data(s, "e", SFS_PROV_THIN);
	im = get(s, "e");
	cr_assert_eq(sfs_store_inflate(s, im, NULL, err, sizeof(err)), 0, "%s", err);
	sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
	/* a crash between the map and the sidecar, its record lost */
	tmp_write_sidecar(ts.fd, "e", "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\", "
			  "\"provisioning\": \"thin\"}");
	s = open_store();
	im = get(s, "e");
	cr_expect_eq(sfs_store_inflate(s, im, NULL, err, sizeof(err)), 0, "%s", err);
	sfs_store_put(s, im);
	cr_expect_eq(sidecar_prov("e"), SFS_PROV_EAGERZEROEDTHICK);
	cr_expect_eq(sfs_store_close(s), 0);
}
