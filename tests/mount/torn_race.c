/* SPDX-License-Identifier: MIT */
/*
 * torn_race.c - does a reader ever see a sector half written?
 *
 *   torn_race FILE OFFSET WSIZE RSIZE READS
 *
 * A writer thread alternates two patterns, A and B, each WSIZE bytes, over
 * [OFFSET, OFFSET+WSIZE) of FILE with O_DIRECT pwrite, as fast as it can.
 * A reader thread meanwhile preads RSIZE bytes at a time (O_DIRECT, a
 * descriptor of its own) from the pieces of that range in turn, READS
 * times, and checks that each read is wholly the matching part of A or
 * wholly that of B.  Before the threads start, A is written once: it is
 * also the initial contents.  Every 8-byte word of a pattern holds its
 * letter and its offset, so a read of the wrong place is torn as well.
 *
 * It prints "reads R torn T a RA b RB writes W" and exits 0 when no read
 * was torn and the reader saw both patterns (else the writer never raced
 * it and the run shows nothing), 1 when a read was torn, 2 on an error or
 * a run that did not race.  The first few torn reads are described on
 * stderr: the first byte of the piece unlike A, and the first unlike B.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALIGN 4096
#define SHOW_TORN 5

static const char *file;
static uint64_t base;
static size_t wsize, rsize;
static unsigned char *pat[2];         /* A and B, wsize bytes each */
static atomic_int stop;
static uint64_t writes;
static int werr;

static void fill(unsigned char *buf, size_t len, uint64_t letter)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = letter << 56 | (base + i);

		memcpy(buf + i, &w, 8);
	}
}

static int open_direct(void)
{
	int fd = open(file, O_RDWR | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "torn_race: open %s O_DIRECT: %s\n", file, strerror(errno));
	return fd;
}

static int put(int fd, int which)
{
	ssize_t n = pwrite(fd, pat[which], wsize, (off_t)base);

	if (n == (ssize_t)wsize)
		return 0;
	fprintf(stderr, "torn_race: pwrite %zu at %" PRIu64 ": %s\n", wsize, base,
		n < 0 ? strerror(errno) : "short write");
	return -1;
}

static void *writer(void *arg)
{
	int fd = *(int *)arg;

	for (int which = 1; !atomic_load_explicit(&stop, memory_order_relaxed); which ^= 1) {
		if (put(fd, which) < 0) {
			werr = 1;
			break;
		}
		writes++;
	}
	return NULL;
}

/* Length of the common prefix of a and b. */
static size_t prefix(const unsigned char *a, const unsigned char *b, size_t len)
{
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	return i;
}

int main(int argc, char **argv)
{
	unsigned long long reads, torn = 0, seen[2] = { 0, 0 };
	unsigned char *buf = NULL;
	pthread_t wt;
	int wfd = -1, rfd = -1, rc = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: torn_race FILE OFFSET WSIZE RSIZE READS\n");
		return 2;
	}
	file = argv[1];
	base = strtoull(argv[2], NULL, 0);
	wsize = strtoul(argv[3], NULL, 0);
	rsize = strtoul(argv[4], NULL, 0);
	reads = strtoull(argv[5], NULL, 0);
	if (!wsize || !rsize || wsize % rsize || rsize % 512 || base % 512 || !reads) {
		fprintf(stderr, "torn_race: WSIZE must be a multiple of RSIZE, both of 512, and OFFSET of 512\n");
		return 2;
	}
	if (posix_memalign((void **)&pat[0], ALIGN, wsize) || posix_memalign((void **)&pat[1], ALIGN, wsize) ||
	    posix_memalign((void **)&buf, ALIGN, rsize)) {
		fprintf(stderr, "torn_race: out of memory\n");
		rc = 2;
		goto out;
	}
	fill(pat[0], wsize, 'A');
	fill(pat[1], wsize, 'B');
	wfd = open_direct();
	rfd = open_direct();
	if (wfd < 0 || rfd < 0 || put(wfd, 0) < 0) {
		rc = 2;
		goto out;
	}
	if (pthread_create(&wt, NULL, writer, &wfd) != 0) {
		fprintf(stderr, "torn_race: cannot start the writer\n");
		rc = 2;
		goto out;
	}
	for (unsigned long long k = 0; k < reads; k++) {
		size_t at = (size_t)(k % (wsize / rsize)) * rsize;
		ssize_t n = pread(rfd, buf, rsize, (off_t)(base + at));
		size_t pa, pb;

		if (n != (ssize_t)rsize) {
			fprintf(stderr, "torn_race: pread %zu at %" PRIu64 ": %s\n", rsize, base + at,
				n < 0 ? strerror(errno) : "short read");
			rc = 2;
			break;
		}
		pa = prefix(buf, pat[0] + at, rsize);
		pb = prefix(buf, pat[1] + at, rsize);
		if (pa == rsize || pb == rsize) {
			seen[pa == rsize ? 0 : 1]++;
			continue;
		}
		if (torn++ < SHOW_TORN)
			fprintf(stderr, "torn_race: read %llu of %zu at %" PRIu64 ": first byte unlike A %zu, "
				"unlike B %zu\n", k, rsize, base + at, pa, pb);
	}
	atomic_store(&stop, 1);
	pthread_join(wt, NULL);
	printf("reads %llu torn %llu a %llu b %llu writes %" PRIu64 "\n", seen[0] + seen[1] + torn, torn,
	       seen[0], seen[1], writes);
	if (werr)
		rc = 2;
	if (rc == 0 && torn)
		rc = 1;
	if (rc == 0 && (!seen[0] || !seen[1])) {
		fprintf(stderr, "torn_race: the reader saw only one pattern: the writer never raced it\n");
		rc = 2;
	}
out:
	if (wfd >= 0)
		close(wfd);
	if (rfd >= 0)
		close(rfd);
	free(pat[0]);
	free(pat[1]);
	free(buf);
	return rc;
}
