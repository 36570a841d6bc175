/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c - fault injection: the core library under failing I/O.
 *
 * This file defines the libc I/O functions the core library calls:
 * pwrite, pread, fallocate (each also under its 64-bit name, which is
 * what core references when built with -D_FILE_OFFSET_BITS=64: nm shows
 * pwrite64, pread64, fallocate64 and fdatasync) and fdatasync.  Being in
 * the executable, they come first for calls from core/ (linked in
 * statically); when no failure is armed they call the real function found
 * with dlsym(RTLD_NEXT).  fault_arm() makes calls fail with a chosen errno:
 * skip the next S calls of a function (or of all four), then fail the N
 * after them, optionally only on one file descriptor.
 *
 * Proves:
 *   - a write whose pwrite fails returns -EIO / -ENOSPC from
 *     sfs_image_write, for an overwrite and for a first write;
 *   - a first write whose zeroing (head or tail; by pwrite, or by
 *     fallocate(ZERO_RANGE) with zero offload) fails returns the error,
 *     leaves the block unallocated in the map, and the block still reads
 *     zeros, even over junk in the backing file; the retry then works;
 *   - a failing fdatasync (of the data, or of the map) and a failing
 *     pwrite of a map page make sfs_image_flush return the error; the map
 *     bits stay dirty, so a later flush with nothing new written persists
 *     them (checked by opening the map file again beside the image);
 *   - a failing pread returns -EIO from sfs_image_read, and reading a
 *     never-written block does not touch the backing file at all;
 *   - allocate, discard and write_zeroes pass errors through;
 *   - a sweep that fails the 1st, 2nd, 3rd... I/O call of a whole image
 *     life (create, first writes, overwrites, discard, write_zeroes,
 *     allocate, flush, grow, read, close), for every provisioning mode,
 *     zero offload on and off, EIO and ENOSPC: nothing crashes, every
 *     failing call returns exactly the injected error, and the image then
 *     opens again without faults, its map consistent and every sector
 *     reading zeros or data some write put there - never anything else;
 *   - the map's grow steps: a failed prepare leaves the file as it was, a
 *     failed commit leaves the map in memory as it was and its abort the
 *     file, which opens with the old size and grows later;
 *   - a failing fstat (or statx for the identity, fileid.h) of the backing
 *     file or of the map fails the open with
 *     its errno (not -EPERM or -EUCLEAN, which say the file is wrong); so
 *     does each fstat of a first open and of the reopen of an evicted image
 *     in turn (not -ENOENT, -EUCLEAN, nor a silent fall back to buffered
 *     I/O), and the open after them works;
 *   - a pwrite that writes nothing without setting errno (a short write)
 *     is -EIO for an image write, a journal or record (sfs_write_file_atomic)
 *     and the lock file's holder, never a success.
 *
 * SFS_FAULTS_TRACE=1 prints each call made to fail.
 *
 * map_grow_failure_keeps_map_openable guards a fixed bug: a grow whose map
 * needed a new bitmap page and failed after the map file was extended left
 * a map that sfs_map_open refused ("trailing data", -EUCLEAN).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "map/map_test.h"
#include "util/fdcache.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "stats/stats.h"
#include "store/store.h"
#include "util/tmpfile.h"
#include "fixtures/tmpstore.h"

#define KiB 1024ull
#define BS (64 * KiB)
#define NAME "disk"
#define JUNK 0xa5

/* ---- the overrides ---- */

enum fault_fn { F_PWRITE, F_PREAD, F_FALLOCATE, F_FDATASYNC, F_NFN, F_ANY = F_NFN };

static const char *const fn_names[F_NFN] = { "pwrite", "pread", "fallocate", "fdatasync" };

static struct {
	int which;              /* an enum fault_fn, or F_ANY */
	int fd;                 /* only calls on this fd, or -1 for all */
	unsigned skip;          /* matching calls to let through first */
	unsigned fail;          /* matching calls to fail after them */
	int err;
	unsigned hit;           /* calls failed so far */
} plan;

static unsigned calls[F_NFN];   /* calls seen per function (failed ones included) */

/* Fail n calls of fn (or F_ANY) on fd (-1: any) with err, after letting skip through. */
static void fault_arm(int fn, int fd, unsigned skip, unsigned n, int err)
{
	plan.which = fn;
	plan.fd = fd;
	plan.skip = skip;
	plan.fail = n;
	plan.err = err;
	plan.hit = 0;
	memset(calls, 0, sizeof(calls));
}

static void fault_off(void)
{
	plan.fail = 0;
	plan.skip = 0;
}

/* Count the call; true (errno set) when it is to fail. */
static bool fault_now(enum fault_fn fn, int fd)
{
	calls[fn]++;
	if (!plan.fail || (plan.which != F_ANY && plan.which != (int)fn) || (plan.fd >= 0 && plan.fd != fd))
		return false;
	if (plan.skip) {
		plan.skip--;
		return false;
	}
	plan.fail--;
	plan.hit++;
	if (getenv("SFS_FAULTS_TRACE"))
		fprintf(stderr, "test_faults: failing %s #%u on fd %d with %s\n", fn_names[fn], calls[fn], fd,
			strerror(plan.err));
	errno = plan.err;
	return true;
}

