/*
 * test_allocmap.c - unit tests of core/allocmap.c: the allocation map.
 *
 * Create/open round trips and the on-disk format described at the top of
 * allocmap.c (header fields at their offsets, CRC-32C, bit b of byte i is
 * block 8*i+b, file length); the bit operations (set, test, clear, count,
 * next_set, next_clear, set_range) at word and map edges; durability:
 * bits not flushed are lost when the map is closed without a flush (what
 * a crash looks like), bits set between flush_begin and flush_end wait
 * for the next flush (the crash-ordering rule), a failed data sync leaves
 * the bits dirty; grow and set_flags persist; corrupted, truncated and
 * padded files are refused with -EUCLEAN and a message saying what is
 * wrong; eight threads setting bits that share words give the exact count,
 * with or without flushes running, and a flush writes every page that was
 * dirty when it began even while another thread dirties pages.  Each test
 * gets its own mkdtemp directory, removed by the fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "allocmap.h"
#include "tmpstore.h"

#define MAPNAME "disk.map"
#define HDR 4096u
#define PAGE_BITS (4096u * 8u)

static struct tmpstore ts;

static void setup(void)
{
	tmpstore_make(&ts, "allocmap", false);
}

static void teardown(void)
{
	tmpstore_destroy(&ts);
}

TestSuite(map, .init = setup, .fini = teardown, .timeout = 30);

/* Info of a thin disk of nblocks blocks of bs bytes (the last one bs/2 when half);
 * 512e when the block holds a 4 KiB sector, else 512n. */
static struct sfs_map_info info_of(uint64_t nblocks, uint64_t bs, bool half)
{
	uint32_t pss = bs >= 4096 ? 4096 : 512;
	struct sfs_map_info mi = { { nblocks * bs - (half ? bs / 2 : 0), 512, pss, bs }, SFS_PROV_THIN, 0 };

	return mi;
}

static struct sfs_map *create(const struct sfs_map_info *mi)
{
	struct sfs_map *m = NULL;

	cr_assert_eq(sfs_map_create(ts.fd, MAPNAME, mi, &m), 0);
	cr_assert_not_null(m);
	return m;
}

static struct sfs_map *reopen(void)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, &m, err, sizeof(err)), 0, "open: %s", err);
	cr_assert_not_null(m);
	return m;
}

/* Open a map expected to be refused: returns the error message. */
static void expect_refused(int want, const char *word, char *err, size_t errlen)
{
	struct sfs_map *m = NULL;

	err[0] = '\0';
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, &m, err, errlen), want, "err: %s", err);
	cr_expect_null(m);
	if (word)
		cr_expect(strstr(err, word), "'%s' should say '%s'", err, word);
	if (m)
		sfs_map_close(m);
}

static off_t file_size(void)
{
	return tmp_stat(ts.fd, MAPNAME).st_size;
}

static void poke(off_t off, const void *data, size_t len)
{
	int fd = openat(ts.fd, MAPNAME, O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static void peek(off_t off, void *data, size_t len)
{
	int fd = openat(ts.fd, MAPNAME, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, data, len, off), (ssize_t)len);
	close(fd);
}

/* CRC-32C (Castagnoli, reflected), written independently of the core. */
static uint32_t crc32c_ref(const unsigned char *p, size_t n)
{
	uint32_t crc = ~0u;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void set_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void set_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrite the header with a field changed and a correct CRC. */
static void rewrite_header_u32(unsigned off, uint32_t v)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	set_le32(h + off, v);
	set_le32(h + 56, crc32c_ref(h, 56));
	poke(0, h, sizeof(h));
}

static void rewrite_header_u64(unsigned off, uint64_t v)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	set_le64(h + off, v);
	set_le32(h + 56, crc32c_ref(h, 56));
	poke(0, h, sizeof(h));
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

	/* 70000 blocks need 3 bitmap pages of 32768 bits */
	cr_expect_eq(file_size(), HDR + 3 * 4096);
	sfs_map_set(m, 13);             /* byte 1, bit 5 */
	sfs_map_set(m, 69999);          /* last block: byte 8749, bit 7 */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);

	peek(0, h, sizeof(h));
	cr_expect_eq(memcmp(h, "SFSMAP\0\1", 8), 0);
	cr_expect_eq(le32(h + 8), 1);
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
	peek(HDR + 8749, &byte, 1);
	cr_expect_eq(byte, 0x80);
	peek(HDR + 0, &byte, 1);
	cr_expect_eq(byte, 0);
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
	cr_expect_eq(sfs_map_grow(m, 3 * 65536), 0);
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
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, &m, err, sizeof(err)), -ENOENT);
	cr_expect_null(m);
}

