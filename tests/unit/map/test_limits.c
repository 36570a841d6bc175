/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c - what an allocation map can hold, and what happens when
 * memory for it runs out.
 *
 * Through the tests' hook of core/map/map_test.h (map_calloc_hook),
 * every allocation the map makes in a life of create, bits, flush, a grow
 * that needs a new bitmap page, another flush and close is made to fail
 * in turn (the 1st, the 2nd, ...): each failing call returns -ENOMEM and
 * leaves the map as it was (a grow refused keeps the old size, in memory
 * and in the file), nothing is freed twice (glibc aborts on the double
 * free of a grow whose second array failed, which took the daemon down on
 * a truncate to 2^62) and nothing leaks (LeakSanitizer, in an ASan build);
 * the map then grows and flushes once memory is back, and opens again
 * with every bit that was flushed.
 */
#include "fixtures/map_fixture.h"

#include "map/map_test.h"

/* ---- the hook: fail allocation number fail_at (counted from 1) ---- */

static unsigned alloc_calls, fail_at;

static void *failing_calloc(size_t n, size_t size)
{
	if (++alloc_calls == fail_at) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(n, size);
}

static void hook_on(unsigned at)
{
	alloc_calls = 0;
	fail_at = at;
	map_calloc_hook = failing_calloc;
}

static void hook_off(void)
{
	map_calloc_hook = NULL;
}

/* 4 KiB blocks: one bitmap page covers 32256 of them, so growing from 1000 to 40000 blocks
 * needs a second page, and new arrays. */
#define SMALL 1000u
#define LARGE 40000u

/* One life of a map with allocation number at failing: each call returns 0 or -ENOMEM and a
 * refused one changes nothing.  True when the failure was hit. */
static bool life_failing_at(unsigned at)
{
	struct sfs_map_info mi = info_of(SMALL, 4096, false);
	struct sfs_map *m = NULL;
	uint64_t want = (uint64_t)LARGE * 4096;
	bool grown = false;
	int rc;

	hook_on(at);
	rc = sfs_map_create(ts.fd, MAPNAME, &mi, &m);
	if (rc < 0) {
		hook_off();
		cr_assert_eq(rc, -ENOMEM, "allocation %u: create gave %d", at, rc);
		cr_expect_null(m);
		cr_expect_eq(faccessat(ts.fd, MAPNAME, F_OK, 0), -1, "allocation %u: a map file left", at);
		return true;
	}
	sfs_map_set(m, 7);
	rc = sfs_map_flush(m, -1);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: flush gave %d", at, rc);
	rc = sfs_map_grow_prepare(m, want);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: grow_prepare gave %d", at, rc);
	if (rc == 0) {
		rc = sfs_map_grow_commit(m, want, 0);
		cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: grow_commit gave %d", at, rc);
		if (rc < 0)
			cr_assert_eq(sfs_map_grow_abort(m), 0);
		grown = rc == 0;
	}
	cr_expect_eq(sfs_map_nblocks(m), grown ? LARGE : SMALL, "allocation %u", at);
	cr_expect_eq(file_size(), (off_t)(HDR + (grown ? 2 : 1) * PAGE), "allocation %u: map file", at);
	cr_expect(sfs_map_test(m, 7), "allocation %u: bit 7 lost", at);
	if (grown)
		sfs_map_set(m, LARGE - 1);
	rc = sfs_map_flush(m, -1);
	cr_assert(rc == 0 || rc == -ENOMEM, "allocation %u: second flush gave %d", at, rc);
	hook_off();

	/* memory is back: what failed works now */
	if (!grown) {
		cr_assert_eq(sfs_map_grow_prepare(m, want), 0, "allocation %u", at);
		cr_assert_eq(sfs_map_grow_commit(m, want, 0), 0, "allocation %u", at);
		sfs_map_set(m, LARGE - 1);
	}
	cr_assert_eq(sfs_map_flush(m, -1), 0, "allocation %u", at);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), LARGE, "allocation %u", at);
	cr_expect(sfs_map_test(m, 7) && sfs_map_test(m, LARGE - 1), "allocation %u: bits lost", at);
	cr_expect_eq(sfs_map_count(m), 2, "allocation %u", at);
	sfs_map_close(m);
	unlinkat(ts.fd, MAPNAME, 0);
	return at <= alloc_calls;
}

