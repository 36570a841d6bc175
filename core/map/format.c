/* SPDX-License-Identifier: MIT */
/*
 * format.c - the allocation map's file format (format.h): header and
 * checksummed bitmap chunks, as drawn at the top of map.c.
 *
 * A page is encoded chunk by chunk: the 63 words little-endian, then the
 * CRC-32C of the chunk's index (u64 LE) followed by those 504 bytes, then
 * 4 zero bytes.  A chunk checks when both the CRC and the zero bytes are
 * right; an all-zero chunk never checks.  Reads and writes go 64 pages at
 * a time, so that a big map needs no second copy of itself in memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/fdio.h"
#include "util/log.h"
#include "format.h"

#define MAP_HDR SFS_MAPFILE_HDR
#define MAP_PAGE SFS_MAPFILE_PAGE
#define CHUNK SFS_MAPFILE_CHUNK
#define CHUNK_WORDS SFS_MAPFILE_CHUNK_WORDS
#define CHUNK_DATA (CHUNK_WORDS * 8u)                 /* 504: then the CRC, then 4 zero bytes */
#define CHUNK_BITS SFS_MAPFILE_CHUNK_BITS
#define PAGE_CHUNKS SFS_MAPFILE_PAGE_CHUNKS
#define V1_PAGE_BITS (MAP_PAGE * 8ull)                /* 32768 */
#define IO_PAGES 64u                                  /* pages per read or write */

/* ---- little helpers ---- */

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Little-endian 64-bit stores and loads: on a little-endian host a plain copy
 * (a page is 504 of them on every flush), elsewhere byte by byte. */
static void put64(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
#endif
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, 8);
#else
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
#endif
	return v;
}

uint64_t sfs_mapfile_pages(unsigned version, uint64_t nblocks)
{
	uint64_t bits = version == SFS_MAPFILE_V1 ? V1_PAGE_BITS : SFS_MAPFILE_PAGE_BITS;

	return (nblocks + bits - 1) / bits;
}

int sfs_mapfile_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = sfs_pread_upto(fd, buf, len, off);

	if (n < 0)
		return (int)n;
	return (size_t)n < len ? -EUCLEAN : 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- the chunk codec ---- */

static uint32_t chunk_crc(uint64_t idx, const unsigned char *data)
{
	unsigned char ib[8];

	put64(ib, idx);
	return sfs_crc32c(sfs_crc32c(0, ib, sizeof(ib)), data, CHUNK_DATA);
}

void sfs_mapfile_encode_page(const uint64_t *words, uint64_t page, unsigned char *out)
{
	for (unsigned k = 0; k < PAGE_CHUNKS; k++) {
		uint64_t idx = page * PAGE_CHUNKS + k;
		unsigned char *c = out + k * CHUNK;

		for (unsigned w = 0; w < CHUNK_WORDS; w++)
			put64(c + 8 * w, words ? __atomic_load_n(&words[idx * CHUNK_WORDS + w],
								 __ATOMIC_ACQUIRE) : 0);
		put32(c + CHUNK_DATA, chunk_crc(idx, c));
		memset(c + CHUNK_DATA + 4, 0, CHUNK - CHUNK_DATA - 4);
	}
}

/* Does chunk c (CHUNK bytes) check as chunk number idx? */
static bool chunk_ok(const unsigned char *c, uint64_t idx)
{
	return get32(c + CHUNK_DATA) == chunk_crc(idx, c) && all_zero(c + CHUNK_DATA + 4, 4);
}

int sfs_mapfile_write_pages(int fd, const uint64_t *words, uint64_t first, uint64_t n)
{
	uint64_t batch = n < IO_PAGES ? n : IO_PAGES;
	unsigned char *buf;
	int rc = 0;

	if (!n)
		return 0;
	buf = malloc(batch * MAP_PAGE);
	if (!buf)
		return -ENOMEM;
	for (uint64_t p = first; p < first + n && rc == 0; p += batch) {
		uint64_t k = first + n - p < batch ? first + n - p : batch;

		for (uint64_t i = 0; i < k; i++)
			sfs_mapfile_encode_page(words, p + i, buf + i * MAP_PAGE);
		rc = sfs_pwrite_all(fd, buf, k * MAP_PAGE, (off_t)(MAP_HDR + p * MAP_PAGE));
	}
	free(buf);
	return rc;
}

