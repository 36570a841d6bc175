/*
 * fuzz_map.c - libFuzzer target for the allocation map loader
 * (sfs_map_open in core/allocmap.c; the format is drawn at the top of
 * that file).
 *
 * Each input is written as the whole map file F in a temporary directory
 * made once per process, and sfs_map_open() reads it.  The input is tried
 * twice: as it is, and with the header checksum (CRC-32C of bytes 0..55,
 * stored at 56) recomputed, so that mutated header fields get past the
 * checksum and reach the geometry checks behind it.  Properties, besides
 * "no crash, no sanitizer report, no leak":
 *
 *   - open returns 0 or a negative errno; a refusal (-EUCLEAN for anything
 *     wrong with the file) comes with a NUL-terminated message;
 *   - an opened map is consistent: sfs_map_count() equals the number of
 *     blocks sfs_map_test() reports set, and sfs_map_next_set() /
 *     sfs_map_next_clear() agree with sfs_map_test(): walked run by run
 *     from block 0, probed from every block of a small map (a spread of
 *     about 256 and the first and last 128 blocks of a big one), and
 *     nblocks at and far past the end;
 *   - set / clear of a few blocks chosen by the input move the count by
 *     exactly one; after sfs_map_flush() the file opens again with exactly
 *     the bits in memory.
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

#include "allocmap.h"

#define MAP_FILE "fuzz.map"
#define CRC_OFF 56u

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

static void try_open(const uint8_t *data, size_t size)
{
	struct sfs_map *m = NULL, *m2 = NULL;
	char err[512];
	uint64_t nb;
	int rc;

	write_file(data, size);
	memset(err, 0x5a, sizeof(err));
	rc = sfs_map_open(dir_fd, MAP_FILE, 0, NULL, &m, err, sizeof(err));
	if (rc > 0)
		die("sfs_map_open returned a positive value", (unsigned long long)rc, 0);
	if (rc < 0) {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			die("refusal without a message", (unsigned long long)-rc, 0);
		return;
	}
	if (size < 4096)
		die("a map shorter than its header opened", size, 4096);
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
	rc = sfs_map_open(dir_fd, MAP_FILE, 0, NULL, &m2, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "fuzz_map: flushed map does not reopen: %s\n", err);
		abort();
	}
	same_bits(m, m2);
	sfs_map_close(m2);
	sfs_map_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	try_open(data, size);
	if (size < CRC_OFF + 4)
		return 0;
	/* Again with a correct header checksum, to reach the checks behind it. */
	crc = sfs_map_crc32c(data, CRC_OFF);
	if (data[CRC_OFF] == (uint8_t)crc && data[CRC_OFF + 1] == (uint8_t)(crc >> 8) &&
	    data[CRC_OFF + 2] == (uint8_t)(crc >> 16) && data[CRC_OFF + 3] == (uint8_t)(crc >> 24))
		return 0;           /* already right: tried above */
	fixed = malloc(size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	for (int i = 0; i < 4; i++)
		fixed[CRC_OFF + i] = (uint8_t)(crc >> (8 * i));
	try_open(fixed, size);
	free(fixed);
	return 0;
}