Test(map, every_allocation_of_a_life_fails_cleanly)
{
	unsigned at = 1;

	while (life_failing_at(at))
		at++;
	cr_expect_gt(at, 8, "only %u allocations in a map's life: is the hook reached?", at - 1);
}

/* An open of a map of two pages with bits set (and a flush after it) fails at each of its
 * allocations in turn with -ENOMEM and a message, leaving the file as it was. */
Test(map, every_allocation_of_an_open_fails_cleanly)
{
	struct sfs_map_info mi = info_of(LARGE, 4096, false);
	struct sfs_map *m = create(&mi);
	unsigned at;

	sfs_map_set(m, 3);
	sfs_map_set(m, LARGE - 2);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	for (at = 1;; at++) {
		char err[256] = "";
		int rc;

		m = NULL;
		hook_on(at);
		rc = sfs_map_open(ts.fd, MAPNAME, 0, NULL, &m, err, sizeof(err));
		if (rc == 0) {
			sfs_map_set(m, 5);
			rc = sfs_map_flush(m, -1);
		}
		hook_off();
		if (at > alloc_calls) {
			cr_assert_eq(rc, 0);
			sfs_map_close(m);
			break;
		}
		cr_expect_eq(rc, -ENOMEM, "allocation %u: %d (%s)", at, rc, err);
		if (m)
			sfs_map_close(m);
		else
			cr_expect(strstr(err, MAPNAME), "allocation %u: '%s' names no file", at, err);
		cr_expect_eq(file_size(), (off_t)(HDR + 2 * PAGE), "allocation %u", at);
	}
	cr_expect_geq(at, 4, "only %u allocations in an open and a flush", at - 1);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 3);
	sfs_map_close(m);
}

/* ---- an image growing in many small steps ---- */

static uint64_t alloc_bytes;

static void *counting_calloc(size_t n, size_t size)
{
	alloc_bytes += n * size;
	return calloc(n, size);
}

/* An image created through the mount grows a step at a time (256 MiB at most), and the arrays
 * a grow replaces are kept until close (lock-free readers may hold them): 200 grows of one
 * bitmap page each (4 KiB blocks) allocated 200 arrays of 1 to 200 pages, 80 MiB for a map of
 * 800 KiB.  With arrays that double, what is allocated stays within a few times the map. */
Test(map, many_small_grows_keep_few_arrays)
{
	struct sfs_map_info mi = info_of(SMALL, 4096, false);
	struct sfs_map *m = create(&mi);
	const unsigned steps = 200;
	uint64_t final_words;

	alloc_bytes = 0;
	map_calloc_hook = counting_calloc;
	for (unsigned i = 1; i <= steps; i++) {
		uint64_t size = (uint64_t)i * PAGE_BITS * 4096;

		cr_assert_eq(sfs_map_grow_prepare(m, size), 0, "grow %u", i);
		cr_assert_eq(sfs_map_grow_commit(m, size, 0), 0, "grow %u", i);
		sfs_map_set(m, (uint64_t)i * PAGE_BITS - 1);
	}
	hook_off();
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	final_words = (uint64_t)steps * PAGE_BITS / 8;
	cr_expect_leq(alloc_bytes, 4 * final_words, "%llu bytes allocated by %u grows to a map of %llu",
		      (unsigned long long)alloc_bytes, steps, (unsigned long long)final_words);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), (uint64_t)steps * PAGE_BITS);
	cr_expect_eq(sfs_map_count(m), steps);
	for (unsigned i = 1; i <= steps; i++)
		cr_expect(sfs_map_test(m, (uint64_t)i * PAGE_BITS - 1), "bit of grow %u lost", i);
	sfs_map_close(m);
}

/* ---- sizes past what a map can hold: refused before any work ---- */

#define TiB (1ull << 40)
#define BIG (1ull << 62)

