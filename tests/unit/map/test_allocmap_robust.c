/* SPDX-License-Identifier: MIT */
/*
 * test_allocmap_robust.c - unit tests of core/map/map.c, part two:
 * damaged files and concurrency.
 *
 * Corrupted, truncated and padded map files are refused with -EUCLEAN and
 * a message saying what is wrong: a header field, or a bitmap chunk whose
 * checksum fails (one flipped bit in any chunk; the message names the
 * file, the first bad chunk's offset and blocks, and the count); a page
 * write torn at any sector boundary opens, each chunk old or new; the
 * pages an interrupted grow leaves (empty chunks or zeros) are dropped by
 * a read-write open and accepted by a read-only one, anything else past
 * the header's length is refused; SFS_MAP_SALVAGE sets exactly the blocks
 * of the bad chunks and its flush makes the file clean.  Eight threads
 * setting bits that share words give the exact count, with or without
 * flushes running, and a flush writes every page that was dirty when it
 * began even while another thread dirties pages.  Each test gets its own
 * mkdtemp directory.
 */
#include "fixtures/map_fixture.h"

#include <criterion/parameterized.h>

/* ---- damaged files ---- */

static void make_map(uint64_t nblocks)
{
	struct sfs_map_info mi = info_of(nblocks, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 1);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
}

Test(map, flipped_header_byte_fails_checksum)
{
	unsigned char b;
	char err[256];

	make_map(100);
	peek(20, &b, 1);                 /* inside the disk size */
	b ^= 0x10;
	poke(20, &b, 1);
	expect_refused(-EUCLEAN, "checksum", err, sizeof(err));
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
}

Test(map, flipped_crc_byte_fails_checksum)
{
	unsigned char b;
	char err[256];

	make_map(100);
	peek(57, &b, 1);
	b ^= 0x01;
	poke(57, &b, 1);
	expect_refused(-EUCLEAN, "checksum", err, sizeof(err));
}

Test(map, bad_magic)
{
	char err[256];

	make_map(100);
	poke(0, "XFSMAP", 6);
	expect_refused(-EUCLEAN, "magic", err, sizeof(err));
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
}

Test(map, foreign_file)
{
	char junk[8192], err[256];

	memset(junk, 'x', sizeof(junk));
	tmp_write_file(ts.fd, MAPNAME, junk, sizeof(junk));
	expect_refused(-EUCLEAN, "magic", err, sizeof(err));
}

/* A header field rewritten with its CRC recomputed: only the field is wrong. */
struct header_case {
	char what[48];
	unsigned off, width;          /* where in the header, 4 or 8 bytes */
	uint64_t value;
	char word[16];                /* a word of the refusal */
};

ParameterizedTestParameters(map, bad_header_field_with_good_crc)
{
	static struct header_case cases[] = {
		{ "unsupported version", 8, 4, 3, "version 3" },
		{ "header size", 12, 4, 512, "header size" },
		{ "logical sector not a power of two", 24, 4, 1000, "geometry" },
		{ "physical smaller than logical", 28, 4, 256, "geometry" },
		{ "block count not matching the size", 40, 8, 101, "block count" },
		{ "provisioning", 48, 4, 7, "provisioning" },
	};

	return cr_make_param_array(struct header_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct header_case *c, map, bad_header_field_with_good_crc)
{
	char err[256];

	make_map(100);
	if (c->width == 8)
		rewrite_header_u64(c->off, c->value);
	else
		rewrite_header_u32(c->off, (uint32_t)c->value);
	expect_refused_as(c->what, -EUCLEAN, c->word, err, sizeof(err));
}

Test(map, truncated_inside_the_header)
{
	char err[256];

	int fd;

	make_map(100);
	fd = openat(ts.fd, MAPNAME, O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 100), 0);
	close(fd);
	expect_refused(-EUCLEAN, "truncated", err, sizeof(err));
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
}

Test(map, empty_file)
{
	char err[256];

	tmp_write_file(ts.fd, MAPNAME, "", 0);
	expect_refused(-EUCLEAN, "truncated", err, sizeof(err));
}

