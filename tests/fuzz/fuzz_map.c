/* SPDX-License-Identifier: MIT */
/*
 * fuzz_map.c - libFuzzer target for the allocation map loader
 * (sfs_map_open in core/map/map.c; the format is drawn at the top of
 * that file).
 *
 * Each input is written as the whole map file F in a temporary directory
 * made once per process, and sfs_map_open() reads it.  The input is tried
 * three times: as it is; with the header checksum (CRC-32C of bytes 0..55,
 * stored at 56) recomputed, so that mutated header fields get past the
 * checksum and reach the geometry checks behind it; and with the header's
 * and every whole bitmap chunk's checksum recomputed (its reserved bytes
 * zeroed), so that mutated bits reach the decoder.  Properties, besides
 * "no crash, no sanitizer report, no leak":
 *
 *   - open returns 0 or a negative errno; a refusal (-EUCLEAN for anything
 *     wrong with the file) comes with a NUL-terminated message;
 *   - a read-only open (SFS_MAP_RDONLY, with and without SFS_MAP_SALVAGE)
 *     leaves the file byte for byte as it was and cannot flush (-EROFS);
 *     a read-write open gives the same answer and, when both open, the
 *     same bits (a version-1 file is converted: same bits again);
 *   - an opened map is consistent: sfs_map_count() equals the number of
 *     blocks sfs_map_test() reports set, and sfs_map_next_set() /
 *     sfs_map_next_clear() agree with sfs_map_test(): walked run by run
 *     from block 0, probed from every block of a small map (a spread of
 *     about 256 and the first and last 128 blocks of a big one), and
 *     nblocks at and far past the end;
 *   - a map refused for a bitmap checksum mismatch opens with
 *     SFS_MAP_SALVAGE, every block of its first bad chunk set; after its
 *     flush the file opens without salvage, undamaged, with the same bits;
 *   - set / clear of a few blocks chosen by the input move the count by
 *     exactly one; after sfs_map_flush() the file is version 2 and opens
 *     again with exactly the bits in memory.
 *
 * Build and run with tests/fuzz/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "map/map.h"
#include "util/crc32c.h"

#define MAP_FILE "fuzz.map"
#define CRC_OFF 56u
#define HDR 4096u
#define CHUNK 512u
#define CHUNK_DATA 504u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir_path[64];
static int dir_fd = -1;

static void remove_dir(void)
{
	if (dir_fd >= 0) {
		unlinkat(dir_fd, MAP_FILE, 0);
		close(dir_fd);
	}
	rmdir(dir_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir_path, sizeof(dir_path), "%s/fuzz_map.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir_path) || (dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror("fuzz_map: temporary directory");
		exit(1);
	}
	atexit(remove_dir);
	return 0;
}

static void die(const char *what, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "fuzz_map: %s (%llu vs %llu)\n", what, a, b);
	abort();
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = openat(dir_fd, MAP_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0) {
		perror("fuzz_map: create");
		abort();
	}
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			perror("fuzz_map: write");
			abort();
		}
		done += (size_t)n;
	}
	close(fd);
}

/* The checks below walk every block: keep the fuzzer's comparison tracing
 * out of them (it is for the library's branches, not the harness's), or
 * it would cost most of each run. */
#if defined(__clang__) && __clang_major__ >= 13
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

/* count, test, next_set and next_clear tell the same story.  Each block is
 * tested once (the library's test is instrumented, and most of a run's
 * time); the walks below check against that snapshot. */