static void *real_fn(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "test_faults: dlsym(RTLD_NEXT, %s): %s\n", name, dlerror());
		abort();
	}
	return p;
}

#define REAL(type, name) ({                                         \
	static type real_##name;                                    \
	if (!real_##name)                                           \
		real_##name = (type)real_fn(#name);                 \
	real_##name;                                                \
})

typedef ssize_t (*pwrite_t)(int, const void *, size_t, off64_t);
typedef ssize_t (*pread_t)(int, void *, size_t, off64_t);
typedef int (*fallocate_t)(int, int, off64_t, off64_t);
typedef int (*fdatasync_t)(int);

/* The next short_writes pwrites write nothing and return 0 with errno 0 (outside the plan). */
static unsigned short_writes;

static bool short_now(void)
{
	if (!short_writes)
		return false;
	short_writes--;
	errno = 0;
	return true;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	if (short_now())
		return 0;
	return fault_now(F_PWRITE, fd) ? -1 : REAL(pwrite_t, pwrite64)(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	return fault_now(F_PREAD, fd) ? -1 : REAL(pread_t, pread64)(fd, buf, n, off);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	return fault_now(F_FALLOCATE, fd) ? -1 : REAL(fallocate_t, fallocate64)(fd, mode, off, len);
}

int fdatasync(int fd)
{
	return fault_now(F_FDATASYNC, fd) ? -1 : REAL(fdatasync_t, fdatasync)(fd);
}

/* The plain names too, for a build without -D_FILE_OFFSET_BITS=64 (there the
 * headers do not rename them; here they do, hence the asm labels). */
ssize_t fault_pwrite(int fd, const void *buf, size_t n, off_t off) __asm__("pwrite");
ssize_t fault_pread(int fd, void *buf, size_t n, off_t off) __asm__("pread");
int fault_fallocate(int fd, int mode, off_t off, off_t len) __asm__("fallocate");

/* Forwarded to the 64-bit ones above: the same plan, counters and short writes. */
ssize_t fault_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite64(fd, buf, n, off);
}

ssize_t fault_pread(int fd, void *buf, size_t n, off_t off)
{
	return pread64(fd, buf, n, off);
}

int fault_fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocate64(fd, mode, off, len);
}

/* fstat, outside the plan (the sweeps fail the four above): after fstat_skip calls let through,
 * the next fstat_fails calls fail with fstat_err.  Both names, as for the others. */
static unsigned fstat_skip, fstat_fails;
static int fstat_err;

typedef int (*fstat_t)(int, void *);

int fault_fstat64(int fd, void *st) __asm__("fstat64");
int fault_fstat(int fd, void *st) __asm__("fstat");

/* True (errno set to fstat_err) when this fstat is one of the next fstat_fails. */
static bool fstat_fail_now(void)
{
	if (!fstat_fails)
		return false;
	if (fstat_skip) {
		fstat_skip--;
		return false;
	}
	fstat_fails--;
	errno = fstat_err;
	return true;
}

/* Not forwarded like the others: fstat and fstat64 fill different structs on 32-bit. */
int fault_fstat64(int fd, void *st)
{
	return fstat_fail_now() ? -1 : REAL(fstat_t, fstat64)(fd, st);
}

int fault_fstat(int fd, void *st)
{
	return fstat_fail_now() ? -1 : REAL(fstat_t, fstat)(fd, st);
}

typedef int (*statx_t)(int, const char *, int, unsigned, struct statx *);

/* A statx of a descriptor for its identity (fileid.h: with the birth time) is the fstat of a
 * file an open looks at: the same counter. */
int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	if ((flags & AT_EMPTY_PATH) && !*path && (mask & STATX_BTIME) && fstat_fail_now())
		return -1;
	return REAL(statx_t, statx)(dirfd, path, flags, mask, sx);
}

/* ---- fixture and helpers ---- */

static struct tmpstore ts;
static struct logcap cap;
static struct sfs_log lg;

static void setup(void)
{
	fault_off();
	short_writes = fstat_skip = fstat_fails = 0;
	tmpstore_make(&ts, "faults", true);
	logcap_init(&cap);
	lg = logcap_sink(&cap);
}

static void teardown(void)
{
	fault_off();
	short_writes = fstat_skip = fstat_fails = 0;
	tmpstore_destroy(&ts);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 120);

static struct sfs_sidecar sidecar(enum sfs_prov prov, uint64_t size, bool offload)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.prov = prov;
	sc.lss = 512;
	sc.pss = 4096;
	sc.size = size;
	sc.block_size = BS;
	sc.zero_offload = offload;
	return sc;
}

/* Open (creating when missing) name; rc is returned, err kept in errbuf. */
static int try_open(const char *name, const struct sfs_sidecar *sc, struct sfs_image **im,
		    char *errbuf, size_t errlen)
{
	errbuf[0] = '\0';
	return sfs_image_open(ts.fd, ts.statefd, name, sc, true, &lg, im, errbuf, errlen);
}

