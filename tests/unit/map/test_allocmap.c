/* SPDX-License-Identifier: MIT */
/*
 * test_allocmap.c - unit tests of core/map/map.c, part one: format, bits,
 * durability, grow.
 *
 * Create/open round trips and the on-disk format described at the top of
 * core/map/map.c (header fields at their offsets, CRC-32C, version 2's chunks
 * of 63 words with the CRC of their index and bits, file length); the bit
 * operations (set, test, clear, count,
 * next_set, next_clear, set_range) at word and map edges; durability:
 * bits not flushed are lost when the map is closed without a flush (what
 * a crash looks like), bits set between flush_begin and flush_end wait
 * for the next flush (the crash-ordering rule), a failed data sync leaves
 * the bits dirty; grow (and its prepare, commit and abort steps) and
 * flags set in the header persist.  Part two, test_allocmap_robust.c, has damaged,
 * torn, version-1 and padded files, read-only opens, salvage and
 * concurrency.
 */
#include "fixtures/map_fixture.h"

/* A list of block numbers and its length, for the three helpers below. */
#define BLOCKS(...) (const uint64_t[]){ __VA_ARGS__ }, \
	sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)

static void set_blocks(struct sfs_map *m, const uint64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sfs_map_set(m, b[i]);
}

/* Expects each listed block set; a failure names the block. */
static void expect_set(struct sfs_map *m, const uint64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_expect(sfs_map_test(m, b[i]), "block %llu should be set", (unsigned long long)b[i]);
}

/* Expects each listed block clear; a failure names the block. */
static void expect_clear(struct sfs_map *m, const uint64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_expect(!sfs_map_test(m, b[i]), "block %llu should be clear", (unsigned long long)b[i]);
}

/* One question to next_set ('S') or next_clear ('C'): from block from, the
 * answer want; NEXTS lists them as BLOCKS lists blocks. */
struct next_case {
	char which;
	uint64_t from, want;
};

#define NEXTS(...) (const struct next_case[]){ __VA_ARGS__ }, \
	sizeof((const struct next_case[]){ __VA_ARGS__ }) / sizeof(struct next_case)

/* Asks each question; a failure names it. */
static void expect_next(struct sfs_map *m, const struct next_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t got = c[i].which == 'S' ? sfs_map_next_set(m, c[i].from)
						 : sfs_map_next_clear(m, c[i].from);

		cr_expect_eq(got, c[i].want, "next_%s(%llu) = %llu, want %llu",
			     c[i].which == 'S' ? "set" : "clear", (unsigned long long)c[i].from,
			     (unsigned long long)got, (unsigned long long)c[i].want);
	}
}

/* ---- create / open ---- */

Test(map, crc_reference_vector)
{
	/* the reference CRC used below is right: the standard check value */
	cr_assert_eq(crc32c_ref((const unsigned char *)"123456789", 9), 0xe3069283u);
}

Test(map, create_open_round_trip)
{
	struct sfs_map_info mi = { { 100 * 65536 + 4096, 512, 4096, 65536 }, SFS_PROV_ZEROEDTHICK, 0 };
	struct sfs_map *m = create(&mi);
	const struct sfs_map_info *got;

	cr_expect_eq(sfs_map_nblocks(m), 101);
	cr_expect_eq(sfs_map_count(m), 0);
	sfs_map_close(m);

	m = reopen();
	got = sfs_map_info(m);
	cr_expect_eq(got->geom.size, 100 * 65536 + 4096);
	cr_expect_eq(got->geom.lss, 512);
	cr_expect_eq(got->geom.pss, 4096);
	cr_expect_eq(got->geom.block_size, 65536);
	cr_expect_eq(got->prov, SFS_PROV_ZEROEDTHICK);
	cr_expect_eq(got->flags, 0);
	cr_expect_eq(sfs_map_nblocks(m), 101);
	cr_expect_eq(sfs_map_count(m), 0);
	cr_expect_eq(sfs_map_next_set(m, 0), 101);
	sfs_map_close(m);
}