NO_COVERAGE static void check_consistent(const struct sfs_map *m)
{
	uint64_t nb = sfs_map_nblocks(m), set = 0, b;
	bool *bit = malloc(nb ? nb : 1);

	if (!bit)
		abort();
	for (b = 0; b < nb; b++) {
		bit[b] = sfs_map_test(m, b);
		set += bit[b];
	}
	if (set != sfs_map_count(m))
		die("count differs from the bits set", sfs_map_count(m), set);

	/* Walk the set runs from 0 with next_set/next_clear. */
	set = 0;
	for (b = sfs_map_next_set(m, 0); b < nb;) {
		uint64_t e = sfs_map_next_clear(m, b);

		if (e <= b || e > nb)
			die("next_clear out of order", b, e);
		for (uint64_t i = b; i < e; i++)
			if (!bit[i])
				die("block inside a set run is clear", i, b);
		set += e - b;
		if (e == nb)
			break;
		b = sfs_map_next_set(m, e);
		if (b <= e || b > nb)
			die("next_set out of order", e, b);
		for (uint64_t i = e; i < b; i++)
			if (bit[i])
				die("block inside a clear run is set", i, e);
	}
	if (set != sfs_map_count(m))
		die("next_set/next_clear runs differ from count", set, sfs_map_count(m));

	/* Probe from single blocks: all of a small map; of a big one (a probe
	 * scans up to the answer, so they cost) about 256 spread over it and
	 * every block of its first and last two words.  The answer is the
	 * first such block at or after it, computed here backwards in one pass. */
	{
		uint64_t step = nb <= 2048 ? 1 : nb / 256, want_set = nb, want_clear = nb;

		for (b = nb; b-- > 0;) {
			if (bit[b])
				want_set = b;
			else
				want_clear = b;
			if (b % step && b >= 128 && b + 128 < nb)
				continue;
			if (sfs_map_next_set(m, b) != want_set)
				die("next_set from a block", b, sfs_map_next_set(m, b));
			if (sfs_map_next_clear(m, b) != want_clear)
				die("next_clear from a block", b, sfs_map_next_clear(m, b));
		}
	}
	if (sfs_map_next_set(m, nb) != nb || sfs_map_next_clear(m, nb) != nb)
		die("next_* at nblocks is not nblocks", sfs_map_next_set(m, nb), nb);
	if (sfs_map_next_set(m, UINT64_MAX - 1) != nb || sfs_map_next_clear(m, UINT64_MAX - 1) != nb)
		die("next_* far past the end is not nblocks", sfs_map_next_set(m, UINT64_MAX - 1), nb);
	free(bit);
}

/* The reopened map holds exactly the bits of the one flushed. */
NO_COVERAGE static void same_bits(const struct sfs_map *m, const struct sfs_map *m2)
{
	uint64_t nb = sfs_map_nblocks(m);

	if (sfs_map_nblocks(m2) != nb || sfs_map_count(m2) != sfs_map_count(m))
		die("reopened map differs in size or count", sfs_map_count(m2), sfs_map_count(m));
	for (uint64_t b = 0; b < nb; b++)
		if (sfs_map_test(m, b) != sfs_map_test(m2, b))
			die("reopened map differs at block", b, nb);
}

/* The map file is still exactly data. */
NO_COVERAGE static void same_file(const uint8_t *data, size_t size, const char *after)
{
	uint8_t *buf = malloc(size + 1);
	int fd = openat(dir_fd, MAP_FILE, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0)
		abort();
	n = pread(fd, buf, size + 1, 0);
	close(fd);
	if (n != (ssize_t)size || memcmp(buf, data, size) != 0)
		die(after, (unsigned long long)n, size);
	free(buf);
}

static int open_map(unsigned flags, struct sfs_map **m, char *err, size_t errlen)
{
	int rc;

	*m = NULL;
	memset(err, 0x5a, errlen);
	rc = sfs_map_open(dir_fd, MAP_FILE, flags, NULL, m, err, errlen);
	if (rc > 0)
		die("sfs_map_open returned a positive value", (unsigned long long)rc, flags);
	if (rc < 0 && (!memchr(err, '\0', errlen) || !err[0]))
		die("refusal without a message", (unsigned long long)-rc, flags);
	if (rc < 0 && *m)
		die("a refused open returned a map", (unsigned long long)-rc, flags);
	return rc;
}