/* A map past the limit is neither allocated nor written (2^62 bytes of 1 MiB blocks would be
 * a 512 GiB map file); the grow of one at the limit's edge is refused the same way. */
Test(map, sizes_past_the_limit_allocate_and_write_nothing)
{
	struct sfs_map_info mi = info_of(SMALL, 4096, false);
	struct sfs_map *m = NULL;
	const uint64_t sizes[] = { sfs_geom_size_max(4096) + 4096, BIG, INT64_MAX / 4096 * 4096 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sfs_map_info huge = mi;

		huge.geom.size = sizes[i];
		hook_on(0);
		cr_expect_eq(sfs_map_create(ts.fd, MAPNAME, &huge, &m), -EFBIG, "size %llu",
			     (unsigned long long)sizes[i]);
		cr_expect_eq(alloc_calls, 0, "size %llu: allocated before refusing", (unsigned long long)sizes[i]);
		hook_off();
		cr_expect_eq(faccessat(ts.fd, MAPNAME, F_OK, 0), -1, "a map file left");
	}
	m = create(&mi);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		hook_on(0);
		cr_expect_eq(sfs_map_grow_prepare(m, sizes[i]), -EFBIG);
		cr_expect_eq(alloc_calls, 0, "size %llu: allocated before refusing", (unsigned long long)sizes[i]);
		hook_off();
		cr_expect_eq(file_size(), (off_t)(HDR + PAGE), "the file grew");
	}
	/* the largest that is not refused: 2^30 blocks of 4 KiB, 4 TiB; only its arrays are tried */
	hook_on(1);
	cr_expect_eq(sfs_map_grow_prepare(m, sfs_geom_size_max(4096)), -ENOMEM, "refused by size");
	hook_off();
	cr_expect_eq(file_size(), (off_t)(HDR + PAGE), "the file grew");
	cr_expect_eq(sfs_map_nblocks(m), SMALL);
	sfs_map_close(m);
}

/* A store whose sidecars and images are asked for sizes past the limit. */
static struct logcap cap;
static struct sfs_store_opts opts;

static void store_setup(void)
{
	tmpstore_make_opts(&ts, "limits", false, &cap, &opts, "pid 4242, mounted at /mnt/unit-test");
}

TestSuite(sizes, .init = store_setup, .fini = teardown, .timeout = 30);

/* STORE/.sectorfs/name's size, or -1 when there is none. */
static off_t state_size(const char *name)
{
	int fd = tmp_state_fd(&ts);
	struct stat st;
	off_t r = fstatat(fd, name, &st, 0) == 0 ? st.st_size : -1;

	close(fd);
	return r;
}

/* A sidecar declaring 2^62 bytes (legal JSON, 4 EiB) is refused with a message naming the key:
 * no map is written (it was 512 GiB, written until the filesystem was full). */