Test(map, create_leaves_only_the_map)
{
	struct sfs_map_info mi = info_of(10, 65536, false);
	char names[512] = "";
	struct dirent *e;
	DIR *d;

	sfs_map_close(create(&mi));
	d = fdopendir(openat(ts.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	cr_assert_not_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", e->d_name);
	closedir(d);
	cr_expect_str_eq(names, MAPNAME " ", "no temp file may be left: '%s'", names);
}

Test(map, create_replaces_an_existing_file)
{
	struct sfs_map_info a = info_of(10, 65536, false), b = info_of(50, 4096, false);
	struct sfs_map *m = create(&a);

	sfs_map_set(m, 3);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	sfs_map_close(create(&b));
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 50);
	cr_expect_eq(sfs_map_count(m), 0);
	cr_expect(!sfs_map_test(m, 3));
	sfs_map_close(m);
}

Test(map, on_disk_format)
{
	struct sfs_map_info mi = { { 70000ull * 4096 - 2048, 2048, 4096, 4096 }, SFS_PROV_EAGERZEROEDTHICK, 0 };
	struct sfs_map *m = create(&mi);
	unsigned char h[HDR], byte;

	/* 70000 blocks need 3 bitmap pages of 32256 bits (2 would hold 64512) */
	cr_expect_eq(file_size(), HDR + 3 * 4096);
	sfs_map_set(m, 13);             /* chunk 0, word 0: byte 1, bit 5 */
	sfs_map_set(m, 4031);           /* chunk 0, last bit: byte 503, bit 7 */
	sfs_map_set(m, 4032 + 64 + 2);  /* chunk 1, word 1, bit 2: byte 512 + 8 */
	sfs_map_set(m, 69999);          /* last block: chunk 17 (from 68544), bit 1455: byte 181, bit 7 */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);

	peek(0, h, sizeof(h));
	cr_expect_eq(memcmp(h, "SFSMAP\0\1", 8), 0);
	cr_expect_eq(le32(h + 8), 2);
	cr_expect_eq(le32(h + 12), 4096);
	cr_expect_eq(le64(h + 16), 70000ull * 4096 - 2048);
	cr_expect_eq(le32(h + 24), 2048);
	cr_expect_eq(le32(h + 28), 4096);
	cr_expect_eq(le64(h + 32), 4096);
	cr_expect_eq(le64(h + 40), 70000);
	cr_expect_eq(le32(h + 48), SFS_PROV_EAGERZEROEDTHICK);
	cr_expect_eq(le32(h + 52), 0);
	cr_expect_eq(le32(h + 56), crc32c_ref(h, 56));
	peek(HDR + 1, &byte, 1);
	cr_expect_eq(byte, 0x20);
	peek(HDR + 503, &byte, 1);
	cr_expect_eq(byte, 0x80);
	peek(HDR + 512 + 8, &byte, 1);
	cr_expect_eq(byte, 0x04);
	peek(HDR + 17 * 512 + 181, &byte, 1);
	cr_expect_eq(byte, 0x80);
	peek(HDR + 0, &byte, 1);
	cr_expect_eq(byte, 0);
	/* every chunk, also the untouched and the empty ones past the last block, carries the CRC
	 * of its index and bits, then 4 zero bytes; bits past the last block (70000 is byte 182
	 * of chunk 17) are zero */
	for (uint64_t c = 0; c < 3 * 8; c++) {
		unsigned char chunk[CHUNK];

		peek(chunk_off(c), chunk, CHUNK);
		cr_expect_eq(le32(chunk + CHUNK_DATA), chunk_crc_ref(c, chunk), "chunk %llu", (unsigned long long)c);
		cr_expect_eq(le32(chunk + CHUNK_DATA + 4), 0, "chunk %llu", (unsigned long long)c);
		for (unsigned i = c == 17 ? 182 : 0; c >= 17 && i < CHUNK_DATA; i++)
			cr_expect_eq(chunk[i], 0, "chunk %llu byte %u", (unsigned long long)c, i);
	}
}

Test(map, empty_disk)
{
	struct sfs_map_info mi = { { 0, 512, 512, 65536 }, SFS_PROV_THIN, 0 };
	struct sfs_map *m = create(&mi);

	cr_expect_eq(sfs_map_nblocks(m), 0);
	cr_expect_eq(sfs_map_next_set(m, 0), 0);
	cr_expect_eq(sfs_map_next_clear(m, 0), 0);
	cr_expect_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	cr_expect_eq(file_size(), HDR);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 0);
	cr_expect_eq(tmp_map_grow(m, 3 * 65536), 0);
	cr_expect_eq(sfs_map_nblocks(m), 3);
	sfs_map_set(m, 2);
	cr_expect_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 3);
	cr_expect(sfs_map_test(m, 2));
	cr_expect_eq(sfs_map_count(m), 1);
	sfs_map_close(m);
}

Test(map, close_null_is_fine)
{
	sfs_map_close(NULL);
	cr_expect(!tmp_exists(ts.fd, MAPNAME));
}