Test(map, truncated_bitmap)
{
	char err[256];
	int fd;

	make_map(2 * PAGE_BITS + 1);                 /* 3 pages */
	fd = openat(ts.fd, MAPNAME, O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, HDR + 2 * 4096), 0);
	close(fd);
	expect_refused(-EUCLEAN, "truncated", err, sizeof(err));
}

Test(map, trailing_bytes)
{
	char err[256];

	make_map(100);
	poke(HDR + 4096, "!", 1);
	expect_refused(-EUCLEAN, "trailing", err, sizeof(err));
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
}

Test(map, directory_in_place_of_the_map)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(mkdirat(ts.fd, MAPNAME, 0700), 0);
	cr_expect_lt(sfs_map_open(ts.fd, MAPNAME, 0, NULL, &m, err, sizeof(err)), 0);
	cr_expect_null(m);
	cr_expect(strstr(err, MAPNAME), "'%s' should name the file", err);
}

Test(map, bits_past_the_last_block_are_dropped)
{
	unsigned char ff = 0xff;
	struct sfs_map *m;

	make_map(10);                                /* block 1 set */
	poke(HDR + 1, &ff, 1);                       /* blocks 8..15: only 8 and 9 exist */
	poke(HDR + 100, &ff, 1);                     /* far past the end */
	fix_chunk(0);
	poke(chunk_off(5) + 7, &ff, 1);              /* a chunk that holds no block at all */
	fix_chunk(5);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 3);
	cr_expect(sfs_map_test(m, 8));
	cr_expect(sfs_map_test(m, 9));
	cr_expect_eq(sfs_map_next_set(m, 2), 8);
	cr_expect_eq(sfs_map_next_set(m, 10), 10);
	/* growing must not bring them back */
	cr_expect_eq(tmp_map_grow(m, 1000 * 4096), 0);
	cr_expect_eq(sfs_map_count(m), 3);
	cr_expect_eq(sfs_map_next_set(m, 10), 1000);
	sfs_map_close(m);
}

/* ---- damaged bitmap chunks ---- */

/* 70000 blocks: 3 pages, 24 chunks; chunk 17 holds the last block (69999), 18..23 none. */
#define DMG_BLOCKS 70000ull
#define DMG_CHUNKS 24u

static bool dmg_bit(uint64_t b)
{
	return b % 1001 == 0 || b % 4032 == 4031;
}

static void make_dmg_map(void)
{
	struct sfs_map_info mi = info_of(DMG_BLOCKS, 512, false);
	struct sfs_map *m = create(&mi);

	for (uint64_t b = 0; b < DMG_BLOCKS; b++)
		if (dmg_bit(b))
			sfs_map_set(m, b);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
}

static uint64_t dmg_count(void)
{
	uint64_t n = 0;

	for (uint64_t b = 0; b < DMG_BLOCKS; b++)
		n += dmg_bit(b);
	return n;
}

/* The refusal names the file, the first bad chunk's offset and blocks, and the count. */
static void expect_damage_message(const char *err, uint64_t nbad, uint64_t first)
{
	char want[160];
	uint64_t b0 = first * CHUNK_BITS, b1 = b0 + CHUNK_BITS < DMG_BLOCKS ? b0 + CHUNK_BITS : DMG_BLOCKS;

	cr_expect(strncmp(err, MAPNAME ": ", strlen(MAPNAME) + 2) == 0, "'%s' should name the file", err);
	snprintf(want, sizeof(want), "bitmap checksum mismatch in %llu chunk%s (first at byte %llu, ",
		 (unsigned long long)nbad, nbad == 1 ? "" : "s", (unsigned long long)chunk_off(first));
	cr_expect(strstr(err, want), "'%s' should say '%s'", err, want);
	if (b0 < DMG_BLOCKS)
		snprintf(want, sizeof(want), ", blocks %llu-%llu): ", (unsigned long long)b0,
			 (unsigned long long)b1 - 1);
	else
		snprintf(want, sizeof(want), ", past the last block): ");
	cr_expect(strstr(err, want), "'%s' should say '%s'", err, want);
	cr_expect(strstr(err, "'sectorfs-img check --repair'"), "'%s' should say how to repair it", err);
}