/* ---- bits ---- */

Test(map, set_test_clear_count)
{
	struct sfs_map_info mi = info_of(200, 4096, true);
	struct sfs_map *m = create(&mi);

	cr_assert_eq(sfs_map_nblocks(m), 200);
	sfs_map_set(m, 0);
	sfs_map_set(m, 63);
	sfs_map_set(m, 64);
	sfs_map_set(m, 199);
	cr_expect_eq(sfs_map_count(m), 4);
	sfs_map_set(m, 64);                       /* again: counted once */
	cr_expect_eq(sfs_map_count(m), 4);
	cr_expect(sfs_map_test(m, 0));
	cr_expect(sfs_map_test(m, 63));
	cr_expect(sfs_map_test(m, 64));
	cr_expect(sfs_map_test(m, 199));
	cr_expect(!sfs_map_test(m, 1));
	cr_expect(!sfs_map_test(m, 62));
	cr_expect(!sfs_map_test(m, 65));
	cr_expect(!sfs_map_test(m, 198));
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

	cr_expect_eq(sfs_map_next_set(m, 0), 200);
	cr_expect_eq(sfs_map_next_clear(m, 0), 0);
	cr_expect_eq(sfs_map_next_clear(m, 199), 199);
	sfs_map_set(m, 5);
	sfs_map_set(m, 64);
	sfs_map_set(m, 130);
	cr_expect_eq(sfs_map_next_set(m, 0), 5);
	cr_expect_eq(sfs_map_next_set(m, 5), 5);
	cr_expect_eq(sfs_map_next_set(m, 6), 64);
	cr_expect_eq(sfs_map_next_set(m, 65), 130);
	cr_expect_eq(sfs_map_next_set(m, 131), 200);
	cr_expect_eq(sfs_map_next_set(m, 200), 200);
	cr_expect_eq(sfs_map_next_set(m, 5000), 200);
	cr_expect_eq(sfs_map_next_clear(m, 5), 6);
	cr_expect_eq(sfs_map_next_clear(m, 64), 65);
	cr_expect_eq(sfs_map_next_clear(m, 200), 200);
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
	cr_expect_eq(sfs_map_next_clear(m, 0), 70);
	cr_expect_eq(sfs_map_next_clear(m, 64), 70);
	sfs_map_clear(m, 69);
	cr_expect_eq(sfs_map_next_clear(m, 0), 69);
	cr_expect_eq(sfs_map_next_set(m, 69), 70);
	sfs_map_close(m);
}

Test(map, set_range)
{
	struct sfs_map_info mi = info_of(300, 4096, false);
	struct sfs_map *m = create(&mi);

	sfs_map_set_range(m, 3, 200);            /* head, two whole words, tail */
	cr_expect_eq(sfs_map_count(m), 197);
	cr_expect(!sfs_map_test(m, 2));
	cr_expect(sfs_map_test(m, 3));
	cr_expect(sfs_map_test(m, 63));
	cr_expect(sfs_map_test(m, 64));
	cr_expect(sfs_map_test(m, 128));
	cr_expect(sfs_map_test(m, 199));
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

	sfs_map_set(m, 1);
	sfs_map_set(m, PAGE_BITS + 7);
	sfs_map_set(m, 3 * PAGE_BITS + 1);
	sfs_map_set(m, 99999);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 4);
	cr_expect(sfs_map_test(m, 1));
	cr_expect(sfs_map_test(m, PAGE_BITS + 7));
	cr_expect(sfs_map_test(m, 3 * PAGE_BITS + 1));
	cr_expect(sfs_map_test(m, 99999));
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