Test(map, missing_file_is_enoent)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	/* the image layer relies on ENOENT to import a raw file without a map */
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, 0, NULL, &m, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), -ENOENT);
	cr_expect_null(m);
}

/* ---- bits ---- */

Test(map, set_test_clear_count)
{
	struct sfs_map_info mi = info_of(200, 4096, true);
	struct sfs_map *m = create(&mi);

	cr_assert_eq(sfs_map_nblocks(m), 200);
	set_blocks(m, BLOCKS(0, 63, 64, 199));
	cr_expect_eq(sfs_map_count(m), 4);
	sfs_map_set(m, 64);                       /* again: counted once */
	cr_expect_eq(sfs_map_count(m), 4);
	expect_set(m, BLOCKS(0, 63, 64, 199));
	expect_clear(m, BLOCKS(1, 62, 65, 198));
	sfs_map_clear(m, 63);
	cr_expect(!sfs_map_test(m, 63));
	cr_expect(sfs_map_test(m, 64));
	cr_expect_eq(sfs_map_count(m), 3);
	sfs_map_clear(m, 63);                     /* clear of a clear bit changes nothing */
	sfs_map_clear(m, 100);
	cr_expect_eq(sfs_map_count(m), 3);
	sfs_map_close(m);
}

Test(map, next_set_and_next_clear)
{
	struct sfs_map_info mi = info_of(200, 4096, false);
	struct sfs_map *m = create(&mi);

	expect_next(m, NEXTS({ 'S', 0, 200 }, { 'C', 0, 0 }, { 'C', 199, 199 }));
	set_blocks(m, BLOCKS(5, 64, 130));
	expect_next(m, NEXTS({ 'S', 0, 5 }, { 'S', 5, 5 }, { 'S', 6, 64 }, { 'S', 65, 130 },
			     { 'S', 131, 200 }, { 'S', 200, 200 }, { 'S', 5000, 200 },
			     { 'C', 5, 6 }, { 'C', 64, 65 }, { 'C', 200, 200 }));
	sfs_map_close(m);
}

Test(map, next_clear_on_a_full_map_ignores_bits_past_the_end)
{
	/* 70 blocks: the second word has 58 bits past the end, which are not blocks */
	struct sfs_map_info mi = info_of(70, 4096, false);
	struct sfs_map *m = create(&mi);

	for (uint64_t b = 0; b < 70; b++)
		sfs_map_set(m, b);
	cr_expect_eq(sfs_map_count(m), 70);
	expect_next(m, NEXTS({ 'C', 0, 70 }, { 'C', 64, 70 }));
	sfs_map_clear(m, 69);
	expect_next(m, NEXTS({ 'C', 0, 69 }, { 'S', 69, 70 }));
	sfs_map_close(m);
}

Test(map, set_range)
{
	struct sfs_map_info mi = info_of(300, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set_range(m, 3, 200);            /* head, two whole words, tail */
	cr_expect_eq(sfs_map_count(m), 197);
	cr_expect(!sfs_map_test(m, 2));
	expect_set(m, BLOCKS(3, 63, 64, 128, 199));
	cr_expect(!sfs_map_test(m, 200));
	cr_expect_eq(sfs_map_next_clear(m, 3), 200);

	sfs_map_set_range(m, 250, 250);          /* empty */
	cr_expect_eq(sfs_map_count(m), 197);

	/* overlapping a partly set word: counted exactly */
	sfs_map_set(m, 260);
	sfs_map_set(m, 300 - 1);
	sfs_map_set_range(m, 256, 300);
	cr_expect_eq(sfs_map_count(m), 197 + 44);
	sfs_map_set_range(m, 0, 300);
	cr_expect_eq(sfs_map_count(m), 300);
	cr_expect_eq(sfs_map_next_clear(m, 0), 300);

	/* and it persists */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 300);
	sfs_map_close(m);
}

Test(map, set_range_word_aligned_over_set_word)
{
	struct sfs_map_info mi = info_of(256, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 70);
	sfs_map_set(m, 127);
	sfs_map_set_range(m, 64, 192);
	cr_expect_eq(sfs_map_count(m), 128);
	cr_expect(!sfs_map_test(m, 63));
	cr_expect(!sfs_map_test(m, 192));
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 128);
	cr_expect(sfs_map_test(m, 64));
	cr_expect(sfs_map_test(m, 191));
	sfs_map_close(m);
}

/* ---- durability ---- */

