/* SPDX-License-Identifier: MIT */
/*
 * gen-map-seeds.c - writes the seed corpus of fuzz_map: allocation maps
 * made by the core library itself (sfs_map_create, set, flush) in a few
 * geometries, and damaged copies of them.
 *
 *   gen-map-seeds OUTDIR
 *
 * Valid maps (file name "ok-..."), version 2: no blocks, one partial
 * block, 17 blocks of 64 KiB on 512e with a bit pattern, exactly one
 * bitmap page, one block into a second page, an eagerzeroedthick map with
 * the ZEROED flag and all bits set, an explicit 1K/8K sector pair, 64K
 * sectors with 64M blocks; a page torn at a sector boundary (first three
 * chunks new, the rest old); the pages an interrupted grow leaves (encoded
 * empty chunks, or zero sectors) past the header's length.  Version 1 (the
 * layout before the bitmap checksums, written here by hand from the
 * version-2 maps): a few of the same maps, and one with an interrupted
 * grow's zero page.  Damaged ones ("bad-..."): empty, cut inside the
 * header, header without its bitmap, one trailing byte, bad magic,
 * version, checksum, header size, provisioning, block count, sector sizes,
 * block size and disk size (each with the checksum made right again so
 * the field check is what refuses it); bitmap chunks with a flipped bit,
 * a flipped CRC or reserved byte, zeroed, moved to another place; trailing
 * chunks that are not a grow's (bits set, numbered for elsewhere); a
 * version-1 map missing a page; and maps with junk bits past their last
 * block, chunk checksum right (which must open, the junk dropped).
 * Everything stays small: the whole corpus is < 400 KB.  Before it exits
 * the generator opens every seed and checks that it opens or is refused
 * as its name says.
 *
 * Build it from the top of the tree with the core sources (core/ *.c, no
 * space), -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Icore -ljansson -lpthread,
 * and run it on tests/fuzz/corpus/map; tests/fuzz/run.sh --seeds does both.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map/map.h"
#include "util/crc32c.h"
#include "map/format.h"

/* the map file's layout, named where its codec names it */
#define HDR SFS_MAPFILE_HDR
#define CRC_OFF SFS_MAPFILE_OFF_CRC
#define PAGE SFS_MAPFILE_PAGE
#define CHUNK SFS_MAPFILE_CHUNK
#define CHUNK_DATA SFS_MAPFILE_CHUNK_CRC_OFF

static char work[64];
static int work_fd = -1;
static int out_fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "gen-map-seeds: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void fix_crc(unsigned char *h)
{
	put32(h + CRC_OFF, sfs_crc32c(0, h, CRC_OFF));
}

/* Give chunk idx of file f the checksum its bits need (version 2). */
static void fix_chunk(unsigned char *f, uint64_t idx)
{
	unsigned char ib[8], *c = f + HDR + idx * CHUNK;

	put64(ib, idx);
	put32(c + CHUNK_DATA, sfs_crc32c(sfs_crc32c(0, ib, 8), c, CHUNK_DATA));
}

struct blob {
	unsigned char *p;
	size_t len;
};

static void put_seed(const char *name, const unsigned char *p, size_t len)
{
	int fd = openat(out_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len) || close(fd) < 0)
		die(name);
}

