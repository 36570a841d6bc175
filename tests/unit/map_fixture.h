/*
 * map_fixture.h - what the two allocation-map test programs share: a
 * temporary directory per test, map creation and reopening, and byte-level
 * access to the map file (with an independent CRC-32C as the oracle).
 */
#ifndef SFS_MAP_FIXTURE_H
#define SFS_MAP_FIXTURE_H

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

static inline void setup(void)
{
	tmpstore_make(&ts, "allocmap", false);
}

static inline void teardown(void)
{
	tmpstore_destroy(&ts);
}

TestSuite(map, .init = setup, .fini = teardown, .timeout = 30);

/* Info of a thin disk of nblocks blocks of bs bytes (the last one bs/2 when half);
 * 512e when the block holds a 4 KiB sector, else 512n. */
static inline struct sfs_map_info info_of(uint64_t nblocks, uint64_t bs, bool half)
{
	uint32_t pss = bs >= 4096 ? 4096 : 512;
	struct sfs_map_info mi = { { nblocks * bs - (half ? bs / 2 : 0), 512, pss, bs }, SFS_PROV_THIN, 0 };

	return mi;
}

static inline struct sfs_map *create(const struct sfs_map_info *mi)
{
	struct sfs_map *m = NULL;

	cr_assert_eq(sfs_map_create(ts.fd, MAPNAME, mi, &m), 0);
	cr_assert_not_null(m);
	return m;
}

static inline struct sfs_map *reopen(void)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, &m, err, sizeof(err)), 0, "open: %s", err);
	cr_assert_not_null(m);
	return m;
}

/* Open a map expected to be refused: returns the error message. */
static inline void expect_refused(int want, const char *word, char *err, size_t errlen)
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

static inline off_t file_size(void)
{
	return tmp_stat(ts.fd, MAPNAME).st_size;
}

static inline void poke(off_t off, const void *data, size_t len)
{
	int fd = openat(ts.fd, MAPNAME, O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static inline void peek(off_t off, void *data, size_t len)
{
	int fd = openat(ts.fd, MAPNAME, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, data, len, off), (ssize_t)len);
	close(fd);
}

/* CRC-32C (Castagnoli, reflected), written independently of the core. */
static inline uint32_t crc32c_ref(const unsigned char *p, size_t n)
{
	uint32_t crc = ~0u;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline void set_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void set_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrite the header with a field changed and a correct CRC. */
static inline void rewrite_header_u32(unsigned off, uint32_t v)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	set_le32(h + off, v);
	set_le32(h + 56, crc32c_ref(h, 56));
	poke(0, h, sizeof(h));
}

static inline void rewrite_header_u64(unsigned off, uint64_t v)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	set_le64(h + off, v);
	set_le32(h + 56, crc32c_ref(h, 56));
	poke(0, h, sizeof(h));
}

#endif