/* ---- header ---- */

static void put_fileid(unsigned char *p, const struct sfs_fileid *id)
{
	put64(p, id->ino);
	put64(p + 8, (uint64_t)id->btime_sec);
	put32(p + 16, id->btime_nsec);
	put32(p + 20, id->has);
	put64(p + 24, id->gen);
	put64(p + 32, id->dev);
}

static void get_fileid(const unsigned char *p, struct sfs_fileid *id)
{
	id->ino = get64(p);
	id->btime_sec = (int64_t)get64(p + 8);
	id->btime_nsec = get32(p + 16);
	id->has = get32(p + 20) & (SFS_FILEID_BTIME | SFS_FILEID_GEN);
	id->gen = get64(p + 24);
	id->dev = get64(p + 32);
}

static void encode_ident(const struct sfs_map_ident *ident, unsigned char *h)
{
	size_t n = strnlen(ident->name, sizeof(ident->name) - 1);

	memcpy(h + SFS_MAPFILE_OFF_ID, SFS_MAPFILE_ID_MAGIC, 8);
	memcpy(h + SFS_MAPFILE_OFF_IMAGE_ID, ident->id, SFS_IMAGE_ID_LEN);
	put_fileid(h + SFS_MAPFILE_OFF_BACKING, &ident->backing);
	put_fileid(h + SFS_MAPFILE_OFF_SELF, &ident->self);
	memcpy(h + SFS_MAPFILE_OFF_NAME, ident->name, n);
	put32(h + SFS_MAPFILE_OFF_IDCRC, sfs_crc32c(0, h + SFS_MAPFILE_OFF_ID, SFS_MAPFILE_OFF_IDCRC - SFS_MAPFILE_OFF_ID));
}

/* The identity part of h, when it is there and checks (a name that is no image name does not). */
static void decode_ident(const unsigned char *h, struct sfs_map_ident *ident)
{
	const unsigned char *name = h + SFS_MAPFILE_OFF_NAME;

	memset(ident, 0, sizeof(*ident));
	if (memcmp(h + SFS_MAPFILE_OFF_ID, SFS_MAPFILE_ID_MAGIC, 8) != 0 ||
	    get32(h + SFS_MAPFILE_OFF_IDCRC) != sfs_crc32c(0, h + SFS_MAPFILE_OFF_ID,
							  SFS_MAPFILE_OFF_IDCRC - SFS_MAPFILE_OFF_ID) ||
	    !memchr(name, '\0', SFS_NAME_MAX + 1))
		return;
	memcpy(ident->id, h + SFS_MAPFILE_OFF_IMAGE_ID, SFS_IMAGE_ID_LEN);
	get_fileid(h + SFS_MAPFILE_OFF_BACKING, &ident->backing);
	get_fileid(h + SFS_MAPFILE_OFF_SELF, &ident->self);
	memcpy(ident->name, name, strlen((const char *)name) + 1);
	ident->present = true;
}

void sfs_mapfile_encode_header(const struct sfs_map_info *info, uint64_t nblocks,
			       const struct sfs_map_ident *ident, unsigned char *h)
{
	memset(h, 0, MAP_HDR);
	memcpy(h, SFS_MAPFILE_MAGIC, 8);
	put32(h + SFS_MAPFILE_OFF_VERSION, SFS_MAPFILE_VERSION);
	put32(h + SFS_MAPFILE_OFF_HDRSIZE, MAP_HDR);
	put64(h + SFS_MAPFILE_OFF_SIZE, info->geom.size);
	put32(h + SFS_MAPFILE_OFF_LSS, info->geom.lss);
	put32(h + SFS_MAPFILE_OFF_PSS, info->geom.pss);
	put64(h + SFS_MAPFILE_OFF_BLOCK, info->geom.block_size);
	put64(h + SFS_MAPFILE_OFF_NBLOCKS, nblocks);
	put32(h + SFS_MAPFILE_OFF_PROV, (uint32_t)info->prov);
	put32(h + SFS_MAPFILE_OFF_FLAGS, info->flags);
	put32(h + SFS_MAPFILE_OFF_CRC, sfs_crc32c(0, h, SFS_MAPFILE_OFF_CRC));
	if (ident && ident->present)
		encode_ident(ident, h);
}