static struct blob read_back(const char *name)
{
	struct blob b;
	struct stat st;
	int fd = openat(work_fd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		die(name);
	b.len = (size_t)st.st_size;
	b.p = malloc(b.len ? b.len : 1);
	if (!b.p || read(fd, b.p, b.len) != (ssize_t)b.len)
		die(name);
	close(fd);
	return b;
}

/* Make a map of the given geometry with bits set by pick(), return the file's bytes. */
static struct blob make_map(const char *name, uint64_t size, uint32_t lss, uint32_t pss,
			    uint64_t block, enum sfs_prov prov, uint32_t flags,
			    bool (*pick)(uint64_t blk, uint64_t nb))
{
	struct sfs_map_info info = { { size, lss, pss, block }, prov, flags };
	struct sfs_map *m;
	struct blob b;
	int rc;

	rc = sfs_map_create(work_fd, name, &info, &m);
	if (rc < 0) {
		errno = -rc;
		die(name);
	}
	for (uint64_t i = 0; pick && i < sfs_map_nblocks(m); i++)
		if (pick(i, sfs_map_nblocks(m)))
			sfs_map_set(m, i);
	rc = sfs_map_flush(m, -1);
	sfs_map_close(m);
	if (rc < 0) {
		errno = -rc;
		die(name);
	}
	b = read_back(name);
	unlinkat(work_fd, name, 0);
	put_seed(name, b.p, b.len);
	return b;
}

static bool pick_pattern(uint64_t blk, uint64_t nb)
{
	(void)nb;
	return blk % 3 == 0 || blk == 7 || blk == 16;
}

static bool pick_edges(uint64_t blk, uint64_t nb)
{
	return blk == 0 || blk == 63 || blk == 64 || blk == nb - 1 || (blk / 64) % 5 == 1;
}

static bool pick_all(uint64_t blk, uint64_t nb)
{
	(void)blk;
	(void)nb;
	return true;
}

/* A copy of b with one change made by edit() and the checksum fixed (or not). */
static void variant(const char *name, const struct blob *b, size_t len,
		    void (*edit)(unsigned char *h), bool recrc)
{
	unsigned char *p = calloc(1, len ? len : 1);

	if (!p)
		die(name);
	memcpy(p, b->p, len < b->len ? len : b->len);
	if (edit)
		edit(p);
	if (recrc)
		fix_crc(p);
	put_seed(name, p, len);
	free(p);
}

static void e_magic(unsigned char *h) { h[3] = 'X'; }
static void e_version(unsigned char *h) { put32(h + SFS_MAPFILE_OFF_VERSION, 3); }
static void e_crc(unsigned char *h) { h[CRC_OFF] ^= 0x01; }
static void e_hdrsize(unsigned char *h) { put32(h + SFS_MAPFILE_OFF_HDRSIZE, 512); }
static void e_prov(unsigned char *h) { put32(h + SFS_MAPFILE_OFF_PROV, 3); }
static void e_nblocks(unsigned char *h) { put64(h + SFS_MAPFILE_OFF_NBLOCKS, 18); }
static void e_lss(unsigned char *h) { put32(h + SFS_MAPFILE_OFF_LSS, 1000); }
static void e_pss_small(unsigned char *h) { put32(h + SFS_MAPFILE_OFF_LSS, 4096); put32(h + SFS_MAPFILE_OFF_PSS, 512); }
static void e_block_big(unsigned char *h) { put64(h + SFS_MAPFILE_OFF_BLOCK, 128ull << 20); }
static void e_block_small(unsigned char *h) { put64(h + SFS_MAPFILE_OFF_BLOCK, 256); }
static void e_size_odd(unsigned char *h) { put64(h + SFS_MAPFILE_OFF_SIZE, 16 * 65536 + 32768 + 100); }
static void e_size_huge(unsigned char *h) { put64(h + SFS_MAPFILE_OFF_SIZE, 1ull << 63); }
/* Blocks 0..16 are the map's; set every bit after them in the first bytes. */
static void e_junk_bits(unsigned char *h) { h[HDR + 2] |= 0xfe; memset(h + HDR + 3, 0xff, 64); fix_chunk(h, 0); }
/* ... and in a chunk past the last block (17 blocks: chunk 0 holds them all) */
static void e_junk_chunk(unsigned char *h) { memset(h + HDR + 5 * CHUNK, 0xa5, 100); fix_chunk(h, 5); }
static void e_chunk_bit(unsigned char *h) { h[HDR + 3] ^= 0x10; }
static void e_chunk_crc(unsigned char *h) { h[HDR + CHUNK + CHUNK_DATA] ^= 0x01; }
static void e_chunk_reserved(unsigned char *h) { h[HDR + 2 * CHUNK + CHUNK_DATA + 5] = 1; }
static void e_chunk_zeroed(unsigned char *h) { memset(h + HDR, 0, CHUNK); }
static void e_chunk_moved(unsigned char *h) { memcpy(h + HDR + 3 * CHUNK, h + HDR, CHUNK); }

/* The version-1 file holding the bits of version-2 map b (with extra zero bytes after). */
static struct blob v1_of(const struct blob *b, size_t extra)
{
	uint64_t nb = get64(b->p + SFS_MAPFILE_OFF_NBLOCKS), pages = (nb + 32767) / 32768, nchunks = (b->len - HDR) / CHUNK;
	struct blob v;