Test(map, flushed_bits_persist)
{
	struct sfs_map_info mi = info_of(100000, 512, false);   /* 4 bitmap pages */
	struct sfs_map *m = create(&mi);

	set_blocks(m, BLOCKS(1, PAGE_BITS + 7, 3 * PAGE_BITS + 1, 99999));
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 4);
	expect_set(m, BLOCKS(1, PAGE_BITS + 7, 3 * PAGE_BITS + 1, 99999));
	cr_expect_eq(sfs_map_next_set(m, 2), PAGE_BITS + 7);
	sfs_map_close(m);
}

Test(map, unflushed_bits_are_lost_on_crash)
{
	struct sfs_map_info mi = info_of(100, 65536, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 10);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_set(m, 11);                  /* never flushed */
	sfs_map_clear(m, 10);                /* never flushed either */
	sfs_map_close(m);                    /* = crash */
	m = reopen();
	cr_expect(sfs_map_test(m, 10), "flushed bit must survive, unflushed clear must not");
	cr_expect(!sfs_map_test(m, 11), "unflushed bit must be lost");
	cr_expect_eq(sfs_map_count(m), 1);
	sfs_map_close(m);
}

Test(map, cleared_bits_persist)
{
	struct sfs_map_info mi = info_of(100, 65536, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set_range(m, 0, 100);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_clear(m, 42);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect(!sfs_map_test(m, 42));
	cr_expect_eq(sfs_map_count(m), 99);
	sfs_map_close(m);
}

static void crash_ordering(uint64_t a, uint64_t b)
{
	struct sfs_map_info mi = info_of(100000, 512, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, a);
	cr_assert_eq(sfs_map_flush_begin(m), 0);
	sfs_map_set(m, b);                   /* its data is not covered by this flush's sync */
	cr_assert_eq(sfs_map_flush_end(m), 0);
	sfs_map_close(m);                    /* crash before the next flush */
	m = reopen();
	cr_expect(sfs_map_test(m, a), "bit set before flush_begin must be durable");
	cr_expect(!sfs_map_test(m, b), "bit set during the flush must wait for the next one");
	cr_expect_eq(sfs_map_count(m), 1);
	sfs_map_close(m);
}

Test(map, crash_ordering_same_page)
{
	crash_ordering(5, 6);
}

Test(map, crash_ordering_other_page)
{
	crash_ordering(5, 2 * PAGE_BITS + 6);
}

Test(map, bit_set_during_flush_goes_out_with_the_next)
{
	struct sfs_map_info mi = info_of(1000, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 1);
	cr_assert_eq(sfs_map_flush_begin(m), 0);
	sfs_map_set(m, 2);
	cr_assert_eq(sfs_map_flush_end(m), 0);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect(sfs_map_test(m, 1));
	cr_expect(sfs_map_test(m, 2));
	sfs_map_close(m);
}

Test(map, empty_flush_is_fine)
{
	struct sfs_map_info mi = info_of(10, 4096, false);
	struct sfs_map *m = create(&mi);

	cr_expect_eq(sfs_map_flush_begin(m), 0);
	cr_expect_eq(sfs_map_flush_end(m), 0);
	cr_expect_eq(sfs_map_flush(m, -1), 0);
	/* and the flush lock was released each time: a second round does not hang */
	cr_expect_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
}

Test(map, flush_with_a_data_file)
{
	struct sfs_map_info mi = info_of(16, 65536, false);
	struct sfs_map *m = create(&mi);
	char buf[4096];
	int dfd = openat(ts.fd, "data", O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	cr_assert_geq(dfd, 0);
	memset(buf, 0xab, sizeof(buf));
	cr_assert_eq(pwrite(dfd, buf, sizeof(buf), 3 * 65536), (ssize_t)sizeof(buf));
	sfs_map_set(m, 3);
	cr_expect_eq(sfs_map_flush(m, dfd), 0);
	sfs_map_close(m);
	close(dfd);
	m = reopen();
	cr_expect(sfs_map_test(m, 3));
	cr_expect_eq(sfs_map_count(m), 1);
	sfs_map_close(m);
}

Test(map, failed_data_sync_keeps_bits_dirty)
{
	struct sfs_map_info mi = info_of(16, 65536, false);
	struct sfs_map *m = create(&mi);
	int bad = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_geq(bad, 0);
	close(bad);                              /* a closed descriptor: fdatasync fails */
	sfs_map_set(m, 7);
	cr_expect_eq(sfs_map_flush(m, bad), -EBADF);
	sfs_map_close(m);
	m = reopen();
	cr_expect(!sfs_map_test(m, 7), "the bit must not reach the map when the data sync failed");
	sfs_map_set(m, 7);
	cr_expect_eq(sfs_map_flush(m, bad), -EBADF);
	cr_expect_eq(sfs_map_flush(m, -1), 0);   /* the next flush writes it */
	sfs_map_close(m);
	m = reopen();
	cr_expect(sfs_map_test(m, 7), "a bit whose flush failed must stay dirty for the next flush");
	sfs_map_close(m);
}

/* ---- grow and flags ---- */

/* Expects the map file's header to hold nblocks blocks and flags, under a
 * valid CRC; a failure says when. */
static void expect_header(uint64_t nblocks, uint32_t flags, const char *when)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	cr_expect_eq(le64(h + 40), nblocks, "%s: header nblocks %llu, want %llu", when,
		     (unsigned long long)le64(h + 40), (unsigned long long)nblocks);
	cr_expect_eq(le32(h + 52), flags, "%s: header flags %u, want %u", when, le32(h + 52), flags);
	cr_expect_eq(le32(h + 56), crc32c_ref(h, 56), "%s: header CRC", when);
}

/* The grow tests' start: a thin map of 100 blocks of 512 bytes (one page)
 * with block 3 set, and flushed when flush; they grow it to GROW_NB blocks,
 * three pages. */
#define GROW_NB (2 * PAGE_BITS + 100)

static struct sfs_map *one_page_with_3(bool flush)
{
	struct sfs_map_info mi = info_of(100, 512, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 3);
	if (flush)
		cr_assert_eq(sfs_map_flush(m, -1), 0);
	return m;
}

Test(map, grow_within_a_page)
{
	struct sfs_map_info mi = info_of(100, 4096, true);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 0);
	sfs_map_set(m, 99);                        /* the partial last block */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	cr_expect_eq(tmp_map_grow(m, 300 * 4096), 0);
	cr_expect_eq(sfs_map_nblocks(m), 300);
	cr_expect_eq(sfs_map_info(m)->geom.size, 300 * 4096);
	cr_expect(sfs_map_test(m, 0));
	cr_expect(sfs_map_test(m, 99));
	cr_expect_eq(sfs_map_next_set(m, 100), 300);
	cr_expect_eq(sfs_map_count(m), 2);
	cr_expect_eq(file_size(), HDR + 4096);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 300);
	cr_expect_eq(sfs_map_info(m)->geom.size, 300 * 4096);
	cr_expect(sfs_map_test(m, 99));
	cr_expect_eq(sfs_map_count(m), 2);
	sfs_map_close(m);
}

