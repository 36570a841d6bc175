/* SPDX-License-Identifier: MIT */
/*
 * format.h - the allocation map's file format: the header and the
 * checksummed bitmap chunks drawn at the top of map.c, encoded and
 * decoded.
 *
 * Internal to core: map.c keeps a map in memory (words, dirty pages,
 * flushes, grows) and calls these to read and write its file.  They hold
 * no state; each works on a buffer or a file descriptor, and the bitmap is
 * always the in-memory form: an array of 64-bit words, bit b of word w is
 * block 64*w + b, SFS_MAPFILE_PAGE_WORDS words per bitmap page.
 */
#ifndef SFS_MAPFILE_H
#define SFS_MAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "map.h"

#define SFS_MAPFILE_VERSION 2u                   /* what is written */
#define SFS_MAPFILE_V1 1u                        /* still read: plain bits, no checksums */
#define SFS_MAPFILE_HDR 4096u                    /* header bytes, then the pages */
#define SFS_MAPFILE_PAGE 4096u                   /* a bitmap page: 8 chunks */
#define SFS_MAPFILE_CHUNK 512u                   /* one sector: 63 words, CRC, 4 zero bytes */
#define SFS_MAPFILE_CHUNK_WORDS 63u
#define SFS_MAPFILE_CHUNK_BITS (SFS_MAPFILE_CHUNK_WORDS * 64ull)                        /* 4032 */
#define SFS_MAPFILE_PAGE_CHUNKS (SFS_MAPFILE_PAGE / SFS_MAPFILE_CHUNK)                  /* 8 */
#define SFS_MAPFILE_PAGE_WORDS (SFS_MAPFILE_PAGE_CHUNKS * SFS_MAPFILE_CHUNK_WORDS)      /* 504 */
#define SFS_MAPFILE_PAGE_BITS (SFS_MAPFILE_PAGE_WORDS * 64ull)                          /* 32256 */
#define SFS_MAPFILE_CHUNK_CRC_OFF (SFS_MAPFILE_CHUNK_WORDS * 8u)  /* 504: a chunk's CRC */

/* The header, little-endian fields at these offsets (map.c draws it); the CRC covers
 * bytes [0, SFS_MAPFILE_OFF_CRC). */
#define SFS_MAPFILE_MAGIC "SFSMAP\0\1"
#define SFS_MAPFILE_OFF_MAGIC 0u       /* 8 bytes */
#define SFS_MAPFILE_OFF_VERSION 8u     /* u32 */
#define SFS_MAPFILE_OFF_HDRSIZE 12u    /* u32, SFS_MAPFILE_HDR */
#define SFS_MAPFILE_OFF_SIZE 16u       /* u64, disk size */
#define SFS_MAPFILE_OFF_LSS 24u        /* u32 */
#define SFS_MAPFILE_OFF_PSS 28u        /* u32 */
#define SFS_MAPFILE_OFF_BLOCK 32u      /* u64, block size */
#define SFS_MAPFILE_OFF_NBLOCKS 40u    /* u64 */
#define SFS_MAPFILE_OFF_PROV 48u       /* u32, enum sfs_prov */
#define SFS_MAPFILE_OFF_FLAGS 52u      /* u32, SFS_MAP_F_* */
#define SFS_MAPFILE_OFF_CRC 56u        /* u32, CRC32C of the bytes before it */

/* The identity part (map.c draws it; struct sfs_map_ident), with a CRC of its own over
 * [SFS_MAPFILE_OFF_ID, SFS_MAPFILE_OFF_IDCRC): maps of older versions have zeros there, and an
 * older version that rewrites the header writes zeros there again, which reads as "no
 * identity".  A file identity is 40 bytes: ino u64, birth time s64 + u32 ns, has u32, gen
 * u64, dev u64. */