Test(map, a_flipped_bit_in_any_chunk_is_refused)
{
	struct sfs_map *m;
	char err[512];

	make_dmg_map();
	for (uint64_t c = 0; c < DMG_CHUNKS; c++) {
		/* a bit of its bits, of its CRC, of its 4 zero bytes */
		off_t where[3] = { chunk_off(c) + (off_t)((c * 37) % CHUNK_DATA), chunk_off(c) + CHUNK_DATA + 1,
				   chunk_off(c) + CHUNK_DATA + 6 };

		for (int w = 0; w < 3; w++) {
			unsigned char b, bit = (unsigned char)(1u << ((c + (uint64_t)w) % 8));

			peek(where[w], &b, 1);
			b ^= bit;
			poke(where[w], &b, 1);
			expect_refused(-EUCLEAN, NULL, err, sizeof(err));
			expect_damage_message(err, 1, c);
			b ^= bit;
			poke(where[w], &b, 1);
		}
	}
	m = reopen();
	cr_expect_eq(sfs_map_count(m), dmg_count());
	cr_expect(sfs_map_damage(m)->chunks == 0 && sfs_map_damage(m)->blocks == 0);
	sfs_map_close(m);
}

static void scribble(uint64_t chunk, unsigned seed)
{
	unsigned char junk[CHUNK];

	for (unsigned i = 0; i < CHUNK; i++)
		junk[i] = (unsigned char)rand_r(&seed);
	poke(chunk_off(chunk), junk, CHUNK);
}

Test(map, several_bad_chunks_are_counted_the_first_named)
{
	char err[512];

	make_dmg_map();
	scribble(20, 1);
	scribble(9, 2);
	scribble(3, 3);
	expect_refused(-EUCLEAN, NULL, err, sizeof(err));
	expect_damage_message(err, 3, 3);
}

Test(map, random_bytes_over_every_bitmap_page_are_refused)
{
	struct sfs_map *m = NULL;
	char err[512];

	make_dmg_map();
	for (uint64_t c = 0; c < DMG_CHUNKS; c++)
		scribble(c, 100 + (unsigned)c);
	expect_refused(-EUCLEAN, NULL, err, sizeof(err));
	expect_damage_message(err, DMG_CHUNKS, 0);
	/* a read-only open refuses it too */
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), -EUCLEAN);
	cr_expect_null(m);
}

Test(map, zeroed_sectors_are_refused)
{
	/* what a hole or a lost write that reads back as zeros looks like */
	unsigned char zero[CHUNK] = { 0 };
	char err[512];

	make_dmg_map();
	poke(chunk_off(11), zero, CHUNK);
	expect_refused(-EUCLEAN, NULL, err, sizeof(err));
	expect_damage_message(err, 1, 11);
}

Test(map, a_chunk_moved_to_another_place_is_refused)
{
	unsigned char c[CHUNK];
	char err[512];

	make_dmg_map();
	peek(chunk_off(4), c, CHUNK);                /* valid where it is */
	poke(chunk_off(5), c, CHUNK);
	expect_refused(-EUCLEAN, NULL, err, sizeof(err));
	expect_damage_message(err, 1, 5);
}

/*
 * Power loss during a flush tears a page write at a sector boundary: the
 * first k sectors new, the rest old.  Each chunk is one sector and checks
 * by itself, so the map opens, and every chunk's bits are its old or its
 * new ones (not a mix).
 */
static bool torn_old(uint64_t b)
{
	return b % 3 == 0;
}

static bool torn_new(uint64_t b)
{
	return b % 5 == 0 || (b % 3 == 0 && b % 2 == 0);
}