Test(map, grow_across_pages)
{
	struct sfs_map *m;
	uint64_t nb = GROW_NB;

	m = one_page_with_3(false);
	sfs_map_set(m, 99);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_set(m, 50);                        /* dirty across the grow */
	cr_expect_eq(tmp_map_grow(m, nb * 512), 0);
	cr_expect_eq(sfs_map_nblocks(m), nb);
	cr_expect_eq(file_size(), HDR + 3 * 4096);
	expect_set(m, BLOCKS(3, 50, 99));
	cr_expect_eq(sfs_map_next_set(m, 100), nb, "new blocks must be clear");
	cr_expect_eq(sfs_map_count(m), 3);
	sfs_map_set(m, nb - 1);
	sfs_map_set(m, PAGE_BITS);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), nb);
	cr_expect_eq(sfs_map_count(m), 5);
	cr_expect(sfs_map_test(m, 50), "a bit dirty before grow must still be flushed");
	cr_expect(sfs_map_test(m, PAGE_BITS));
	cr_expect(sfs_map_test(m, nb - 1));
	sfs_map_close(m);
}

Test(map, grow_refuses_shrink)
{
	struct sfs_map_info mi = info_of(100, 4096, false);
	struct sfs_map *m = create(&mi);

	cr_expect_eq(tmp_map_grow(m, 99 * 4096), -EINVAL);
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect_eq(tmp_map_grow(m, 100 * 4096), 0);   /* same size: nothing to do */
	cr_expect_eq(sfs_map_nblocks(m), 100);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_info(m)->geom.size, 100 * 4096);
	sfs_map_close(m);
}

Test(map, set_flags_persists)
{
	struct sfs_map_info mi = info_of(10, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 4);
	cr_expect_eq(sfs_map_set_prov(m, sfs_map_info(m)->prov, SFS_MAP_F_ZEROED), 0);
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	sfs_map_close(m);                           /* no flush: flags are durable by themselves */
	expect_header(10, SFS_MAP_F_ZEROED, "after set_prov");
	m = reopen();
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	cr_expect(!sfs_map_test(m, 4), "setting flags must not flush bits");
	cr_expect_eq(sfs_map_set_prov(m, sfs_map_info(m)->prov, 0), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_info(m)->flags, 0);
	sfs_map_close(m);
}