Test(map, grow_within_a_page)
{
	struct sfs_map_info mi = info_of(100, 4096, true);
	struct sfs_map *m = create(&mi);

	sfs_map_set(m, 0);
	sfs_map_set(m, 99);                        /* the partial last block */
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	cr_expect_eq(sfs_map_grow(m, 300 * 4096), 0);
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
	struct sfs_map_info mi = info_of(100, 512, false);
	struct sfs_map *m = create(&mi);
	uint64_t nb = 2 * PAGE_BITS + 100;

	sfs_map_set(m, 3);
	sfs_map_set(m, 99);
	cr_assert_eq(sfs_map_flush(m, -1), 0);
	sfs_map_set(m, 50);                        /* dirty across the grow */
	cr_expect_eq(sfs_map_grow(m, nb * 512), 0);
	cr_expect_eq(sfs_map_nblocks(m), nb);
	cr_expect_eq(file_size(), HDR + 3 * 4096);
	cr_expect(sfs_map_test(m, 3));
	cr_expect(sfs_map_test(m, 50));
	cr_expect(sfs_map_test(m, 99));
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

	cr_expect_eq(sfs_map_grow(m, 99 * 4096), -EINVAL);
	cr_expect_eq(sfs_map_nblocks(m), 100);
	cr_expect_eq(sfs_map_grow(m, 100 * 4096), 0);   /* same size: nothing to do */
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
	unsigned char h[64];

	sfs_map_set(m, 4);
	cr_expect_eq(sfs_map_set_flags(m, SFS_MAP_F_ZEROED), 0);
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	sfs_map_close(m);                           /* no flush: flags are durable by themselves */
	peek(0, h, sizeof(h));
	cr_expect_eq(le32(h + 52), SFS_MAP_F_ZEROED);
	cr_expect_eq(le32(h + 56), crc32c_ref(h, 56));
	m = reopen();
	cr_expect_eq(sfs_map_info(m)->flags, SFS_MAP_F_ZEROED);
	cr_expect(!sfs_map_test(m, 4), "set_flags must not flush bits");
	cr_expect_eq(sfs_map_set_flags(m, 0), 0);
	sfs_map_close(m);
	m = reopen();
	cr_expect_eq(sfs_map_info(m)->flags, 0);
	sfs_map_close(m);
}

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

Test(map, unsupported_version)
{
	char err[256];

	make_map(100);
	rewrite_header_u32(8, 2);
	expect_refused(-EUCLEAN, "version", err, sizeof(err));
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

Test(map, block_count_not_matching_size)
{
	char err[256];

	make_map(100);
	rewrite_header_u64(40, 101);                 /* CRC recomputed: only the count is wrong */
	expect_refused(-EUCLEAN, "block count", err, sizeof(err));
}

Test(map, bad_geometry_with_good_crc)
{
	char err[256];

	make_map(100);
	rewrite_header_u32(24, 1000);                /* logical sector not a power of two */
	expect_refused(-EUCLEAN, "geometry", err, sizeof(err));
}

Test(map, physical_smaller_than_logical_with_good_crc)
{
	char err[256];

	make_map(100);
	rewrite_header_u32(28, 256);
	expect_refused(-EUCLEAN, "geometry", err, sizeof(err));
}

Test(map, bad_provisioning_with_good_crc)
{
	char err[256];

	make_map(100);
	rewrite_header_u32(48, 7);
	expect_refused(-EUCLEAN, "provisioning", err, sizeof(err));
}

Test(map, bad_header_size_with_good_crc)
{
	char err[256];

	make_map(100);
	rewrite_header_u32(12, 512);
	expect_refused(-EUCLEAN, "header size", err, sizeof(err));
}

Test(map, directory_in_place_of_the_map)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(mkdirat(ts.fd, MAPNAME, 0700), 0);
	cr_expect_lt(sfs_map_open(ts.fd, MAPNAME, &m, err, sizeof(err)), 0);
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
	m = reopen();
	cr_expect_eq(sfs_map_count(m), 3);
	cr_expect(sfs_map_test(m, 8));
	cr_expect(sfs_map_test(m, 9));
	cr_expect_eq(sfs_map_next_set(m, 2), 8);
	cr_expect_eq(sfs_map_next_set(m, 10), 10);
	/* growing must not bring them back */
	cr_expect_eq(sfs_map_grow(m, 1000 * 4096), 0);
	cr_expect_eq(sfs_map_count(m), 3);
	cr_expect_eq(sfs_map_next_set(m, 10), 1000);
	sfs_map_close(m);
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
		cr_assert_eq(pread(fd, &byte, 1, (off_t)(HDR + b / 8)), 1);
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