static struct sfs_image *open_ok(const char *name, const struct sfs_sidecar *sc)
{
	struct sfs_image *im = NULL;
	char err[512];
	int rc = try_open(name, sc, &im, err, sizeof(err));

	cr_assert_eq(rc, 0, "open %s: %d %s", name, rc, err);
	return im;
}

/* Fill the backing file of name with junk (an image that was created, then junk planted). */
static void plant_junk(struct sfs_image *im, uint64_t off, uint64_t len)
{
	unsigned char *junk = malloc(len);

	cr_assert_not_null(junk);
	memset(junk, JUNK, len);
	cr_assert_eq(REAL(pwrite_t, pwrite64)(sfs_image_fd(im), junk, len, (off64_t)off), (ssize_t)len);
	free(junk);
}

/* Is block blk set in the map file on disk (opened again, beside the image's own handle)? */
static bool bit_on_disk(const char *name, uint64_t blk)
{
	char fname[300], err[512] = "";
	struct sfs_map *m = NULL;
	bool set;
	int rc;

	snprintf(fname, sizeof(fname), "%s.map", name);
	rc = sfs_map_open(ts.statefd, fname, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err));
	cr_assert_eq(rc, 0, "map_open %s: %d %s", fname, rc, err);
	set = sfs_map_test(m, blk);
	sfs_map_close(m);
	return set;
}

/* Every byte of [off, off+len) of the disk reads as v. */
static void expect_bytes(struct sfs_image *im, uint64_t off, uint64_t len, unsigned char v)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	cr_assert_eq(sfs_image_read(im, buf, len, off), (ssize_t)len);
	for (uint64_t i = 0; i < len; i++)
		cr_assert_eq(buf[i], v, "byte %llu reads 0x%02x, expected 0x%02x",
			     (unsigned long long)(off + i), buf[i], v);
	free(buf);
}

static ssize_t write_val(struct sfs_image *im, uint64_t off, uint64_t len, unsigned char v)
{
	unsigned char *buf = malloc(len);
	ssize_t n;

	cr_assert_not_null(buf);
	memset(buf, v, len);
	n = sfs_image_write(im, buf, len, off);
	free(buf);
	return n;
}

/* The stats' flush counter. */
static uint64_t flushes(struct sfs_image *im)
{
	static struct sfs_stats_snap snap;   /* large: keep it off the stack */

	sfs_stats_snapshot(sfs_image_stats(im), &snap);
	return snap.flushes;
}

/* ---- writes ---- */

static void overwrite_fails_with(int err)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);

	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	fault_arm(F_PWRITE, -1, 0, 1, err);
	cr_assert_eq(write_val(im, 4 * KiB, 4 * KiB, 0x22), -err, "overwrite under a failing pwrite");
	cr_assert_eq(plan.hit, 1);
	fault_off();
	expect_bytes(im, 0, BS, 0x11);
	cr_assert(sfs_map_test(sfs_image_map(im), 0));
	cr_assert_eq(sfs_image_close(im), 0);
}

Test(faults, overwrite_eio) { overwrite_fails_with(EIO); }
Test(faults, overwrite_enospc) { overwrite_fails_with(ENOSPC); }