/* A map refused for its bitmap chunks: salvage, flush, and it opens clean. */
static void try_salvage(void)
{
	struct sfs_map *m, *m2;
	const struct sfs_map_damage *d;
	char err[512];

	if (open_map(SFS_MAP_SALVAGE, &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_map: salvage refused a map refused only for its bitmap: %s\n", err);
		abort();
	}
	check_consistent(m);
	d = sfs_map_damage(m);
	if (!d->chunks)
		die("salvage found no damage in a map refused for it", 0, 0);
	if (d->first_blk > d->first_end || d->first_end > sfs_map_nblocks(m) || d->blocks > sfs_map_nblocks(m))
		die("damage out of range", d->first_end, sfs_map_nblocks(m));
	for (uint64_t b = d->first_blk; b < d->first_end; b++)
		if (!sfs_map_test(m, b))
			die("a block of a bad chunk is not allocated after salvage", b, d->first_blk);
	if (sfs_map_flush(m, -1) != 0)
		die("salvage flush failed", 0, 0);
	if (open_map(0, &m2, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_map: a salvaged and flushed map does not reopen: %s\n", err);
		abort();
	}
	if (sfs_map_damage(m2)->chunks)
		die("damage left after the salvage's flush", sfs_map_damage(m2)->chunks, 0);
	same_bits(m, m2);
	sfs_map_close(m2);
	sfs_map_close(m);
}

static void try_open(const uint8_t *data, size_t size)
{
	struct sfs_map *ro = NULL, *m = NULL, *m2 = NULL;
	char err[512];
	uint64_t nb;
	unsigned char version;
	int rc, rc_ro;

	write_file(data, size);
	/* read-only: answers, changes nothing */
	rc = open_map(SFS_MAP_RDONLY | SFS_MAP_SALVAGE, &ro, err, sizeof(err));
	if (rc == 0) {
		check_consistent(ro);
		if (sfs_map_flush(ro, -1) != -EROFS)
			die("a read-only map flushed", 0, 0);
		sfs_map_close(ro);
	}
	rc_ro = open_map(SFS_MAP_RDONLY, &ro, err, sizeof(err));
	if (rc_ro == 0 && rc != 0)
		die("a read-only open took what a salvaging one refused", (unsigned long long)-rc, 0);
	if (rc_ro == 0)
		check_consistent(ro);
	same_file(data, size, "a read-only open changed the file");

	rc = open_map(0, &m, err, sizeof(err));
	if (rc != rc_ro)
		die("read-write and read-only opens disagree", (unsigned long long)-rc, (unsigned long long)-rc_ro);
	if (rc < 0) {
		if (strstr(err, "bitmap checksum mismatch"))
			try_salvage();
		return;
	}
	if (size < 4096)
		die("a map shorter than its header opened", size, 4096);
	same_bits(ro, m);
	sfs_map_close(ro);
	check_consistent(m);

	/* Flip a few blocks chosen by the input, then flush and reopen. */
	nb = sfs_map_nblocks(m);
	if (nb) {
		for (size_t i = 0; i < 4 && 64 + 8 * i + 8 <= size; i++) {
			uint64_t v, blk, before = sfs_map_count(m);
			bool was;

			memcpy(&v, data + 64 + 8 * i, 8);
			blk = v % nb;
			was = sfs_map_test(m, blk);
			if (was)
				sfs_map_clear(m, blk);
			else
				sfs_map_set(m, blk);
			if (sfs_map_test(m, blk) == was ||
			    sfs_map_count(m) != (was ? before - 1 : before + 1))
				die("set/clear did not move the bit and count by one", blk, before);
		}
		check_consistent(m);
	}
	rc = sfs_map_flush(m, -1);
	if (rc != 0)
		die("flush failed", (unsigned long long)-rc, 0);
	rc = open_map(0, &m2, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "fuzz_map: flushed map does not reopen: %s\n", err);
		abort();
	}
	{
		int fd = openat(dir_fd, MAP_FILE, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || pread(fd, &version, 1, 8) != 1)
			abort();
		close(fd);
		if (version != 2)
			die("a map opened read-write is not version 2", version, 2);
	}
	same_bits(m, m2);
	sfs_map_close(m2);
	sfs_map_close(m);
}

/* data with the header checksum right; with chunks, every whole chunk's too. */
static uint8_t *fixed_copy(const uint8_t *data, size_t size, bool chunks)
{
	uint8_t *p = malloc(size);
	uint32_t crc;

	if (!p)
		return NULL;
	memcpy(p, data, size);
	crc = sfs_crc32c(0, p, CRC_OFF);
	for (int i = 0; i < 4; i++)
		p[CRC_OFF + i] = (uint8_t)(crc >> (8 * i));
	for (size_t off = HDR; chunks && off + CHUNK <= size; off += CHUNK) {
		uint64_t idx = (off - HDR) / CHUNK;
		uint8_t ib[8];

		for (int i = 0; i < 8; i++)
			ib[i] = (uint8_t)(idx >> (8 * i));
		crc = sfs_crc32c(sfs_crc32c(0, ib, 8), p + off, CHUNK_DATA);
		for (int i = 0; i < 4; i++) {
			p[off + CHUNK_DATA + i] = (uint8_t)(crc >> (8 * i));
			p[off + CHUNK_DATA + 4 + i] = 0;
		}
	}
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *hdr_fixed, *all_fixed;

	try_open(data, size);
	if (size < CRC_OFF + 4)
		return 0;
	/* Again with a correct header checksum, to reach the checks behind it. */
	hdr_fixed = fixed_copy(data, size, false);
	if (hdr_fixed && memcmp(hdr_fixed, data, size) != 0)
		try_open(hdr_fixed, size);
	/* And with correct chunk checksums, to reach the bits behind them. */
	all_fixed = size > HDR && hdr_fixed ? fixed_copy(data, size, true) : NULL;
	if (all_fixed && memcmp(all_fixed, hdr_fixed, size) != 0)
		try_open(all_fixed, size);
	free(all_fixed);
	free(hdr_fixed);
	return 0;
}
