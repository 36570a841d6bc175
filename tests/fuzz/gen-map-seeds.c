/*
 * gen-map-seeds.c - writes the seed corpus of fuzz_map: allocation maps
 * made by the core library itself (sfs_map_create, set, flush) in a few
 * geometries, and damaged copies of them.
 *
 *   gen-map-seeds OUTDIR
 *
 * Valid maps (file name "ok-..."): no blocks, one partial block, 17 blocks
 * of 64 KiB on 512e with a bit pattern, exactly one bitmap page, one block
 * into a second page, an eagerzeroedthick map with the ZEROED flag and all
 * bits set, an explicit 1K/8K sector pair, 64K sectors with 64M blocks.
 * Damaged ones ("bad-..."): empty, cut inside the header, header without
 * its bitmap, one trailing byte, bad magic, version, checksum, header size,
 * provisioning, block count, sector sizes, block size and disk size (each
 * with the checksum made right again so the field check is what refuses
 * it), and a map with junk bits past its last block (which must open, the
 * junk dropped).  Everything stays small: the whole corpus is < 200 KB.
 *
 * Build it from the top of the tree with the core sources (core/ *.c, no
 * space), -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Icore -ljansson -lpthread,
 * and run it on tests/fuzz/corpus/map; tests/fuzz/run.sh --seeds does both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocmap.h"

#define HDR 4096u
#define CRC_OFF 56u

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

static void fix_crc(unsigned char *h)
{
	put32(h + CRC_OFF, sfs_map_crc32c(h, CRC_OFF));
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

/* Make a map of the given geometry with bits set by pick(), return the file's bytes. */
static struct blob make_map(const char *name, uint64_t size, uint32_t lss, uint32_t pss,
			    uint64_t block, enum sfs_prov prov, uint32_t flags,
			    bool (*pick)(uint64_t blk, uint64_t nb))
{
	struct sfs_map_info info = { { size, lss, pss, block }, prov, flags };
	struct sfs_map *m;
	struct blob b;
	struct stat st;
	int rc, fd;

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
	fd = openat(work_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(name);
	b.len = (size_t)st.st_size;
	b.p = malloc(b.len);
	if (!b.p || read(fd, b.p, b.len) != (ssize_t)b.len)
		die(name);
	close(fd);
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
static void e_version(unsigned char *h) { put32(h + 8, 2); }
static void e_crc(unsigned char *h) { h[CRC_OFF] ^= 0x01; }
static void e_hdrsize(unsigned char *h) { put32(h + 12, 512); }
static void e_prov(unsigned char *h) { put32(h + 48, 3); }
static void e_nblocks(unsigned char *h) { put64(h + 40, 18); }
static void e_lss(unsigned char *h) { put32(h + 24, 1000); }
static void e_pss_small(unsigned char *h) { put32(h + 24, 4096); put32(h + 28, 512); }
static void e_block_big(unsigned char *h) { put64(h + 32, 128ull << 20); }
static void e_block_small(unsigned char *h) { put64(h + 32, 256); }
static void e_size_odd(unsigned char *h) { put64(h + 16, 16 * 65536 + 32768 + 100); }
static void e_size_huge(unsigned char *h) { put64(h + 16, 1ull << 63); }
/* Blocks 0..16 are the map's; set every bit after them in the first bytes. */
static void e_junk_bits(unsigned char *h) { h[HDR + 2] |= 0xfe; memset(h + HDR + 3, 0xff, 64); }

int main(int argc, char **argv)
{
	struct blob zero, one, b17, page, page2, eager, odd, big;

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
	page = make_map("ok-one-page-4kn", 32768ull * 4096, 4096, 4096, 4096, SFS_PROV_THIN, 0, pick_edges);
	page2 = make_map("ok-two-pages-512n", 32769ull * 512, 512, 512, 512, SFS_PROV_THIN, 0, pick_edges);
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
	close(out_fd);
	return 0;
}