int sfs_mapfile_check_header(const unsigned char *h, const char *fname, struct sfs_map_info *info,
			     uint64_t *nblocks, unsigned *version, struct sfs_map_ident *ident, char *err,
			     size_t errlen)
{
	char why[256];

	if (ident)
		decode_ident(h, ident);

	if (memcmp(h, SFS_MAPFILE_MAGIC, 8) != 0)
		return sfs_err(err, errlen, -EUCLEAN, "%s: not a sectorfs allocation map (bad magic)", fname);
	*version = get32(h + SFS_MAPFILE_OFF_VERSION);
	if (*version != SFS_MAPFILE_VERSION && *version != SFS_MAPFILE_V1)
		return sfs_err(err, errlen, -EUCLEAN, "%s: unsupported map version %u", fname, get32(h + SFS_MAPFILE_OFF_VERSION));
	if (get32(h + SFS_MAPFILE_OFF_CRC) != sfs_crc32c(0, h, SFS_MAPFILE_OFF_CRC))
		return sfs_err(err, errlen, -EUCLEAN, "%s: map header checksum mismatch (corrupted)", fname);
	if (get32(h + SFS_MAPFILE_OFF_HDRSIZE) != MAP_HDR)
		return sfs_err(err, errlen, -EUCLEAN, "%s: bad map header size %u", fname, get32(h + SFS_MAPFILE_OFF_HDRSIZE));
	info->geom.size = get64(h + SFS_MAPFILE_OFF_SIZE);
	info->geom.lss = get32(h + SFS_MAPFILE_OFF_LSS);
	info->geom.pss = get32(h + SFS_MAPFILE_OFF_PSS);
	info->geom.block_size = get64(h + SFS_MAPFILE_OFF_BLOCK);
	info->prov = (enum sfs_prov)get32(h + SFS_MAPFILE_OFF_PROV);
	info->flags = get32(h + SFS_MAPFILE_OFF_FLAGS);
	*nblocks = get64(h + SFS_MAPFILE_OFF_NBLOCKS);
	if (get32(h + SFS_MAPFILE_OFF_PROV) > SFS_PROV_EAGERZEROEDTHICK)
		return sfs_err(err, errlen, -EUCLEAN, "%s: bad provisioning %u in map header", fname, get32(h + SFS_MAPFILE_OFF_PROV));
	if (sfs_geom_validate(info->geom.size, info->geom.lss, info->geom.pss, info->geom.block_size, fname,
			      why, sizeof(why)) < 0)
		return sfs_err(err, errlen, -EUCLEAN, "bad geometry in map header: %s", why);
	if (*nblocks != sfs_geom_nblocks(&info->geom))
		return sfs_err(err, errlen, -EUCLEAN, "%s: map header block count %llu does not match its size",
			       fname, (unsigned long long)*nblocks);
	return 0;
}

int sfs_mapfile_write(int fd, const struct sfs_map_info *info, uint64_t nblocks,
		      const struct sfs_map_ident *ident, const uint64_t *words)
{
	unsigned char h[MAP_HDR];
	int rc;

	sfs_mapfile_encode_header(info, nblocks, ident, h);
	rc = sfs_pwrite_all(fd, h, MAP_HDR, 0);
	if (rc == 0)
		rc = sfs_mapfile_write_pages(fd, words, 0, sfs_mapfile_pages(SFS_MAPFILE_VERSION, nblocks));
	return rc;
}

/* ---- reading ---- */

int sfs_mapfile_grow_leftover(int fd, unsigned version, uint64_t want, uint64_t size)
{
	unsigned unit = version == SFS_MAPFILE_V1 ? MAP_PAGE : CHUNK;
	unsigned char *buf;
	int rc = 0;

	if ((size - want) % unit)
		return 1;
	buf = malloc(IO_PAGES * MAP_PAGE);
	if (!buf)
		return -ENOMEM;
	for (uint64_t off = want; off < size && rc == 0; off += IO_PAGES * MAP_PAGE) {
		size_t n = size - off < IO_PAGES * MAP_PAGE ? (size_t)(size - off) : IO_PAGES * MAP_PAGE;

		rc = sfs_mapfile_pread(fd, buf, n, (off_t)off);
		for (size_t i = 0; i < n && rc == 0; i += CHUNK) {
			const unsigned char *c = buf + i;
			uint64_t idx = (off + i - MAP_HDR) / CHUNK;

			if (!all_zero(c, version == SFS_MAPFILE_V1 ? CHUNK : CHUNK_DATA) ||
			    (version == SFS_MAPFILE_VERSION && !all_zero(c + CHUNK_DATA, CHUNK - CHUNK_DATA) &&
			     !chunk_ok(c, idx)))
				rc = 1;
		}
	}
	free(buf);
	return rc;
}