/* A first write of a whole block (nothing to zero) whose data pwrite fails. */
static void first_write_data_fails_with(int err)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);

	plant_junk(im, BS, BS);
	fault_arm(F_PWRITE, -1, 0, 1, err);
	cr_assert_eq(write_val(im, BS, BS, 0x33), -err);
	cr_assert_eq(plan.hit, 1);
	fault_off();
	cr_assert_not(sfs_map_test(sfs_image_map(im), 1), "block marked allocated after a failed write");
	cr_assert_eq(sfs_map_count(sfs_image_map(im)), 0);
	expect_bytes(im, BS, BS, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

Test(faults, first_write_data_eio) { first_write_data_fails_with(EIO); }
Test(faults, first_write_data_enospc) { first_write_data_fails_with(ENOSPC); }

struct zcase {
	int fn;            /* F_PWRITE (offload off) or F_FALLOCATE (offload on) */
	unsigned skip;     /* 0: the head zeroing fails; 1: the tail zeroing */
	int err;
};

ParameterizedTestParameters(faults, first_write_zeroing_fails)
{
	static struct zcase c[] = {
		{ F_PWRITE, 0, EIO }, { F_PWRITE, 1, EIO }, { F_PWRITE, 0, ENOSPC }, { F_PWRITE, 1, ENOSPC },
		{ F_FALLOCATE, 0, EIO }, { F_FALLOCATE, 1, EIO }, { F_FALLOCATE, 0, ENOSPC },
		{ F_FALLOCATE, 1, ENOSPC },
	};

	return cr_make_param_array(struct zcase, c, sizeof(c) / sizeof(c[0]));
}

/* A 4 KiB write into the middle of a new block: head and tail must be zeroed first. */
ParameterizedTest(struct zcase *z, faults, first_write_zeroing_fails)
{
	bool offload = z->fn == F_FALLOCATE;
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, offload);
	struct sfs_image *im = open_ok(NAME, &sc);
	uint64_t off = 2 * BS + 8 * KiB;

	plant_junk(im, 2 * BS, BS);
	fault_arm(z->fn, -1, z->skip, 1, z->err);
	cr_assert_eq(write_val(im, off, 4 * KiB, 0x44), -z->err, "%s of the %s fails",
		     fn_names[z->fn], z->skip ? "tail" : "head");
	cr_assert_eq(plan.hit, 1);
	if (z->fn == F_PWRITE)
		cr_assert_eq(calls[F_PWRITE], z->skip + 1, "the data was written after a failed zeroing");
	fault_off();
	cr_assert_not(sfs_map_test(sfs_image_map(im), 2), "block allocated after its zeroing failed");
	cr_assert_eq(sfs_map_count(sfs_image_map(im)), 0);
	expect_bytes(im, 2 * BS, BS, 0);

	/* The same write again, without faults: the block is zeroed around it. */
	cr_assert_eq(write_val(im, off, 4 * KiB, 0x44), (ssize_t)(4 * KiB));
	cr_assert(sfs_map_test(sfs_image_map(im), 2));
	expect_bytes(im, 2 * BS, 8 * KiB, 0);
	expect_bytes(im, off, 4 * KiB, 0x44);
	expect_bytes(im, off + 4 * KiB, BS - 12 * KiB, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* A write over an allocated block and a new one: the new one fails, the old one stays. */
Test(faults, write_spanning_old_and_new_block)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_ZEROEDTHICK, 4 * BS, false);
	struct sfs_image *im = open_ok(NAME, &sc);

	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	plant_junk(im, BS, BS);
	/* pwrites: the run over block 0, then block 1's tail zeroing (fails). */
	fault_arm(F_PWRITE, -1, 1, 1, EIO);
	cr_assert_eq(write_val(im, BS - 4 * KiB, 8 * KiB, 0x55), -EIO);
	fault_off();
	cr_assert(sfs_map_test(sfs_image_map(im), 0));
	cr_assert_not(sfs_map_test(sfs_image_map(im), 1));
	expect_bytes(im, BS, BS, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* ---- flush ---- */

struct fcase {
	int fn;            /* which call of the flush fails */
	unsigned skip;     /* fdatasync: 0 = the data's, 1 = the map's */
	int err;
};

ParameterizedTestParameters(faults, flush_failure_keeps_bits_dirty)
{
	static struct fcase c[] = {
		{ F_FDATASYNC, 0, EIO }, { F_FDATASYNC, 0, ENOSPC }, { F_FDATASYNC, 1, EIO },
		{ F_FDATASYNC, 1, ENOSPC }, { F_PWRITE, 0, EIO }, { F_PWRITE, 0, ENOSPC },
	};

	return cr_make_param_array(struct fcase, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct fcase *f, faults, flush_failure_keeps_bits_dirty)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 8 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);

	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert(bit_on_disk(NAME, 0));

	cr_assert_eq(write_val(im, 3 * BS + 4 * KiB, 4 * KiB, 0x66), (ssize_t)(4 * KiB));
	cr_assert(sfs_map_test(sfs_image_map(im), 3));
	fault_arm(f->fn, -1, f->skip, 1, f->err);
	cr_assert_eq(sfs_image_flush(im), -f->err, "flush with %s #%u failing", fn_names[f->fn], f->skip + 1);
	cr_assert_eq(plan.hit, 1);
	fault_off();
	/* The data barrier failed: the bit must not have reached the map file. */
	if (f->fn == F_FDATASYNC && f->skip == 0)
		cr_assert_not(bit_on_disk(NAME, 3), "bit written although the data sync failed");
	cr_assert(sfs_map_test(sfs_image_map(im), 3), "a failed flush cleared the bit in memory");
	cr_assert_eq(flushes(im), 1, "a failed flush was counted in the stats");

	/* Nothing new written: only the dirty bits left by the failure can carry it. */
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert(bit_on_disk(NAME, 3), "the later flush did not persist the bit");
	cr_assert(bit_on_disk(NAME, 0));
	cr_assert_eq(sfs_image_close(im), 0);

	im = open_ok(NAME, &sc);
	cr_assert_eq(sfs_map_count(sfs_image_map(im)), 2);
	expect_bytes(im, 3 * BS + 4 * KiB, 4 * KiB, 0x66);
	expect_bytes(im, 3 * BS + 8 * KiB, BS - 8 * KiB, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* Close flushes: a failing one is reported, and the data written before is what a crash leaves. */
Test(faults, close_reports_failed_flush)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);

	cr_assert_eq(write_val(im, BS, BS, 0x77), (ssize_t)BS);
	fault_arm(F_FDATASYNC, -1, 0, 1, EIO);
	cr_assert_eq(sfs_image_close(im), -EIO);
	fault_off();
	im = open_ok(NAME, &sc);
	cr_assert_not(sfs_map_test(sfs_image_map(im), 1), "bit persisted although its data sync failed");
	expect_bytes(im, BS, BS, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* ---- reads ---- */

Test(faults, read_fails_eio)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);
	unsigned char buf[8192];

	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	fault_arm(F_PREAD, -1, 0, 1, EIO);
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), 4096), -EIO);
	cr_assert_eq(plan.hit, 1);

	/* Never-written blocks read as zeros without reading the backing file. */
	fault_arm(F_PREAD, -1, 0, 1000, EIO);
	memset(buf, 0xff, sizeof(buf));
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), 2 * BS), (ssize_t)sizeof(buf));
	cr_assert_eq(calls[F_PREAD], 0, "a never-written block was read from the backing file");
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0);

	/* A read over both: the allocated part fails the whole read. */
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), BS - 4096), -EIO);
	fault_off();
	expect_bytes(im, 0, BS, 0x11);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* ---- range operations ---- */

