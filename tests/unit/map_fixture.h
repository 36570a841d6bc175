/* SPDX-License-Identifier: MIT */
/*
 * map_fixture.h - what the two allocation-map test programs share: a
 * temporary directory per test, map creation and reopening, and byte-level
 * access to the map file, written here from the format drawn at the top of
 * core/allocmap.c and independently of it: a CRC-32C oracle, the chunk
 * layout of version 2 (read a bit, fix a chunk's checksum) and a
 * version-1 map written by hand.
 */
#ifndef SFS_MAP_FIXTURE_H
#define SFS_MAP_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "tmpstore.h"

#define MAPNAME "disk.map"
#define HDR 4096u
#define PAGE 4096u
#define CHUNK 512u
#define CHUNK_DATA 504u                 /* 63 words of bits, then the CRC, then 4 zero bytes */
#define CHUNK_BITS (CHUNK_DATA * 8u)    /* 4032 */
#define PAGE_BITS (8u * CHUNK_BITS)     /* 32256 */
#define V1_PAGE_BITS (4096u * 8u)

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

	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, 0, NULL, &m, err, sizeof(err)), 0, "open: %s", err);
	cr_assert_not_null(m);
	return m;
}

static inline struct sfs_map *reopen_flags(unsigned flags)
{
	struct sfs_map *m = NULL;
	char err[256] = "";

	cr_assert_eq(sfs_map_open(ts.fd, MAPNAME, flags, NULL, &m, err, sizeof(err)), 0, "open: %s", err);
	cr_assert_not_null(m);
	return m;
}

/* Open a map expected to be refused with want, its message (in err) saying word; the
 * failures name the case what. */
static inline void expect_refused_as(const char *what, int want, const char *word, char *err, size_t errlen)
{
	struct sfs_map *m = NULL;

	err[0] = '\0';
	cr_expect_eq(sfs_map_open(ts.fd, MAPNAME, 0, NULL, &m, err, errlen), want, "%s: err: %s", what, err);
	cr_expect_null(m, "%s: opened", what);
	if (word)
		cr_expect(strstr(err, word), "%s: '%s' should say '%s'", what, err, word);
	if (m)
		sfs_map_close(m);
}

/* Open a map expected to be refused: returns the error message. */
static inline void expect_refused(int want, const char *word, char *err, size_t errlen)
{
	expect_refused_as(MAPNAME, want, word, err, errlen);
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

/* CRC-32C of chunk number idx as version 2 records it: over idx (u64 LE), then its bits. */
static inline uint32_t chunk_crc_ref(uint64_t idx, const unsigned char *data)
{
	unsigned char buf[8 + CHUNK_DATA];

	set_le64(buf, idx);
	memcpy(buf + 8, data, CHUNK_DATA);
	return crc32c_ref(buf, sizeof(buf));
}

static inline off_t chunk_off(uint64_t idx)
{
	return (off_t)(HDR + idx * CHUNK);
}

/* Give chunk idx of the file the checksum its bytes need (after a poke into it). */
static inline void fix_chunk(uint64_t idx)
{
	unsigned char c[CHUNK];

	peek(chunk_off(idx), c, CHUNK);
	set_le32(c + CHUNK_DATA, chunk_crc_ref(idx, c));
	poke(chunk_off(idx), c, CHUNK);
}

/* Does chunk idx of the file check? */
static inline bool chunk_checks(uint64_t idx)
{
	unsigned char c[CHUNK];

	peek(chunk_off(idx), c, CHUNK);
	return le32(c + CHUNK_DATA) == chunk_crc_ref(idx, c) && le32(c + CHUNK_DATA + 4) == 0;
}

/* The byte of a version-2 file that holds block blk's bit (bit blk % 8 of it). */
static inline off_t bit_off(uint64_t blk)
{
	return chunk_off(blk / CHUNK_BITS) + (off_t)(blk % CHUNK_BITS / 8);
}

/* Is block blk's bit set in the version-2 file? */
static inline bool file_bit(uint64_t blk)
{
	unsigned char b;

	peek(bit_off(blk), &b, 1);
	return (b >> (blk % 8)) & 1;
}

/* The whole map file, malloc'ed, its length in *len. */
static inline unsigned char *file_bytes(size_t *len)
{
	off_t n = file_size();
	unsigned char *p = malloc(n ? (size_t)n : 1);

	cr_assert_not_null(p);
	if (n)
		peek(0, p, (size_t)n);
	*len = (size_t)n;
	return p;
}

/* Write MAPNAME as a version-1 map (the layout before chunk checksums) of info mi with the
 * blocks of set[] (n of them) allocated and extra bytes of zeros after its pages. */
static inline void write_v1_map(const struct sfs_map_info *mi, const uint64_t *set, size_t n,
				size_t extra)
{
	uint64_t nb = mi->geom.size / mi->geom.block_size +
		      (mi->geom.size % mi->geom.block_size != 0);
	size_t pages = (size_t)((nb + V1_PAGE_BITS - 1) / V1_PAGE_BITS);
	size_t len = HDR + pages * PAGE + extra;
	unsigned char *f = calloc(1, len);

	cr_assert_not_null(f);
	memcpy(f, "SFSMAP\0\1", 8);
	set_le32(f + 8, 1);
	set_le32(f + 12, HDR);
	set_le64(f + 16, mi->geom.size);
	set_le32(f + 24, mi->geom.lss);
	set_le32(f + 28, mi->geom.pss);
	set_le64(f + 32, mi->geom.block_size);
	set_le64(f + 40, nb);
	set_le32(f + 48, (uint32_t)mi->prov);
	set_le32(f + 52, mi->flags);
	set_le32(f + 56, crc32c_ref(f, 56));
	for (size_t i = 0; i < n; i++)
		f[HDR + set[i] / 8] |= (unsigned char)(1u << (set[i] % 8));
	tmp_write_file(ts.fd, MAPNAME, f, len);
	free(f);
}

/* Rewrite the header with the field of width bytes (4 or 8) at off changed to v and a
 * correct CRC. */
static inline void rewrite_header_field(unsigned off, unsigned width, uint64_t v)
{
	unsigned char h[64];

	peek(0, h, sizeof(h));
	if (width == 4)
		set_le32(h + off, (uint32_t)v);
	else
		set_le64(h + off, v);
	set_le32(h + 56, crc32c_ref(h, 56));
	poke(0, h, sizeof(h));
}

static inline void rewrite_header_u32(unsigned off, uint32_t v)
{
	rewrite_header_field(off, 4, v);
}

static inline void rewrite_header_u64(unsigned off, uint64_t v)
{
	rewrite_header_field(off, 8, v);
}

#endif