/*
 * Read map pages [0, npages) in batches of IO_PAGES and hand each to
 * fn(buf, p, k, arg), pages p .. p + k - 1 in buf; 0, else the first error
 * of a read or of fn.
 */
static int read_batches(int fd, uint64_t npages,
			int (*fn)(const unsigned char *buf, uint64_t p, uint64_t k, void *arg), void *arg)
{
	unsigned char *buf = malloc(IO_PAGES * MAP_PAGE);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t p = 0; p < npages && rc == 0; p += IO_PAGES) {
		uint64_t k = npages - p < IO_PAGES ? npages - p : IO_PAGES;

		rc = sfs_mapfile_pread(fd, buf, k * MAP_PAGE, (off_t)(MAP_HDR + p * MAP_PAGE));
		if (rc == 0)
			rc = fn(buf, p, k, arg);
	}
	free(buf);
	return rc;
}

struct v2_read {
	uint64_t nblocks;
	bool salvage;
	uint64_t *words, *dirty;
	struct sfs_map_damage *d;
};

/* The chunks of pages p .. p + k - 1: good ones into words, bad ones counted (and set when salvaging). */
static int v2_batch(const unsigned char *buf, uint64_t p, uint64_t k, void *arg)
{
	struct v2_read *r = arg;
	struct sfs_map_damage *d = r->d;

	for (uint64_t c = p * PAGE_CHUNKS; c < (p + k) * PAGE_CHUNKS; c++) {
		const unsigned char *in = buf + (c - p * PAGE_CHUNKS) * CHUNK;
		uint64_t *w = r->words + c * CHUNK_WORDS;
		uint64_t first = c * CHUNK_BITS, end = first + CHUNK_BITS;

		if (chunk_ok(in, c)) {
			for (unsigned i = 0; i < CHUNK_WORDS; i++)
				w[i] = get64(in + 8 * i);
			continue;
		}
		first = first < r->nblocks ? first : r->nblocks;
		end = end < r->nblocks ? end : r->nblocks;
		if (!d->chunks++) {
			d->first_off = MAP_HDR + c * CHUNK;
			d->first_blk = first;
			d->first_end = end;
		}
		d->blocks += end - first;
		if (r->salvage) {
			for (unsigned i = 0; i < CHUNK_WORDS; i++)
				w[i] = ~0ull;
			r->dirty[c / PAGE_CHUNKS / 64] |= 1ull << (c / PAGE_CHUNKS % 64);
		}
	}
	return 0;
}

int sfs_mapfile_read_v2(int fd, uint64_t npages, uint64_t nblocks, bool salvage, uint64_t *words,
			uint64_t *dirty, struct sfs_map_damage *d)
{
	struct v2_read r = { nblocks, salvage, words, dirty, d };

	return read_batches(fd, npages, v2_batch, &r);
}

struct v1_read {
	uint64_t *words, nwords;
};

/* The words of pages p .. p + k - 1, as many as fit in nwords. */
static int v1_batch(const unsigned char *buf, uint64_t p, uint64_t k, void *arg)
{
	struct v1_read *r = arg;

	for (uint64_t i = 0; i < k * (MAP_PAGE / 8); i++)
		if (p * (MAP_PAGE / 8) + i < r->nwords)
			r->words[p * (MAP_PAGE / 8) + i] = get64(buf + 8 * i);
	return 0;
}

int sfs_mapfile_read_v1(int fd, uint64_t npages1, uint64_t *words, uint64_t nwords)
{
	struct v1_read r = { words, nwords };

	return read_batches(fd, npages1, v1_batch, &r);
}