Test(faults, range_ops_pass_errors_through)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 8 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);

	/* allocate: zeroing of the new block fails, the block stays unallocated */
	fault_arm(F_FALLOCATE, -1, 0, 1, ENOSPC);
	cr_assert_eq(sfs_image_allocate(im, 0, BS), -ENOSPC);
	fault_off();
	cr_assert_not(sfs_map_test(sfs_image_map(im), 0));
	cr_assert_eq(sfs_image_allocate(im, 0, BS), 0);
	cr_assert(sfs_map_test(sfs_image_map(im), 0));

	/* write_zeroes of part of an allocated block */
	cr_assert_eq(write_val(im, BS, BS, 0x11), (ssize_t)BS);
	fault_arm(F_FALLOCATE, -1, 0, 1, EIO);
	cr_assert_eq(sfs_image_write_zeroes(im, BS + 4096, 4096), -EIO);
	fault_off();
	expect_bytes(im, BS, BS, 0x11);

	/* discard of a whole thin block: punching the hole fails; the block reads zeros either way */
	fault_arm(F_FALLOCATE, -1, 0, 1, EIO);
	cr_assert_eq(sfs_image_discard(im, BS, BS), -EIO);
	fault_off();
	expect_bytes(im, BS, BS, 0);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* ---- the sweep ---- */

struct scase {
	enum sfs_prov prov;
	bool offload;
	int err;
};

ParameterizedTestParameters(faults, sweep)
{
	static struct scase c[12];
	size_t n = 0;

	for (int p = SFS_PROV_THIN; p <= SFS_PROV_EAGERZEROEDTHICK; p++)
		for (int o = 0; o < 2; o++)
			for (int e = 0; e < 2; e++)
				c[n++] = (struct scase){ (enum sfs_prov)p, o, e ? ENOSPC : EIO };
	return cr_make_param_array(struct scase, c, n);
}

#define SW_SIZE (8 * BS)
#define SW_GROWN (16 * BS)     /* same bitmap page: see map_grow_failure_keeps_map_openable */
#define SW_SECTORS (SW_GROWN / 512)
#define SW_NOPS 12

/* What each sector may read after the run: 0 or the value of any write that covered it. */
struct model {
	uint32_t may[SW_SECTORS];      /* bit v: value v (1..31) was written there */
};

static void model_write(struct model *md, uint64_t off, uint64_t len, unsigned v)
{
	for (uint64_t s = off / 512; s < (off + len) / 512; s++)
		md->may[s] |= 1u << v;
}

/* Check rc of one step: success, or exactly the injected error. */
static bool step_ok(long rc, long want_ok, int err, const char *what, unsigned k, unsigned *errors)
{
	if (rc == want_ok)
		return true;
	if (getenv("SFS_FAULTS_TRACE"))
		fprintf(stderr, "test_faults: fault #%u: %s returned %ld\n", k, what, rc);
	cr_assert_eq(rc, -err, "fault #%u: %s returned %ld, expected %ld or %d", k, what, rc, want_ok, -err);
	(*errors)++;
	return false;
}