Test(map, a_page_torn_at_any_sector_opens_with_old_or_new_chunks)
{
	struct sfs_map_info mi = info_of(2 * (uint64_t)PAGE_BITS, 512, false);
	unsigned char oldp[PAGE], newp[PAGE];
	struct sfs_map *m = create(&mi);

	for (uint64_t b = PAGE_BITS; b < 2 * PAGE_BITS; b++)
		if (torn_old(b))
			sfs_map_set(m, b);
	sfs_map_set(m, 7);                           /* page 0: not written again */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	peek(HDR + PAGE, oldp, PAGE);
	for (uint64_t b = PAGE_BITS; b < 2 * PAGE_BITS; b++) {
		if (torn_new(b))
			sfs_map_set(m, b);
		else
			sfs_map_clear(m, b);
	}
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	peek(HDR + PAGE, newp, PAGE);
	sfs_map_close(m);
	cr_assert_neq(memcmp(oldp, newp, PAGE), 0);
	for (unsigned k = 1; k <= 7; k++) {
		uint64_t want = 1;

		poke(HDR + PAGE, newp, k * CHUNK);
		poke(HDR + PAGE + k * CHUNK, oldp + k * CHUNK, PAGE - k * CHUNK);
		m = reopen();
		cr_expect_eq(sfs_map_damage(m)->chunks, 0);
		cr_expect(sfs_map_test(m, 7));
		for (uint64_t b = PAGE_BITS; b < 2 * PAGE_BITS; b++) {
			bool fresh = (b - PAGE_BITS) / CHUNK_BITS < k;
			bool bit = fresh ? torn_new(b) : torn_old(b);

			want += bit;
			if (sfs_map_test(m, b) != bit) {
				cr_expect_fail("%u new sectors: block %llu reads %d, its %s chunk has %d", k,
					       (unsigned long long)b, !bit, fresh ? "new" : "old", bit);
				break;
			}
		}
		cr_expect_eq(sfs_map_count(m), want, "%u new sectors", k);
		sfs_map_close(m);
	}
}

/* ---- salvage ---- */

Test(map, salvage_sets_exactly_the_bad_chunks_blocks_and_its_flush_makes_the_map_clean)
{
	/* 2 and 9: whole chunks of blocks; 17: the last 1456 blocks; 21: past the last block */
	static const uint64_t bad[] = { 2, 9, 17, 21 };
	const struct sfs_map_damage *d;
	uint64_t want = 0;
	struct sfs_map *m;
	char err[512];

	make_dmg_map();
	scribble(2, 7);
	scribble(9, 8);
	scribble(17, 9);
	scribble(21, 10);
	expect_refused(-EUCLEAN, NULL, err, sizeof(err));
	expect_damage_message(err, 4, 2);

	m = reopen_flags(SFS_MAP_SALVAGE);
	d = sfs_map_damage(m);
	cr_expect_eq(d->chunks, 4);
	cr_expect_eq(d->blocks, 2 * CHUNK_BITS + (DMG_BLOCKS - 17 * CHUNK_BITS));
	cr_expect_eq(d->first_off, (uint64_t)chunk_off(2));
	cr_expect_eq(d->first_blk, 2 * CHUNK_BITS);
	cr_expect_eq(d->first_end, 3 * CHUNK_BITS);
	for (uint64_t b = 0; b < DMG_BLOCKS; b++) {
		uint64_t c = b / CHUNK_BITS;
		bool bit = c == 2 || c == 9 || c == 17 || dmg_bit(b);

		want += bit;
		if (sfs_map_test(m, b) != bit) {
			cr_expect_fail("block %llu (chunk %llu) reads %d after salvage", (unsigned long long)b,
				       (unsigned long long)c, !bit);
			break;
		}
	}
	cr_expect_eq(sfs_map_count(m), want);
	cr_expect_eq(sfs_map_next_set(m, DMG_BLOCKS - 1), DMG_BLOCKS - 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(!chunk_checks(bad[i]), "the open alone must not write (chunk %llu)",
			  (unsigned long long)bad[i]);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);

	for (uint64_t c = 0; c < DMG_CHUNKS; c++)
		cr_expect(chunk_checks(c), "chunk %llu after the salvage's flush", (unsigned long long)c);
	m = reopen();
	cr_expect_eq(sfs_map_damage(m)->chunks, 0);
	cr_expect_eq(sfs_map_count(m), want);
	for (uint64_t b = 0; b < DMG_BLOCKS; b += 97)
		cr_expect_eq(sfs_map_test(m, b), b / CHUNK_BITS == 2 || b / CHUNK_BITS == 9 ||
			     b / CHUNK_BITS == 17 || dmg_bit(b), "block %llu", (unsigned long long)b);
	sfs_map_close(m);
}