Test(map, grow_prepare_writes_empty_chunks_and_changes_nothing_else)
{
	struct sfs_map *m = one_page_with_3(true);
	uint64_t nb = GROW_NB;

	cr_assert_eq(sfs_map_grow_prepare(m, nb * 512), 0);
	cr_expect_eq(file_size(), HDR + 3 * PAGE, "prepare extends the file");
	for (uint64_t c = 0; c < 24; c++)
		cr_expect(chunk_checks(c), "chunk %llu", (unsigned long long)c);
	for (uint64_t b = 100; b < nb; b += 131)
		cr_expect(!file_bit(b), "new block %llu must be clear", (unsigned long long)b);
	expect_header(100, 0, "after prepare: the header is the commit's");
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect(sfs_map_test(m, 3));
	sfs_map_close(m);                            /* a crash between prepare and commit */
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect(sfs_map_test(m, 3));
	cr_expect_eq(sfs_map_count(m), 1);
	cr_expect_eq(file_size(), HDR + PAGE, "the open drops the uncommitted pages");
	sfs_map_close(m);
}

Test(map, grow_commit_writes_the_header_and_switches_memory)
{
	struct sfs_map *m = one_page_with_3(false);
	uint64_t nb = GROW_NB;

	cr_assert_eq(sfs_map_grow_prepare(m, nb * 512), 0);
	cr_assert_eq(sfs_map_grow_commit(m, nb * 512, SFS_MAP_F_ZEROED), 0);
	cr_expect_eq(sfs_map_nblocks(m), nb);
	cr_expect_eq(sfs_map_info(m)->geom.size, nb * 512);
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	expect_header(nb, SFS_MAP_F_ZEROED, "after commit");
	cr_expect_eq(sfs_map_next_set(m, 4), nb);
	sfs_map_set(m, nb - 1);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), nb);
	cr_expect(sfs_map_test(m, 3), "a bit dirty across the grow is flushed");
	cr_expect(sfs_map_test(m, nb - 1));
	cr_expect_eq(sfs_map_count(m), 2);
	sfs_map_close(m);
}

Test(map, grow_abort_after_prepare_leaves_the_old_size)
{
	struct sfs_map *m = one_page_with_3(true);
	uint64_t nb = GROW_NB;

	cr_assert_eq(sfs_map_grow_prepare(m, nb * 512), 0);
	cr_expect_eq(sfs_map_grow_abort(m), 0);
	cr_expect_eq(file_size(), HDR + PAGE, "abort cuts the file back");
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect_eq(sfs_map_grow_commit(m, nb * 512, 0), -EINVAL, "nothing is prepared any more");
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect_eq(sfs_map_info(m)->geom.size, 100 * 512);
	cr_expect(sfs_map_test(m, 3));
	/* and it grows later */
	cr_expect_eq(tmp_map_grow(m, nb * 512), 0);
	cr_expect_eq(sfs_map_nblocks(m), nb);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), nb);
	sfs_map_close(m);
}

Test(map, grow_commit_needs_the_prepare_of_its_size)
{
	struct sfs_map_info mi = info_of(100, 512, false);
	struct sfs_map *m = create(&mi);
	uint64_t a = (2 * PAGE_BITS + 100) * 512ull, b = (PAGE_BITS + 5) * 512ull;

	cr_expect_eq(sfs_map_grow_commit(m, a, 0), -EINVAL, "no prepare");
	cr_assert_eq(sfs_map_grow_prepare(m, a), 0);
	cr_expect_eq(sfs_map_grow_commit(m, b, 0), -EINVAL, "prepared for another size");
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_assert_eq(sfs_map_grow_prepare(m, b), 0);     /* a new prepare replaces the first */
	cr_expect_eq(sfs_map_grow_commit(m, b, 0), 0);
	cr_expect_eq(sfs_map_nblocks(m), PAGE_BITS + 5);
	sfs_map_close(m);
	/* the first prepare's third page is past what the header needs: dropped */
	m = reopen();
	cr_expect_eq(sfs_map_nblocks(m), PAGE_BITS + 5);
	cr_expect_eq(file_size(), HDR + 2 * PAGE);
	sfs_map_close(m);
}