/* One life of an image with the k-th I/O call failing; returns whether the fault was reached. */
static bool sweep_once(const struct scase *c, unsigned k, struct model *md)
{
	struct sfs_sidecar sc = sidecar(c->prov, SW_SIZE, c->offload);
	struct sfs_image *im = NULL;
	char name[32], err[512];
	unsigned errors = 0, v = 1;
	unsigned char *buf;
	uint64_t size;
	bool reached;
	int rc;

	snprintf(name, sizeof(name), "d%u", k);
	memset(md, 0, sizeof(*md));
	fault_arm(F_ANY, -1, k, 1, c->err);
	rc = try_open(name, &sc, &im, err, sizeof(err));
	if (step_ok(rc, 0, c->err, "open", k, &errors)) {
		static const struct { uint64_t off, len; } w[] = {
			{ 0, BS },                       /* whole new block */
			{ BS + 4 * KiB, 4 * KiB },       /* middle of a new block: zeroing */
			{ 8 * KiB, 8 * KiB },            /* overwrite */
			{ BS + 48 * KiB, 96 * KiB },     /* allocated block into a new one */
		};

		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++, v++) {
			model_write(md, w[i].off, w[i].len, v);
			step_ok(write_val(im, w[i].off, w[i].len, (unsigned char)v), (long)w[i].len,
				c->err, "write", k, &errors);
		}
		step_ok(sfs_image_discard(im, 4 * BS, BS), 0, c->err, "discard", k, &errors);
		step_ok(sfs_image_discard(im, 0, 4 * KiB), 0, c->err, "discard part", k, &errors);
		step_ok(sfs_image_write_zeroes(im, BS + 4 * KiB, 4 * KiB), 0, c->err, "write_zeroes", k, &errors);
		step_ok(sfs_image_allocate(im, 5 * BS, BS), 0, c->err, "allocate", k, &errors);
		step_ok(sfs_image_flush(im), 0, c->err, "flush", k, &errors);
		/* A grow that fails in its final map flush has grown all the same (size
		 * and map header are updated before): either size is possible. */
		step_ok(sfs_image_grow(im, SW_GROWN), 0, c->err, "grow", k, &errors);
		size = sfs_image_geom(im).size;
		cr_assert(size == SW_SIZE || size == SW_GROWN, "fault #%u: size %llu after grow", k,
			  (unsigned long long)size);
		if (size == SW_GROWN) {
			model_write(md, 12 * BS + 4 * KiB, 8 * KiB, v);
			step_ok(write_val(im, 12 * BS + 4 * KiB, 8 * KiB, (unsigned char)v), (long)(8 * KiB),
				c->err, "write after grow", k, &errors);
		}
		buf = malloc(SW_GROWN);
		cr_assert_not_null(buf);
		rc = (int)sfs_image_read(im, buf, 2 * BS, 0);
		step_ok(rc, (long)(2 * BS), c->err, "read", k, &errors);
		free(buf);
		step_ok(sfs_image_close(im), 0, c->err, "close", k, &errors);
	}
	reached = plan.hit > 0;
	fault_off();
	cr_assert_leq(errors, plan.hit, "fault #%u: %u errors from %u failed calls", k, errors, plan.hit);
	if (reached && errors == 0)
		cr_log_warn("%s/offload=%d: fault #%u (%s) was absorbed without an error",
			    sfs_prov_name(c->prov), c->offload, k, strerror(c->err));

	/* Without faults: it opens, its map is consistent, every sector is 0 or written data. */
	im = NULL;
	rc = try_open(name, &sc, &im, err, sizeof(err));
	cr_assert_eq(rc, 0, "fault #%u: reopen failed: %d %s", k, rc, err);
	{
		struct sfs_map *m = sfs_image_map(im);
		uint64_t nb = sfs_map_nblocks(m), set = 0;

		size = sfs_image_geom(im).size;
		for (uint64_t b = 0; b < nb; b++)
			set += sfs_map_test(m, b);
		cr_assert_eq(set, sfs_map_count(m), "fault #%u: count %llu, bits %llu", k,
			     (unsigned long long)sfs_map_count(m), (unsigned long long)set);
		buf = malloc(size ? size : 1);
		cr_assert_not_null(buf);
		cr_assert_eq(sfs_image_read(im, buf, size, 0), (ssize_t)size);
		for (uint64_t s = 0; s < size / 512; s++) {
			unsigned char b0 = buf[s * 512];

			for (unsigned i = 1; i < 512; i++)
				cr_assert_eq(buf[s * 512 + i], b0, "fault #%u: sector %llu is torn", k,
					     (unsigned long long)s);
			cr_assert(b0 == 0 || (b0 < 32 && (md->may[s] >> b0) & 1),
				  "fault #%u: sector %llu reads 0x%02x, never written there", k,
				  (unsigned long long)s, b0);
		}
		free(buf);
	}
	cr_assert_eq(sfs_image_close(im), 0);
	return reached;
}

ParameterizedTest(struct scase *c, faults, sweep)
{
	struct model *md = malloc(sizeof(*md));
	unsigned k;

	cr_assert_not_null(md);
	for (k = 0; k < 1000; k++)
		if (!sweep_once(c, k, md))
			break;
	cr_assert_lt(k, 1000, "the scenario never ran without reaching the fault");
	cr_assert_gt(k, 10, "only %u I/O calls in a whole image life: are the overrides in use?", k);
	free(md);
}

/* ---- known bug ---- */

/*
 * A grow of the map extends the map file (sfs_map_grow_prepare: pwrite of
 * the new pages as encoded empty chunks, fdatasync) and only then rewrites
 * the header with the new block count (sfs_map_grow_commit).  If anything
 * fails in between (the pages' pwrite, the fdatasync after it, or the
 * header pwrite), the image's grow must return the error and the image must open again afterwards, as it must after a crash
 * at the same point (the map file may be longer than its header says).
 */
struct gcase {
	int fn;
	unsigned skip;
	int err;
};