Test(map, salvage_of_an_intact_map_changes_nothing)
{
	unsigned char *a, *b;
	size_t na, nb;
	struct sfs_map *m;

	make_dmg_map();
	a = file_bytes(&na);
	m = reopen_flags(SFS_MAP_SALVAGE);
	cr_expect_eq(sfs_map_damage(m)->chunks, 0);
	cr_expect_eq(sfs_map_damage(m)->blocks, 0);
	cr_expect_eq(sfs_map_count(m), dmg_count());
	cr_expect_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	b = file_bytes(&nb);
	cr_expect(na == nb && memcmp(a, b, na) == 0);
	free(a);
	free(b);
}

Test(map, read_only_salvage_shows_the_damage_and_writes_nothing)
{
	unsigned char *a, *b;
	size_t na, nb;
	struct sfs_map *m;

	make_dmg_map();
	scribble(6, 5);
	a = file_bytes(&na);
	m = reopen_flags(SFS_MAP_RDONLY | SFS_MAP_SALVAGE);
	cr_expect_eq(sfs_map_damage(m)->chunks, 1);
	cr_expect_eq(sfs_map_damage(m)->blocks, CHUNK_BITS);
	cr_expect(sfs_map_test(m, 6 * CHUNK_BITS + 1));
	cr_expect_eq(sfs_map_flush(m, -1), -EROFS);
	sfs_map_close(m);
	b = file_bytes(&nb);
	cr_expect(na == nb && memcmp(a, b, na) == 0, "a read-only open wrote to the file");
	free(a);
	free(b);
}

/* ---- past the header's length ---- */

/* A one-page map (block 1 set) followed by tail (len bytes), opened read-only (accepted,
 * file untouched) and read-write (accepted, tail dropped), or refused by both. */
static void open_with_tail(const unsigned char *tail, size_t len, bool grow_leftover)
{
	struct sfs_map *m = NULL;
	unsigned char *a, *b;
	size_t na, nb;
	char err[512] = "";

	make_map(100);
	poke(HDR + PAGE, tail, len);
	a = file_bytes(&na);
	if (!grow_leftover) {
		expect_refused(-EUCLEAN, "trailing data", err, sizeof(err));
		cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), -EUCLEAN);
		cr_expect(file_size() == (off_t)(HDR + PAGE + len));
		free(a);
		return;
	}
	m = reopen_flags(SFS_MAP_RDONLY);
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect(sfs_map_test(m, 1));
	sfs_map_close(m);
	b = file_bytes(&nb);
	cr_expect(na == nb && memcmp(a, b, na) == 0, "a read-only open changed the file");
	free(a);
	free(b);
	m = reopen();
	cr_expect_eq(file_size(), HDR + PAGE, "a read-write open drops an interrupted grow's pages");
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect(sfs_map_test(m, 1));
	cr_expect_eq(sfs_map_count(m), 1);
	sfs_map_close(m);
}

/* Empty chunk number idx, encoded as a grow writes it. */
static void empty_chunk(uint64_t idx, unsigned char *c)
{
	memset(c, 0, CHUNK);
	set_le32(c + CHUNK_DATA, chunk_crc_ref(idx, c));
}

Test(map, an_interrupted_grows_empty_pages_are_dropped)
{
	unsigned char t[2 * PAGE];

	for (unsigned k = 0; k < 16; k++)
		empty_chunk(8 + k, t + k * CHUNK);
	open_with_tail(t, sizeof(t), true);
}

