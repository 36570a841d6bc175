/*
 * test_allocmap_robust.c - unit tests of core/allocmap.c, part two:
 * damaged files and concurrency.
 *
 * Corrupted, truncated and padded map files are refused with -EUCLEAN and
 * a message saying what is wrong (and the zero pages an interrupted grow
 * leaves are dropped); eight threads setting bits that share words give
 * the exact count, with or without flushes running, and a flush writes
 * every page that was dirty when it began even while another thread
 * dirties pages.  Each test gets its own mkdtemp directory.
 */
#include "map_fixture.h"

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
	rewrite_header_u32(8, 3);
	expect_refused(-EUCLEAN, "version 3", err, sizeof(err));
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