#define SFS_MAPFILE_ID_MAGIC "SFSID\0\0\1"
#define SFS_MAPFILE_OFF_ID 64u         /* 8 bytes, SFS_MAPFILE_ID_MAGIC */
#define SFS_MAPFILE_OFF_IMAGE_ID 72u   /* 16 bytes */
#define SFS_MAPFILE_OFF_BACKING 88u    /* the backing file's identity */
#define SFS_MAPFILE_OFF_SELF 128u      /* the map file's identity */
#define SFS_MAPFILE_OFF_NAME 168u      /* 208 bytes, the image name NUL-padded */
#define SFS_MAPFILE_NAME_LEN 208u
#define SFS_MAPFILE_OFF_IDCRC 376u     /* u32, CRC32C of [SFS_MAPFILE_OFF_ID, here) */

/* Bitmap pages a map of version (1 or 2) needs for nblocks blocks. */
uint64_t sfs_mapfile_pages(unsigned version, uint64_t nblocks);

/* Encode the version-2 header of a map of info with nblocks blocks, and its identity part
 * when ident says one is present (NULL: none), into h (SFS_MAPFILE_HDR bytes; only the first
 * sector is not zero). */
void sfs_mapfile_encode_header(const struct sfs_map_info *info, uint64_t nblocks,
			       const struct sfs_map_ident *ident, unsigned char *h);

/* Decode and check header h (SFS_MAPFILE_HDR bytes) of map file fname: 0 with *info, *nblocks
 * and *version (1 or 2) set, and *ident when ident is not NULL (present false unless the
 * identity part is there and checks), or -EUCLEAN with err saying what is wrong. */
int sfs_mapfile_check_header(const unsigned char *h, const char *fname, struct sfs_map_info *info,
			     uint64_t *nblocks, unsigned *version, struct sfs_map_ident *ident, char *err,
			     size_t errlen);

/* Encode bitmap page `page` of words (the whole array, read with atomic loads, so that
 * setters may run; NULL: an empty page) into out (SFS_MAPFILE_PAGE bytes), each chunk with
 * the CRC of the bytes encoded.  Never fails. */
void sfs_mapfile_encode_page(const uint64_t *words, uint64_t page, unsigned char *out);

/* Write bitmap pages [first, first + n) to fd, encoded from words (NULL: empty pages; else it
 * covers them).  Not synced.  0 or -errno (-ENOMEM included). */
int sfs_mapfile_write_pages(int fd, const uint64_t *words, uint64_t first, uint64_t n);

/* Write a whole version-2 map file to fd, from offset 0: the header of info with nblocks
 * blocks and ident (NULL: none), then its pages encoded from words (NULL: all clear).  Not
 * synced.  0 or -errno. */
int sfs_mapfile_write(int fd, const struct sfs_map_info *info, uint64_t nblocks,
		      const struct sfs_map_ident *ident, const uint64_t *words);

/* Read the npages pages of a version-2 bitmap of nblocks blocks from fd into words (npages *
 * SFS_MAPFILE_PAGE_WORDS, zeroed by the caller), checking every chunk.  Bad chunks are
 * counted in *d (zeroed by the caller); with salvage their words are set to all ones and the
 * bit of their page is set in dirty (one bit per page).  0 or -errno (-EUCLEAN: file shorter
 * than npages; a bad chunk is not an error here). */
int sfs_mapfile_read_v2(int fd, uint64_t npages, uint64_t nblocks, bool salvage, uint64_t *words,
			uint64_t *dirty, struct sfs_map_damage *d);

/* Read the npages1 pages of a version-1 bitmap (plain bits) from fd into words, keeping the
 * first nwords words.  0 or -errno (-EUCLEAN: file shorter). */
int sfs_mapfile_read_v1(int fd, uint64_t npages1, uint64_t *words, uint64_t nwords);

/* Is [want, size) of fd, a map of version, what a grow leaves before it writes the header
 * that covers it: version 1, whole pages of zeros; version 2, sectors each an encoded empty
 * chunk numbered on from the bitmap, or zeros?  0 (yes), 1 (no) or -errno.  Reads only. */
int sfs_mapfile_grow_leftover(int fd, unsigned version, uint64_t want, uint64_t size);

/* pread exactly len bytes at off: 0, -errno, or -EUCLEAN at end of file. */
int sfs_mapfile_pread(int fd, void *buf, size_t len, off_t off);

#endif