Test(map, an_interrupted_grows_zero_bytes_are_dropped)
{
	unsigned char t[PAGE] = { 0 };

	open_with_tail(t, sizeof(t), true);
}

Test(map, an_interrupted_grows_mix_of_chunks_and_zeros_is_dropped)
{
	/* the first three sectors written, the rest not yet: and a size of 3 sectors */
	unsigned char t[PAGE] = { 0 };

	for (unsigned k = 0; k < 3; k++)
		empty_chunk(8 + k, t + k * CHUNK);
	open_with_tail(t, sizeof(t), true);
	teardown();
	setup();
	open_with_tail(t, 3 * CHUNK, true);
}

Test(map, an_empty_chunk_numbered_for_elsewhere_is_trailing_data)
{
	unsigned char t[PAGE];

	for (unsigned k = 0; k < 8; k++)
		empty_chunk(k == 5 ? 3 : 8 + k, t + k * CHUNK);
	open_with_tail(t, sizeof(t), false);
}

Test(map, a_chunk_with_bits_past_the_header_is_trailing_data)
{
	/* a grow writes empty chunks only: bits there are not a grow's */
	unsigned char t[PAGE];

	for (unsigned k = 0; k < 8; k++)
		empty_chunk(8 + k, t + k * CHUNK);
	t[2 * CHUNK + 10] = 0x01;
	set_le32(t + 2 * CHUNK + CHUNK_DATA, chunk_crc_ref(10, t + 2 * CHUNK));
	open_with_tail(t, sizeof(t), false);
}

Test(map, part_of_a_sector_past_the_header_is_trailing_data)
{
	unsigned char t[CHUNK + 100] = { 0 };

	open_with_tail(t, sizeof(t), false);
}

/* ---- concurrency ---- */

#define NTHREAD 8
#define CONC_BLOCKS (3 * PAGE_BITS + 1000)

struct setter {
	struct sfs_map *m;
	unsigned id;
	pthread_barrier_t *go;
};

static void *set_every_eighth(void *arg)
{
	struct setter *s = arg;

	pthread_barrier_wait(s->go);
	/* thread t sets t, t+8, ...: every 64-bit word is shared by all threads */
	for (uint64_t b = s->id; b < CONC_BLOCKS; b += NTHREAD)
		sfs_map_set(s->m, b);
	return NULL;
}

Test(map, concurrent_setters_give_the_exact_count)
{
	struct sfs_map_info mi = info_of(CONC_BLOCKS, 512, false);
	struct sfs_map *m = create(&mi);
	struct setter st[NTHREAD];
	pthread_t th[NTHREAD];
	pthread_barrier_t go;

	pthread_barrier_init(&go, NULL, NTHREAD);
	for (unsigned i = 0; i < NTHREAD; i++) {
		st[i] = (struct setter){ m, i, &go };
		cr_assert_eq(pthread_create(&th[i], NULL, set_every_eighth, &st[i]), 0);
	}
	for (unsigned i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	cr_expect_eq(sfs_map_count(m), CONC_BLOCKS);
	cr_expect_eq(sfs_map_next_clear(m, 0), CONC_BLOCKS);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), CONC_BLOCKS);
	cr_expect_eq(sfs_map_next_clear(m, 0), CONC_BLOCKS);
	sfs_map_close(m);
}

struct flusher {
	struct sfs_map *m;
	volatile int *stop;
	int rc;
};

static void *flush_loop(void *arg)
{
	struct flusher *f = arg;

	while (!__atomic_load_n(f->stop, __ATOMIC_ACQUIRE) && f->rc == 0)
		f->rc = sfs_map_flush(f->m, -1);
	return NULL;
}