	v.len = HDR + pages * PAGE + extra;
	v.p = calloc(1, v.len);
	if (!v.p)
		die("v1");
	memcpy(v.p, b->p, HDR);
	put32(v.p + SFS_MAPFILE_OFF_VERSION, 1);
	fix_crc(v.p);
	for (uint64_t c = 0; c < nchunks; c++)
		for (unsigned i = 0; i < CHUNK_DATA && HDR + c * CHUNK_DATA + i < HDR + pages * PAGE; i++)
			v.p[HDR + c * CHUNK_DATA + i] = b->p[HDR + c * CHUNK + i];
	return v;
}

/* Seed name: the file b with tail (len bytes) after it. */
static void with_tail(const char *name, const struct blob *b, const unsigned char *tail, size_t len)
{
	unsigned char *p = malloc(b->len + len);

	if (!p)
		die(name);
	memcpy(p, b->p, b->len);
	memcpy(p + b->len, tail, len);
	put_seed(name, p, b->len + len);
	free(p);
}

/* Every seed says what it is: "ok-..." opens (read-only: no upgrade), "bad-..." is refused. */
static int check_seeds(void)
{
	DIR *d = fdopendir(dup(out_fd));
	struct dirent *e;
	int wrong = 0;

	if (!d)
		die("seed directory");
	while ((e = readdir(d))) {
		struct sfs_map *m = NULL;
		char err[512] = "";
		int rc;

		if (e->d_name[0] == '.')
			continue;
		rc = sfs_map_open(out_fd, e->d_name, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err));
		sfs_map_close(m);
		if ((rc == 0) != (strncmp(e->d_name, "ok-", 3) == 0)) {
			fprintf(stderr, "gen-map-seeds: %s: open returned %d (%s)\n", e->d_name, rc, err);
			wrong++;
		}
	}
	closedir(d);
	return wrong;
}