ParameterizedTestParameters(faults, map_grow_failure_keeps_map_openable)
{
	/* In sfs_image_grow of a thin image with nothing to zero: pwrite #1
	 * writes the new map page (ENOSPC: what a full store gives), pwrite #2
	 * the header; fdatasync #1 is the data's, #2 the map's after it was
	 * extended, #3 the header's. */
	static struct gcase c[] = {
		{ F_PWRITE, 0, ENOSPC }, { F_FDATASYNC, 1, EIO }, { F_PWRITE, 1, EIO },
		{ F_FDATASYNC, 2, EIO },
	};

	return cr_make_param_array(struct gcase, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct gcase *g, faults, map_grow_failure_keeps_map_openable)
{
	/* 4 KiB blocks: one bitmap page covers 32256 blocks = 126 MiB. */
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 1 << 20, true);
	struct sfs_image *im;
	char err[512];
	int rc;

	sc.block_size = 4096;
	im = open_ok(NAME, &sc);
	cr_assert_eq(write_val(im, 0, 4096, 0x11), 4096);
	cr_assert_eq(sfs_image_flush(im), 0);
	fault_arm(g->fn, -1, g->skip, 1, g->err);
	cr_assert_eq(sfs_image_grow(im, 200ull << 20), -g->err);
	cr_assert_eq(plan.hit, 1);
	fault_off();
	sfs_image_close(im);
	im = NULL;
	rc = try_open(NAME, &sc, &im, err, sizeof(err));
	cr_assert_eq(rc, 0, "after %s #%u of a grow failed, the image does not open: %d %s",
		     fn_names[g->fn], g->skip + 1, rc, err);
	expect_bytes(im, 0, 4096, 0x11);
	cr_assert_eq(sfs_image_close(im), 0);
}

/*
 * The map's own grow steps under failing I/O.  A prepare that fails
 * (writing the new pages, or syncing them) returns the error and leaves
 * the file as it was.  A commit that fails (the header's pwrite or its
 * fdatasync) returns the error with the map in memory as before; the
 * abort after it rewrites the old header and cuts the file back, so the
 * map opens with the old size and its bits; after a failed prepare or
 * commit the map still grows once the faults are gone.
 */
struct mcase {
	bool commit;            /* fail in the commit (else in the prepare) */
	int fn;
	unsigned skip;
};