Test(map, concurrent_setters_and_flushes_lose_nothing)
{
	struct sfs_map_info mi = info_of(CONC_BLOCKS, 512, false);
	struct sfs_map *m = create(&mi);
	struct setter st[NTHREAD];
	pthread_t th[NTHREAD], fth;
	pthread_barrier_t go;
	volatile int stop = 0;
	struct flusher fl = { m, &stop, 0 };

	pthread_barrier_init(&go, NULL, NTHREAD);
	cr_assert_eq(pthread_create(&fth, NULL, flush_loop, &fl), 0);
	for (unsigned i = 0; i < NTHREAD; i++) {
		st[i] = (struct setter){ m, i, &go };
		cr_assert_eq(pthread_create(&th[i], NULL, set_every_eighth, &st[i]), 0);
	}
	for (unsigned i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(fth, NULL);
	pthread_barrier_destroy(&go);
	cr_expect_eq(fl.rc, 0);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), CONC_BLOCKS, "a bit set during a flush must reach the next one");
	sfs_map_close(m);
}

/*
 * A flush must write every page that was dirty when it began, whatever
 * other threads do meanwhile.  Here one thread dirties page 0 (toggling a
 * bit) at a random moment just after the main thread starts a flush of
 * pages 1..64, and the main thread then reads the map file to check that
 * the bit it set in page 64 before the flush reached it.  A flush that
 * returns 0 without it breaks "fsync: everything written before is
 * durable" (SPEC).  The map lives on tmpfs when there is one, to keep
 * fdatasync cheap; the test stops at the first lost bit.
 */
#define RACE_PAGES 64
#define RACE_ITERS 1000

static struct tmpstore shm = { "", -1, -1 };

struct toggler {
	struct sfs_map *m;
	int go, stop;
};

static void *toggle_page0(void *arg)
{
	struct toggler *t = arg;
	unsigned seed = 12345, n = 0;
	int seen = 0;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		int g = __atomic_load_n(&t->go, __ATOMIC_ACQUIRE);
		int delay;

		if (g == seen)
			continue;
		seen = g;
		delay = rand_r(&seed) % 1000;
		for (volatile int k = 0; k < delay; k++)
			;
		if (n++ & 1)
			sfs_map_clear(t->m, 5);
		else
			sfs_map_set(t->m, 5);
	}
	return NULL;
}

/* Runs before the suite's teardown (Criterion calls both). */
static void shm_teardown(void)
{
	tmpstore_destroy(&shm);
}

Test(map, flush_writes_every_page_dirty_at_its_start, .fini = shm_teardown, .timeout = 60)
{
	struct sfs_map_info mi = info_of((RACE_PAGES + 1) * (uint64_t)PAGE_BITS, 512, false);
	struct toggler t = { NULL, 0, 0 };
	struct stat st;
	struct sfs_map *m;
	pthread_t th;
	int dfd = ts.fd, fd, lost_at = -1;

	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
		tmpstore_make_in(&shm, "/dev/shm", "allocmap", false);
		dfd = shm.fd;
	}
	cr_assert_eq(sfs_map_create(dfd, MAPNAME, &mi, &m), 0);
	fd = openat(dfd, MAPNAME, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	t.m = m;
	cr_assert_eq(pthread_create(&th, NULL, toggle_page0, &t), 0);
	for (int i = 0; i < RACE_ITERS && lost_at < 0; i++) {
		uint64_t b = 0;
		unsigned char byte = 0;

		for (uint64_t p = 1; p <= RACE_PAGES; p++) {
			b = p * PAGE_BITS + 8 + (uint64_t)i;
			sfs_map_set(m, b);
		}
		__atomic_store_n(&t.go, i + 1, __ATOMIC_RELEASE);
		cr_assert_eq(sfs_map_flush(m, -1), 0);
		cr_assert_eq(pread(fd, &byte, 1, bit_off(b)), 1);
		if (!(byte & (1u << (b % 8))))
			lost_at = i;
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	close(fd);
	sfs_map_close(m);
	cr_expect_eq(lost_at, -1, "flush %d returned 0 but block %llu, set before it began, is not in the map file "
		     "(a page dirtied during flush_begin took the place of one counted dirty)",
		     lost_at, (unsigned long long)(RACE_PAGES * PAGE_BITS + 8 + (uint64_t)lost_at));
}