Test(map, grow_prepare_refuses_shrink)
{
	struct sfs_map_info mi = info_of(100, 512, false);
	struct sfs_map *m = create(&mi);

	cr_expect_eq(sfs_map_grow_prepare(m, 99 * 512), -EINVAL);
	cr_expect_eq(sfs_map_grow_commit(m, 99 * 512, 0), -EINVAL);
	cr_expect_eq(file_size(), HDR + PAGE);
	sfs_map_close(m);
}

/* ---- version 1 ---- */

/* 64600 blocks: 2 pages of version 1 (32768 bits each), 3 of version 2 (32256 each). */
#define V1_BLOCKS 64600ull
static const uint64_t v1_set[] = { 0, 1, 63, 64, 4031, 4032, 32255, 32256, 32767, 32768, 64511, 64512, 64599 };
#define V1_NSET (sizeof(v1_set) / sizeof(v1_set[0]))

static void expect_v1_bits(const struct sfs_map *m)
{
	size_t i = 0;

	cr_expect_eq(sfs_map_nblocks(m), V1_BLOCKS);
	cr_expect_eq(sfs_map_count(m), V1_NSET);
	for (uint64_t b = sfs_map_next_set(m, 0); b < V1_BLOCKS; b = sfs_map_next_set(m, b + 1), i++)
		cr_expect(i < V1_NSET && b == v1_set[i], "block %llu set", (unsigned long long)b);
	cr_expect_eq(i, V1_NSET);
}

Test(map, version_1_is_converted_by_a_read_write_open)
{
	struct sfs_map_info mi = info_of(V1_BLOCKS, 512, false);
	struct logcap cap;
	struct sfs_log log;
	struct sfs_map *m = NULL;
	unsigned char h[64];
	char err[256] = "";

	logcap_init(&cap);
	log = logcap_sink(&cap);
	mi.prov = SFS_PROV_ZEROEDTHICK;
	write_v1_map(&mi, v1_set, V1_NSET, 0);
	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, 0, &log, &m, err, sizeof(err)), 0, "%s", err);
	expect_v1_bits(m);
	cr_expect_eq(sfs_map_info(m)->prov, SFS_PROV_ZEROEDTHICK);
	cr_expect_eq(cap.count, 1, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, MAPNAME, "version 1", "version 2"), 1, "%s", cap.buf);
	peek(0, h, sizeof(h));
	cr_expect_eq(le32(h + 8), 2);
	cr_expect_eq(le32(h + 56), crc32c_ref(h, 56));
	cr_expect_eq(file_size(), HDR + 3 * PAGE);
	for (uint64_t c = 0; c < 24; c++)
		cr_expect(chunk_checks(c), "chunk %llu", (unsigned long long)c);
	for (size_t i = 0; i < V1_NSET; i++)
		cr_expect(file_bit(v1_set[i]), "block %llu in the new file", (unsigned long long)v1_set[i]);
	cr_expect(!file_bit(2) && !file_bit(32766) && !file_bit(V1_BLOCKS - 2));
	cr_expect_eq(count_tmp(ts.fd), 0, "no temporary file left");
	/* the open map writes to the new file */
	sfs_map_set(m, 2);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	cr_expect(file_bit(2));
	logcap_clear(&cap);
	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, 0, &log, &m, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_map_count(m), V1_NSET + 1);
	cr_expect_eq(cap.count, 0, "converted once: %s", cap.buf);
	sfs_map_close(m);
}

Test(map, version_1_is_not_converted_by_a_read_only_open)
{
	struct sfs_map_info mi = info_of(V1_BLOCKS, 512, false);
	struct logcap cap;
	struct sfs_log log;
	struct sfs_map *m = NULL;
	unsigned char *a, *b;
	size_t na, nb;
	char err[256] = "";

	logcap_init(&cap);
	log = logcap_sink(&cap);
	write_v1_map(&mi, v1_set, V1_NSET, 0);
	a = file_bytes(&na);
	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, SFS_MAP_RDONLY, &log, &m, err, sizeof(err)), 0, "%s", err);
	expect_v1_bits(m);
	cr_expect_eq(sfs_map_flush(m, -1), -EROFS);
	sfs_map_close(m);
	b = file_bytes(&nb);
	cr_expect(na == nb && memcmp(a, b, na) == 0, "a read-only open changed a version-1 file");
	cr_expect_eq(cap.count, 0, "%s", cap.buf);
	free(a);
	free(b);
}

Test(map, version_1_with_an_interrupted_grows_zero_pages)
{
	struct sfs_map_info mi = info_of(V1_BLOCKS, 512, false);
	struct sfs_map *m;

	write_v1_map(&mi, v1_set, V1_NSET, 2 * PAGE);
	m = reopen_flags(SFS_MAP_RDONLY);
	expect_v1_bits(m);
	sfs_map_close(m);
	cr_expect_eq(file_size(), HDR + 4 * PAGE);
	m = reopen();
	expect_v1_bits(m);
	sfs_map_close(m);
	cr_expect_eq(file_size(), HDR + 3 * PAGE, "converted, the leftover pages gone");
}