ParameterizedTestParameters(faults, map_grow_steps_fail_cleanly)
{
	static struct mcase c[] = {
		{ false, F_PWRITE, 0 }, { false, F_FDATASYNC, 0 },
		{ true, F_PWRITE, 0 }, { true, F_FDATASYNC, 0 },
	};

	return cr_make_param_array(struct mcase, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct mcase *c, faults, map_grow_steps_fail_cleanly)
{
	/* 512-byte blocks: 100 of them fit one bitmap page, the grow needs three */
	struct sfs_map_info mi = { { 100 * 512, 512, 512, 512 }, SFS_PROV_THIN, 0 };
	uint64_t big = (2 * 32256 + 100) * 512ull;
	struct sfs_map *m = NULL;
	struct stat st;
	char err[256] = "";
	int rc;

	cr_assert_eq(sfs_map_create(ts.statefd, "m.map", &mi, &m), 0);
	sfs_map_set(m, 42);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	if (c->commit)
		cr_assert_eq(sfs_map_grow_prepare(m, big), 0);
	fault_arm(c->fn, sfs_map_fd(m), c->skip, 1, EIO);
	rc = c->commit ? sfs_map_grow_commit(m, big, 0) : sfs_map_grow_prepare(m, big);
	cr_expect_eq(plan.hit, 1);
	fault_off();
	cr_assert_eq(rc, -EIO, "a failed %s%s returned %d", fn_names[c->fn], c->commit ? " in the commit" : "", rc);
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect_eq(sfs_map_info(m)->geom.size, 100 * 512);
	cr_expect(sfs_map_test(m, 42));
	if (c->commit) {
		cr_expect_eq(sfs_map_grow_abort(m), 0);
	} else {
		cr_assert_eq(fstat(sfs_map_fd(m), &st), 0);
		cr_expect_eq(st.st_size, 4096 + 4096, "a failed prepare leaves the file as it was");
	}
	cr_expect_eq(sfs_map_grow_commit(m, big, 0), -EINVAL, "nothing prepared after a failure");
	sfs_map_close(m);
	m = NULL;
	cr_assert_eq(sfs_map_open(ts.statefd, "m.map", 0, NULL, &m, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect(sfs_map_test(m, 42));
	cr_assert_eq(fstat(sfs_map_fd(m), &st), 0);
	cr_expect_eq(st.st_size, 4096 + 4096);
	cr_expect_eq(tmp_map_grow(m, big), 0);
	sfs_map_close(m);
	m = NULL;
	cr_assert_eq(sfs_map_open(ts.statefd, "m.map", 0, NULL, &m, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_map_nblocks(m), 2 * 32256 + 100);
	cr_expect(sfs_map_test(m, 42));
	sfs_map_close(m);
}

/* ---- errors travel whole ---- */

Test(faults, open_reports_failed_fstat)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_image *im = open_ok(NAME, &sc);
	struct sfs_map *m = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_image_close(im), 0);
	im = NULL;
	fstat_err = EIO;
	fstat_fails = 1;
	cr_expect_eq(try_open(NAME, &sc, &im, err, sizeof(err)), -EIO, "%s", err);
	cr_expect(strstr(err, "stat"), "says what failed: %s", err);
	fstat_fails = 1;
	cr_expect_eq(sfs_map_open(ts.statefd, NAME ".map", SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), -EIO,
		     "%s", err);
	cr_expect(strstr(err, "stat"), "says what failed: %s", err);
	fstat_fails = 0;
	im = open_ok(NAME, &sc);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* Fail the first, second, third... fstat that open() makes with EIO: each failure is the
 * open's result, never a verdict on the file (-ENOENT, -EUCLEAN, -EPERM) nor a silent change of
 * course (buffered I/O instead of O_DIRECT); the open past the last fstat succeeds.  How many
 * fstats an open makes. */
static unsigned each_fstat_fails_open(int (*open)(void *arg), void *arg, const char *what)
{
	unsigned skip;
	int rc;

	for (skip = 0; skip < 32; skip++) {
		fstat_err = EIO;
		fstat_skip = skip;
		fstat_fails = 1;
		rc = open(arg);
		if (fstat_fails) {                 /* past the last fstat */
			fstat_skip = fstat_fails = 0;
			cr_expect_eq(rc, 0, "%s, no fstat failed: %d", what, rc);
			return skip;
		}
		cr_expect_eq(rc, -EIO, "%s, fstat #%u failed with EIO: %d (%s)", what, skip + 1, rc,
			     rc < 0 ? strerror(-rc) : "success");
	}
	cr_assert_fail("%s: more than %u fstats", what, skip);
	return skip;
}

struct first_open_arg {
	struct sfs_sidecar sc;
	char err[512];
};

/* A first open of NAME (created the first time), closed again when it succeeds. */
static int first_open_once(void *p)
{
	struct first_open_arg *a = p;
	struct sfs_image *im = NULL;
	int rc = try_open(NAME, &a->sc, &im, a->err, sizeof(a->err));

	if (rc == 0) {
		cr_expect(sfs_image_direct(im), "O_DIRECT descriptor opened");
		cr_assert_eq(sfs_image_close(im), 0);
	}
	return rc;
}

Test(faults, first_open_passes_every_fstat_error_on)
{
	struct first_open_arg a = { .sc = sidecar(SFS_PROV_THIN, 4 * BS, true) };
	struct sfs_image *im;

	im = open_ok(NAME, &a.sc);
	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	cr_assert_eq(sfs_image_close(im), 0);
	cr_expect_geq(each_fstat_fails_open(first_open_once, &a, "first open"), 3,
		      "the backing file, its O_DIRECT twin and the map are looked at");
	im = open_ok(NAME, &a.sc);
	expect_bytes(im, 0, BS, 0x11);
	cr_assert_eq(sfs_image_close(im), 0);
}

/* The reopen of an evicted image: pinned, then closed again. */
static int reopen_once(void *p)
{
	struct sfs_image *im = p;
	int rc = sfs_image_pin(im);

	if (rc == 0) {
		cr_expect(sfs_image_direct(im), "O_DIRECT descriptor opened");
		sfs_image_release(im);
	}
	return rc;
}

Test(faults, reopen_passes_every_fstat_error_on)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_fdcache *fdc = NULL;
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(sfs_fdcache_new(3, &fdc), 0);
	cr_assert_eq(sfs_image_open_in(fdc, ts.fd, ts.statefd, NAME, &sc, 0, &lg, &im, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	sfs_image_release(im);             /* closed: the next pin opens it again */
	cr_expect_geq(each_fstat_fails_open(reopen_once, im, "reopen"), 3,
		      "the backing file, its O_DIRECT twin and the map are looked at");
	cr_expect_eq(logcap_lines(&cap, "changed behind", NULL, NULL), 0,
		     "a failed fstat is not a changed file: %s", cap.buf);
	cr_assert_eq(sfs_image_pin(im), 0);
	expect_bytes(im, 0, BS, 0x11);
	sfs_image_unpin(im);
	cr_expect_eq(sfs_image_close(im), 0);
	sfs_fdcache_free(fdc);
}

Test(faults, short_write_is_eio)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 4 * BS, true);
	struct sfs_store_opts o = { .lazy = true };
	struct sfs_image *im = open_ok(NAME, &sc);
	struct sfs_store *s = NULL;
	char err[512], buf[64];

	cr_assert_eq(write_val(im, 0, BS, 0x11), (ssize_t)BS);
	short_writes = 1;
	cr_expect_eq(write_val(im, 0, 4 * KiB, 0x22), -EIO, "an overwrite that writes nothing");
	cr_assert_eq(sfs_image_close(im), 0);
	short_writes = 1;
	cr_expect_eq(sfs_write_file_atomic(ts.statefd, ts.statefd, "rec", "x\n", 2, 0600), -EIO);
	cr_expect_eq(sfs_read_small_file(ts.statefd, "rec", buf, sizeof(buf)), -ENOENT, "nothing installed");
	sfs_sidecar_defaults(&o.defaults);
	o.log = lg;
	o.holder = "before";
	cr_assert_eq(sfs_store_open(ts.path, &o, &s, err, sizeof(err)), 0, "%s", err);
	short_writes = 1;
	cr_expect_eq(sfs_store_set_holder(s, "after"), -EIO, "a lock file left empty");
	cr_expect_eq(sfs_store_close(s), 0);
}