int main(int argc, char **argv)
{
	struct blob zero, one, b17, page, page2, eager, odd, big, v1a, v1b, v1c;
	unsigned char tail[2 * PAGE];

	if (argc != 2) {
		fprintf(stderr, "usage: gen-map-seeds OUTDIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	out_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out_fd < 0)
		die(argv[1]);
	snprintf(work, sizeof(work), "/tmp/gen-map-seeds.XXXXXX");
	if (!mkdtemp(work) || (work_fd = open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("temporary directory");

	zero = make_map("ok-empty-512n", 0, 512, 512, 1 << 20, SFS_PROV_THIN, 0, NULL);
	one = make_map("ok-one-partial-block-4kn", 4096, 4096, 4096, 65536, SFS_PROV_THIN, 0, pick_all);
	b17 = make_map("ok-17-blocks-512e", 16 * 65536 + 32768, 512, 4096, 65536,
		       SFS_PROV_ZEROEDTHICK, 0, pick_pattern);
	page = make_map("ok-one-page-4kn", 32256ull * 4096, 4096, 4096, 4096, SFS_PROV_THIN, 0, pick_edges);
	page2 = make_map("ok-two-pages-512n", 32257ull * 512, 512, 512, 512, SFS_PROV_THIN, 0, pick_edges);
	eager = make_map("ok-eager-zeroed", 100ull << 20, 512, 512, 1 << 20,
			 SFS_PROV_EAGERZEROEDTHICK, SFS_MAP_F_ZEROED, pick_all);
	odd = make_map("ok-1k-8k-sectors", 77ull * 8192, 1024, 8192, 8192, SFS_PROV_THIN, 0, pick_pattern);
	big = make_map("ok-64k-sectors-64m-blocks", 3ull << 26, 65536, 65536, 64ull << 20,
		       SFS_PROV_ZEROEDTHICK, 0, pick_pattern);

	variant("bad-empty", &zero, 0, NULL, false);
	variant("bad-cut-in-header", &b17, 100, NULL, false);
	variant("bad-header-only", &b17, HDR, NULL, false);
	variant("bad-trailing-byte", &b17, b17.len + 1, NULL, false);
	variant("bad-missing-page", &page2, page2.len - 4096, NULL, false);
	variant("bad-magic", &b17, b17.len, e_magic, true);
	variant("bad-version", &b17, b17.len, e_version, true);
	variant("bad-crc", &b17, b17.len, e_crc, false);
	variant("bad-header-size", &zero, zero.len, e_hdrsize, true);
	variant("bad-provisioning", &zero, zero.len, e_prov, true);
	variant("bad-nblocks", &b17, b17.len, e_nblocks, true);
	variant("bad-lss", &zero, zero.len, e_lss, true);
	variant("bad-pss-below-lss", &zero, zero.len, e_pss_small, true);
	variant("bad-block-too-big", &zero, zero.len, e_block_big, true);
	variant("bad-block-below-sector", &zero, zero.len, e_block_small, true);
	variant("bad-size-not-multiple", &b17, b17.len, e_size_odd, true);
	variant("bad-size-huge", &zero, zero.len, e_size_huge, true);
	variant("ok-junk-past-last-block", &b17, b17.len, e_junk_bits, false);
	variant("ok-junk-chunk-past-last-block", &b17, b17.len, e_junk_chunk, false);
	variant("bad-chunk-bit", &b17, b17.len, e_chunk_bit, false);
	variant("bad-chunk-crc", &b17, b17.len, e_chunk_crc, false);
	variant("bad-chunk-reserved", &b17, b17.len, e_chunk_reserved, false);
	variant("bad-chunk-zeroed", &page2, page2.len, e_chunk_zeroed, false);
	variant("bad-chunk-moved", &b17, b17.len, e_chunk_moved, false);

	/* a page torn after three sectors: the new bits of ok-one-page-4kn over the old of a map
	 * with other bits in the same geometry */
	{
		struct blob old = make_map("tmp-torn", 32256ull * 4096, 4096, 4096, 4096, SFS_PROV_THIN, 0,
					   pick_pattern);

		unlinkat(out_fd, "tmp-torn", 0);
		memcpy(old.p + HDR, page.p + HDR, 3 * CHUNK);
		put_seed("ok-torn-page", old.p, old.len);
		free(old.p);
	}
	/* an interrupted grow's leftovers: encoded empty chunks numbered on, or zero sectors */
	memset(tail, 0, sizeof(tail));
	for (unsigned k = 0; k < 2 * PAGE / CHUNK; k++) {
		unsigned char ib[8], *c = tail + k * CHUNK;

		put64(ib, 8 + k);                 /* b17 has one page: chunks 0..7 */
		put32(c + CHUNK_DATA, sfs_crc32c(sfs_crc32c(0, ib, 8), c, CHUNK_DATA));
	}
	with_tail("ok-grow-leftover-empty-pages", &b17, tail, 2 * PAGE);
	memset(tail + 3 * CHUNK, 0, PAGE - 3 * CHUNK);   /* three sectors written, five not */
	with_tail("ok-grow-leftover-empty-and-zero-sectors", &b17, tail, PAGE);
	tail[CHUNK + 7] = 0x40;                   /* bits in a chunk past the header's length */
	{
		unsigned char ib[8];

		put64(ib, 9);
		put32(tail + CHUNK + CHUNK_DATA, sfs_crc32c(sfs_crc32c(0, ib, 8), tail + CHUNK, CHUNK_DATA));
	}
	with_tail("bad-trailing-chunk-with-bits", &b17, tail, PAGE);
	memset(tail, 0, sizeof(tail));
	{
		unsigned char ib[8];

		put64(ib, 3);                     /* an empty chunk, numbered for elsewhere */
		put32(tail + CHUNK_DATA, sfs_crc32c(sfs_crc32c(0, ib, 8), tail, CHUNK_DATA));
	}
	with_tail("bad-trailing-chunk-numbered-elsewhere", &b17, tail, CHUNK);

	/* version 1, as every map was before the bitmap checksums */
	v1a = v1_of(&b17, 0);
	v1b = v1_of(&page2, 0);
	v1c = v1_of(&eager, 0);
	put_seed("ok-v1-17-blocks-512e", v1a.p, v1a.len);
	put_seed("ok-v1-two-pages-512n", v1b.p, v1b.len);
	put_seed("ok-v1-eager-zeroed", v1c.p, v1c.len);
	free(v1c.p);
	v1c = v1_of(&b17, PAGE);
	put_seed("ok-v1-grow-leftover-zero-page", v1c.p, v1c.len);
	variant("bad-v1-missing-page", &v1b, v1b.len - PAGE, NULL, false);
	variant("bad-v1-trailing-byte", &v1a, v1a.len + 1, NULL, false);
	free(v1a.p);
	free(v1b.p);
	free(v1c.p);

	free(zero.p);
	free(one.p);
	free(b17.p);
	free(page.p);
	free(page2.p);
	free(eager.p);
	free(odd.p);
	free(big.p);
	close(work_fd);
	rmdir(work);
	if (check_seeds())
		return 1;
	close(out_fd);
	return 0;
}