Test(map, version_1_bits_past_the_last_block_are_dropped)
{
	/* version 1 had no checksum: junk there opened, and still does, without it */
	struct sfs_map_info mi = info_of(10, 512, false);
	static const uint64_t set[] = { 1, 9, 10, 11, 5000, 32767 };
	struct sfs_map *m;

	write_v1_map(&mi, set, 6, 0);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 2);
	cr_expect_eq(sfs_map_next_set(m, 2), 9);
	sfs_map_close(m);
	cr_expect(file_bit(1) && file_bit(9) && !file_bit(10) && !file_bit(5000));
}

/* ---- read-only opens ---- */

/* Open read-only, try every change, close: the file's bytes, size, blocks and mtime are as
 * before. */
static void expect_read_only_changes_nothing(const char *what)
{
	struct stat s0 = tmp_stat(ts.fd, MAPNAME), s1;
	unsigned char *a, *b;
	size_t na, nb;
	struct sfs_map *m;

	a = file_bytes(&na);
	m = reopen_flags(SFS_MAP_RDONLY);
	sfs_map_set(m, 0);                          /* in memory: allowed */
	cr_expect(sfs_map_test(m, 0));
	cr_expect_eq(sfs_map_flush(m, -1), -EROFS, "%s", what);
	cr_expect_eq(sfs_map_flush_begin(m), -EROFS, "%s", what);
	cr_expect_eq(sfs_map_set_prov(m, sfs_map_info(m)->prov, SFS_MAP_F_ZEROED), -EROFS, "%s", what);
	cr_expect_eq(tmp_map_grow(m, sfs_map_info(m)->geom.size * 4), -EROFS, "%s", what);
	cr_expect_eq(sfs_map_grow_prepare(m, sfs_map_info(m)->geom.size * 4), -EROFS, "%s", what);
	cr_expect_eq(sfs_map_grow_abort(m), -EROFS, "%s", what);
	sfs_map_close(m);
	s1 = tmp_stat(ts.fd, MAPNAME);
	b = file_bytes(&nb);
	cr_expect(na == nb && memcmp(a, b, na) == 0, "%s: the bytes changed", what);
	cr_expect_eq(s1.st_size, s0.st_size, "%s", what);
	cr_expect_eq(s1.st_blocks, s0.st_blocks, "%s: space reserved", what);
	cr_expect(s1.st_mtim.tv_sec == s0.st_mtim.tv_sec && s1.st_mtim.tv_nsec == s0.st_mtim.tv_nsec,
		  "%s: mtime changed", what);
	free(a);
	free(b);
}

Test(map, read_only_open_changes_nothing)
{
	struct sfs_map_info mi = info_of(2 * PAGE_BITS, 512, false);
	struct sfs_map *m = create(&mi);
	unsigned char zero[PAGE] = { 0 };
	int fd;

	sfs_map_set(m, 5);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	expect_read_only_changes_nothing("a clean map");
	cr_assert_eq(sfs_map_grow_prepare(m, 5ull * PAGE_BITS * 512), 0);
	sfs_map_close(m);                            /* crash after the prepare */
	cr_assert_eq(file_size(), HDR + 5 * PAGE);
	expect_read_only_changes_nothing("a map with an interrupted grow's pages");
	poke(HDR + 5 * PAGE, zero, PAGE);
	expect_read_only_changes_nothing("a map with an interrupted grow's pages and zeros");

	write_v1_map(&mi, v1_set, 3, 0);
	expect_read_only_changes_nothing("a version-1 map");
	write_v1_map(&mi, v1_set, 3, PAGE);
	expect_read_only_changes_nothing("a version-1 map with a zero page past its end");
	/* version-1 maps could have holes, which a read-write open used to fill (fallocate) */
	write_v1_map(&mi, NULL, 0, 0);
	fd = openat(ts.fd, MAPNAME, O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, HDR, 2 * PAGE) == 0) {
		close(fd);
		cr_assert_lt(tmp_stat(ts.fd, MAPNAME).st_blocks * 512, HDR + 2 * PAGE);
		expect_read_only_changes_nothing("a version-1 map with holes");
	} else {
		close(fd);
		cr_log_warn("no hole punching here: %s", strerror(errno));
	}
}