Test(sizes, a_sidecar_past_the_limit_is_refused_before_any_work)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;
	char err[512] = "";

	tmp_write_sidecar(ts.fd, "huge", "{\"size\": 4611686018427387904}");
	tmp_write_sidecar(ts.fd, "odd", "{\"size\": 9223372036854775807}");
	tmp_write_sidecar(ts.fd, "edge", "{\"size\": \"4T\", \"block_size\": \"4K\"}");
	tmp_write_sidecar(ts.fd, "past", "{\"size\": 4398046515200, \"block_size\": \"4K\"}");
	s = tmp_store_open(&ts, &opts);
	cr_expect_eq(sfs_store_lookup(s, "huge", &im, err, sizeof(err)) < 0, true);
	cr_expect(strstr(err, "huge.json: key 'size': 4611686018427387904 is larger than the maximum 1024 TiB"),
		  "%s", err);
	cr_expect_eq(sfs_store_lookup(s, "odd", &im, err, sizeof(err)) < 0, true);
	cr_expect(strstr(err, "key 'size'"), "%s", err);
	cr_expect_eq(sfs_store_lookup(s, "past", &im, err, sizeof(err)) < 0, true);
	cr_expect(strstr(err, "maximum 4 TiB for a block size of 4 KiB"), "%s", err);
	cr_expect_eq(state_size("huge.map"), -1, "a map written for a refused sidecar");
	cr_expect_eq(state_size("past.map"), -1, "a map written for a refused sidecar");
	cr_expect(!tmp_exists(ts.fd, "huge") && !tmp_exists(ts.fd, "past"), "a backing file made");
	/* the largest of 4 KiB blocks is served: 2^30 blocks, a map of 4 KiB + 33289 pages */
	cr_assert_eq(sfs_store_lookup(s, "edge", &im, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_image_geom(im).size, 4 * TiB);
	cr_expect_eq(state_size("edge.map"), (off_t)(HDR + 33289 * PAGE));
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

/* truncate (sfs_store_resize) to 0, 1, 2^62 and 2^63 - 1, of a declared image and of one
 * growing: EINVAL or EFBIG, and nothing changed (no journal, map and backing file as before,
 * no allocation). */
static void expect_sizes_refused(struct sfs_store *s, struct sfs_image *im, uint64_t size)
{
	const struct { uint64_t size; int rc; } cases[] = {
		{ 0, -EINVAL }, { 1, -EINVAL }, { BIG, -EFBIG }, { INT64_MAX, -EFBIG }, { UINT64_MAX, -EFBIG },
		{ sfs_geom_size_max(sfs_image_geom(im).block_size) + 512, -EFBIG },
	};
	off_t map = state_size("d.map"), back = tmp_stat(ts.fd, "d").st_size;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hook_on(0);
		cr_expect_eq(sfs_store_resize(s, im, cases[i].size), cases[i].rc, "size %llu",
			     (unsigned long long)cases[i].size);
		cr_expect_eq(alloc_calls, 0, "size %llu: the map allocated", (unsigned long long)cases[i].size);
		hook_off();
		cr_expect_eq(sfs_image_geom(im).size, size);
		cr_expect_eq(state_size("d.map"), map);
		cr_expect_eq(state_size("d.grow"), -1, "a grow journal left");
		cr_expect_eq(tmp_stat(ts.fd, "d").st_size, back);
	}
}

Test(sizes, truncate_past_the_limit_is_refused_before_any_work)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;
	char err[512] = "";

	tmp_write_sidecar(ts.fd, "d", "{\"size\": \"1M\", \"block_size\": \"4K\"}");
	s = tmp_store_open(&ts, &opts);
	cr_assert_eq(sfs_store_lookup(s, "d", &im, err, sizeof(err)), 0, "%s", err);
	/* data, so that 0 is a shrink refused (an empty disk may shrink) */
	memset(err, 0x5a, 512);
	cr_assert_eq(sfs_image_pin(im), 0);
	cr_assert_eq(sfs_image_write(im, err, 512, 0), 512);
	sfs_image_unpin(im);
	expect_sizes_refused(s, im, 1 << 20);
	/* and the largest is taken: 2^30 blocks of 4 KiB */
	cr_expect_eq(sfs_store_resize(s, im, sfs_geom_size_max(4096)), 0);
	cr_expect_eq(sfs_image_geom(im).size, 4 * TiB);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

/* An image created through the mount grows with its writes: one at 2^62 - 1 MiB, or one that
 * crosses the limit by a sector, is EFBIG with nothing written; a truncate the same (4kn). */
Test(sizes, a_growing_image_refuses_writes_and_truncates_past_the_limit)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;
	static char buf[8192];
	const uint64_t max = sfs_geom_size_max(64 * 1024);

	opts.defaults.block_size = 64 * 1024;
	s = tmp_store_open(&ts, &opts);
	cr_assert_eq(sfs_store_create(s, "d", &im), 0);
	sfs_image_set_growing(im, true);
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), 0, true), (ssize_t)sizeof(buf));
	cr_assert_eq(sfs_store_settle(s, im, false), 0);
	cr_expect_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), BIG - (1 << 20), true), -EFBIG);
	cr_expect_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), max - 4096, true), -EFBIG);
	cr_expect_eq(sfs_image_geom(im).size, sizeof(buf), "it shows what its writes reached");
	expect_sizes_refused(s, im, sizeof(buf));
	cr_assert_eq(sfs_store_settle(s, im, true), 0);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}
