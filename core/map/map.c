/* SPDX-License-Identifier: MIT */
/*
 * map.c - the allocation map: one bit per block, persisted in
 * STORE/.sectorfs/NAME.map.
 *
 * On-disk format, version 2 (all integers little-endian):
 *
 *   0          4096       8192                 4096 + P * 4096
 *   +----------+----------+------+-----------+
 *   | header   | bitmap   | ...  | bitmap    |   P pages of 4 KiB,
 *   | (4 KiB)  | page 0   |      | page P-1  |   32256 blocks each
 *   +----------+----------+------+-----------+
 *              |
 *              v  a page is 8 chunks of 512 bytes, one disk sector each;
 *                 chunk c (counted from 0 over the whole bitmap) is at
 *                 byte 4096 + 512 * c and covers blocks 4032*c .. 4032*c+4031
 *
 *   chunk:  0                                   504       508     512
 *           +-----------------------------------+---------+-------+
 *           | 63 u64 words: bit j of word w is  | CRC-32C | 0 0 0 |
 *           | block 4032*c + 64*w + j           |         | 0     |
 *           +-----------------------------------+---------+-------+
 *           CRC-32C over (c as a u64, then bytes 0..503); bytes 508..511
 *           are zero; bits past the last block are zero.
 *
 *   header:  0 magic "SFSMAP\0\1"    8 u32 version (2)   12 u32 header size (4096)
 *           16 u64 disk size         24 u32 logical      28 u32 physical sector
 *           32 u64 block size        40 u64 nblocks      48 u32 provisioning
 *           52 u32 flags             56 u32 CRC-32C of bytes 0..55
 *           the identity (ident.c says what it is for; zeros in older maps):
 *           64 "SFSID\0\0\1"         72 16-byte image id      88 backing file identity
 *          128 map file identity    168 image name, 208 bytes NUL-padded
 *          376 u32 CRC-32C of bytes 64..375
 *           (a file identity: u64 inode, s64 + u32 birth time, u32 what is known, u64
 *           handle generation, u64 device; fileid.h)
 *
 * Version 1 (every map before this format) has the same header with
 * version 1 and pages of plain bits (bit b of byte i is block 8*i + b,
 * 32768 blocks a page) and no bitmap checksum.  It is still read; a
 * read-write open converts it to version 2 (a complete new file under a
 * temporary name, renamed over the old one).
 *
 * Why chunks of 512 bytes with the checksum inside: a sector is the unit
 * a disk writes atomically, so a bitmap page torn by power loss at any
 * sector boundary leaves every chunk wholly old or wholly new, each with
 * a valid checksum: a torn page never makes a valid map look damaged,
 * and random bytes, a zeroed sector or a hole never pass (an all-zero
 * chunk does not check: its CRC is not 0).  The chunk index in the CRC
 * catches a valid chunk at the wrong place.  63 words keep every chunk a
 * whole number of 64-bit words, so a chunk is a copy of the in-memory
 * words; the 4 bytes left over are reserved and must be zero.  A CRC per
 * page would be broken by torn writes; a separate CRC table cannot be
 * written atomically with the pages it describes.
 *
 * The header lives in the first 512-byte sector and changes only at
 * creation (temp file + rename) and on grow/flag changes (one sector
 * write, after everything it describes is durable).  A header with a bad
 * magic, version, CRC or geometry, or a file whose length does not match
 * nblocks, is refused with -EUCLEAN and a message saying which; so is a
 * bitmap chunk whose checksum fails (message: which chunks, which blocks),
 * unless the open salvages it (SFS_MAP_SALVAGE: its blocks read allocated).
 * Every chunk on disk always checks: create and grow write the new pages
 * as encoded empty chunks (which also gives them real blocks, so that a
 * flush never needs new space: on a full store it must still be able to
 * persist bits), and a flush writes whole encoded pages.
 *
 * Contract: a clear bit means the block reads as zeros whatever the
 * backing file holds.  A set bit means the backing file holds the block.
 *
 * Crash-ordering rule: a bit may reach the disk only after the data it
 * points at is durable.  The caller sets a bit only after the block's
 * data and zeroing are written to the backing file, and a flush is
 *
 *     flush_begin: snapshot and encode the dirty pages   (bits set so far)
 *     fdatasync(backing file)                            (their data durable)
 *     flush_end:   write the snapshot, fdatasync(map)
 *
 * so a bit set while the flush runs waits for the next one.  After a
 * crash a block is either as last flushed or reads as zeros; it never
 * shows bytes that were not written to it.  Clearing (discard) follows
 * the same path; a cleared bit lost in a crash leaves the block reading
 * what it held, which a discard allows.
 *
 * A grow extends the file with encoded empty pages (durable) before the
 * header that covers them is written: pages past what the header needs
 * are an interrupted or failed grow, and a read-write open drops them
 * (empty chunks, or zero bytes from a version-1 grow or a crash before
 * they were written; anything else is "trailing data").
 *
 * In memory the bitmap is an array of 64-bit words updated with atomics
 * (bitmap.c), 504 words (32256 bits) per bitmap page, plus one dirty bit
 * per page in a second such array; words and chunks convert in the flush
 * snapshot and at load.  Tests need no lock; set and clear are serialised
 * per block by the image's stripe locks; grow runs with those locks held
 * and keeps the old arrays until close so that lock-free readers never
 * see freed memory.  So that an image growing with its writes in many
 * small steps does not keep an array per step, a grow that needs bigger
 * arrays makes them twice the pages they had (at least what it needs, at
 * most what the largest disk needs): the arrays kept add up to less than
 * the live ones.
 *
 * Here: create, open (checks, salvage, upgrade), close, and the bits as
 * the map keeps them (its count, its dirty pages, the arrays a grow
 * swaps); the bit operations themselves are bitmap.c, the flush, grow,
 * shrink and flags flush.c, the encoding of header and chunks
 * format.c (whose named offsets the fuzz seeds use too).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "internal.h"
#include "map_test.h"
#include "util/bitmap.h"
#include "util/fdio.h"
#include "util/fileid.h"
#include "util/log.h"
#include "format.h"
#include "util/tmpfile.h"


/* ---- little helpers ---- */

int map_write_header(struct sfs_map *m)
{
	unsigned char h[MAP_HDR];
	int rc;

	sfs_mapfile_encode_header(&m->info, m->nblocks, &m->ident, h);
	rc = sfs_pwrite_all(m->fd, h, 512, 0);
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	return rc;
}

/* ---- in memory ---- */

void *(*map_calloc_hook)(size_t n, size_t size);

void *map_calloc(size_t n, size_t size)
{
	return map_calloc_hook ? map_calloc_hook(n, size) : calloc(n, size);
}

int map_alloc_arrays(uint64_t npages, uint64_t **words, uint64_t **dirty)
{
	*words = map_calloc(npages ? npages : 1, npages ? PAGE_WORDS * sizeof(uint64_t) : 8);
	*dirty = map_calloc(npages / 64 + 1, sizeof(uint64_t));
	if (!*words || !*dirty) {
		free(*words);
		free(*dirty);
		*words = *dirty = NULL;    /* the caller's (a prepared grow's) frees them again */
		return -ENOMEM;
	}
	return 0;
}

/* A map in memory, all bits clear, for the file fd whose identity is file. */
static struct sfs_map *map_new(int fd, const struct sfs_fileid *file, const struct sfs_map_info *info,
			       const struct sfs_map_ident *ident)
{
	struct sfs_map *m = map_calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fd = fd;
	m->file = *file;
	if (ident)
		m->ident = *ident;
	m->info = *info;
	m->nblocks = sfs_geom_nblocks(&info->geom);
	m->npages = m->cap_pages = sfs_mapfile_pages(SFS_MAPFILE_VERSION, m->nblocks);
	if (map_alloc_arrays(m->npages, &m->words, &m->dirty) < 0) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->flush_lock, NULL);
	return m;
}

void map_drop_pending(struct sfs_map *m)
{
	free(m->pend_words);
	free(m->pend_dirty);
	m->pend_words = m->pend_dirty = NULL;
	m->pend_size = m->pend_pages = m->pend_cap = 0;
	m->pending = false;
}

void map_mark_page_dirty(struct sfs_map *m, uint64_t page)
{
	sfs_bitmap_set(__atomic_load_n(&m->dirty, __ATOMIC_ACQUIRE), page);
}

/* ---- create ---- */

int sfs_map_create_tmp(int dirfd, const struct sfs_map_info *info, const struct sfs_map_ident *ident,
		       char *tmp, size_t tmplen, struct sfs_map **out)
{
	struct sfs_map_ident id = { 0 };
	struct sfs_fileid file;
	struct sfs_map *m;
	int fd, rc;

	/* before any byte is written: a map past the limit would fill the store's filesystem */
	if (info->geom.size > sfs_geom_size_max(info->geom.block_size))
		return -EFBIG;
	fd = sfs_tmp_create(dirfd, tmp, tmplen, 0600);
	if (fd < 0)
		return fd;
	/* the identity the file has now is the one it keeps: it is renamed, never copied */
	rc = sfs_fileid_fd(fd, &file, NULL);
	if (rc == 0 && ident && ident->present) {
		id = *ident;
		id.self = file;
	}
	if (rc == 0)
		rc = sfs_mapfile_write(fd, info, sfs_geom_nblocks(&info->geom), &id, NULL);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	m = rc == 0 ? map_new(fd, &file, info, &id) : NULL;
	if (rc == 0 && !m)
		rc = -ENOMEM;
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		close(fd);
		return rc;
	}
	*out = m;
	return 0;
}

int sfs_map_create(int dirfd, const char *fname, const struct sfs_map_info *info,
		   struct sfs_map **out)
{
	return sfs_map_create_as(dirfd, fname, info, NULL, out);
}

int sfs_map_create_as(int dirfd, const char *fname, const struct sfs_map_info *info,
		      const struct sfs_map_ident *ident, struct sfs_map **out)
{
	char tmp[SFS_TMP_NAME_MAX];
	struct sfs_map *m;
	int rc = sfs_map_create_tmp(dirfd, info, ident, tmp, sizeof(tmp), &m);

	if (rc < 0)
		return rc;
	rc = sfs_tmp_install(m->fd, dirfd, tmp, dirfd, fname);
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		sfs_map_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* ---- open ---- */

void sfs_map_damage_text(const char *fname, const struct sfs_map_damage *d, char *buf, size_t len)
{
	char where[80];

	assert(d->chunks > 0);
	if (!len)
		return;
	if (d->first_end > d->first_blk)
		snprintf(where, sizeof(where), "blocks %llu-%llu", (unsigned long long)d->first_blk,
			 (unsigned long long)d->first_end - 1);
	else
		snprintf(where, sizeof(where), "past the last block");
	snprintf(buf, len, "%s: bitmap checksum mismatch in %llu chunk%s (first at byte %llu, %s): "
		 "the map is damaged; 'sectorfs-img check --repair' rebuilds it", fname,
		 (unsigned long long)d->chunks, d->chunks == 1 ? "" : "s",
		 (unsigned long long)d->first_off, where);
}

/* Replace the version-1 file of m with a version-2 one holding the same bits: a complete
 * new file under a temporary name, made durable and renamed over dirfd/fname.  0 or -errno
 * (the old file in place, or the new one when only the directory sync failed). */
static int upgrade(struct sfs_map *m, int dirfd, const char *fname)
{
	char tmp[SFS_TMP_NAME_MAX];
	struct sfs_fileid file;
	int fd, rc;

	fd = sfs_tmp_create(dirfd, tmp, sizeof(tmp), 0600);
	if (fd < 0)
		return fd;
	rc = sfs_fileid_fd(fd, &file, NULL);
	if (rc == 0 && m->ident.present)
		m->ident.self = file;
	if (rc == 0)
		rc = sfs_mapfile_write(fd, &m->info, m->nblocks, &m->ident, m->words);
	if (rc == 0)
		rc = sfs_tmp_install(fd, dirfd, tmp, dirfd, fname);
	else
		unlinkat(dirfd, tmp, 0);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	close(m->fd);
	m->fd = fd;
	m->file = file;
	return 0;
}

/* Open fname, check it is a regular file whose header is sound and whose size is what the
 * header describes (dropping a grow's leftover pages read-write), and read the header and the
 * file's fstat (st): the fd, or -errno with err filled. */
static int open_checked(int dirfd, const char *fname, bool ro, struct sfs_map_info *info, uint64_t *nblocks,
			unsigned *version, struct sfs_map_ident *ident, struct sfs_fileid *file, char *err,
			size_t errlen)
{
	unsigned char h[MAP_HDR];
	struct stat st;
	uint64_t want;
	int fd, rc;

	/* O_NONBLOCK: a FIFO planted as the map must not hang the open; it is refused below */
	fd = openat(dirfd, fname, (ro ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	/* a symbolic link (ELOOP), a socket (ENXIO), a directory (EISDIR) is no map, as a FIFO is not */
	if (fd < 0 && (errno == ELOOP || errno == ENXIO || errno == EISDIR) &&
	    fstatat(dirfd, fname, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map is not a regular file", fname);
	if (fd < 0)
		return sfs_err(err, errlen, -errno, "%s: cannot open allocation map: %s", fname, strerror(errno));
	if ((rc = sfs_fileid_fd(fd, file, &st)) < 0) {
		close(fd);
		return sfs_err(err, errlen, rc, "%s: cannot stat allocation map: %s", fname, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map is not a regular file", fname);
	}
	if (st.st_size < (off_t)MAP_HDR) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map truncated (%lld bytes, header needs %u)",
			       fname, (long long)st.st_size, MAP_HDR);
	}
	rc = sfs_mapfile_pread(fd, h, MAP_HDR, 0);
	if (rc < 0) {
		close(fd);
		return sfs_err(err, errlen, rc, "%s: cannot read map header", fname);
	}
	rc = sfs_mapfile_check_header(h, fname, info, nblocks, version, ident, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	want = MAP_HDR + sfs_mapfile_pages(*version, *nblocks) * MAP_PAGE;
	if ((uint64_t)st.st_size > want) {
		rc = sfs_mapfile_grow_leftover(fd, *version, want, (uint64_t)st.st_size);
		/* read-write: drop them (a version-1 file is replaced below anyway) */
		if (rc == 0 && !ro && *version == SFS_MAPFILE_VERSION && ftruncate(fd, (off_t)want) < 0)
			rc = -errno;
		if (rc < 0) {
			close(fd);
			return sfs_err(err, errlen, rc, "%s: cannot check or drop the pages past what its "
				       "header describes (an interrupted grow): %s", fname, strerror(-rc));
		}
		if (rc == 0)
			st.st_size = (off_t)want;
	}
	if ((uint64_t)st.st_size != want) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map is %lld bytes, its header needs %llu (%s)",
			       fname, (long long)st.st_size, (unsigned long long)want,
			       (uint64_t)st.st_size < want ? "truncated" : "trailing data");
	}
	return fd;
}

int sfs_map_open(int dirfd, const char *fname, unsigned flags, const struct sfs_log *log,
		 struct sfs_map **out, char *err, size_t errlen)
{
	bool ro = flags & SFS_MAP_RDONLY;
	struct sfs_map_ident ident;
	struct sfs_map_info info;
	struct sfs_fileid file;
	struct sfs_map *m;
	uint64_t nblocks = 0, cnt = 0;
	unsigned version = 0;
	int fd = open_checked(dirfd, fname, ro, &info, &nblocks, &version, &ident, &file, err, errlen), rc;

	if (fd < 0)
		return fd;
	m = map_new(fd, &file, &info, &ident);
	if (!m) {
		close(fd);
		return sfs_err(err, errlen, -ENOMEM, "%s: out of memory", fname);
	}
	m->rdonly = ro;
	if (version == SFS_MAPFILE_V1)
		rc = sfs_mapfile_read_v1(fd, sfs_mapfile_pages(SFS_MAPFILE_V1, nblocks), m->words,
					 m->npages * PAGE_WORDS);
	else
		rc = sfs_mapfile_read_v2(fd, m->npages, nblocks, flags & SFS_MAP_SALVAGE, m->words, m->dirty,
					 &m->damage);
	if (rc < 0) {
		sfs_map_close(m);
		return sfs_err(err, errlen, rc, "%s: cannot read bitmap: %s", fname, strerror(-rc));
	}
	if (m->damage.chunks && !(flags & SFS_MAP_SALVAGE)) {
		sfs_map_damage_text(fname, &m->damage, err, errlen);
		sfs_map_close(m);
		return -EUCLEAN;
	}
	/* Bits past the last block mean nothing; drop them. */
	sfs_bitmap_keep(m->words, nblocks, m->npages * PAGE_WORDS);
	cnt = sfs_bitmap_count(m->words, nblocks);
	m->count = cnt;
	if (version == SFS_MAPFILE_V1 && !ro) {
		rc = upgrade(m, dirfd, fname);
		if (rc < 0) {
			sfs_map_close(m);
			return sfs_err(err, errlen, rc, "%s: cannot convert the version-1 allocation map to "
				       "version 2: %s", fname, strerror(-rc));
		}
		sfs_logf(log, SFS_LOG_INFO, "%s: converted the allocation map from version 1 to version 2 "
			 "(checksummed bitmap); %llu of %llu blocks allocated", fname,
			 (unsigned long long)cnt, (unsigned long long)nblocks);
	}
	*out = m;
	return 0;
}

int sfs_map_peek(int dirfd, const char *fname, struct sfs_map_info *info, struct sfs_map_ident *ident,
		 struct sfs_fileid *file, char *err, size_t errlen)
{
	struct sfs_map_ident id;
	struct sfs_map_info mi;
	struct sfs_fileid f;
	uint64_t nblocks;
	unsigned version;
	int fd = open_checked(dirfd, fname, true, &mi, &nblocks, &version, &id, &f, err, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	if (info)
		*info = mi;
	if (ident)
		*ident = id;
	if (file)
		*file = f;
	return 0;
}

void sfs_map_close(struct sfs_map *m)
{
	if (!m)
		return;
	while (m->old) {
		struct old_arrays *o = m->old;

		m->old = o->next;
		free(o->words);
		free(o->dirty);
		free(o);
	}
	map_drop_pending(m);
	free(m->snap);
	free(m->words);
	free(m->dirty);
	pthread_mutex_destroy(&m->flush_lock);
	close(m->fd);
	free(m);
}

/* ---- bits ---- */

int sfs_map_fd(const struct sfs_map *m)
{
	return m->fd;
}

void sfs_map_file_id(const struct sfs_map *m, dev_t *dev, ino_t *ino)
{
	*dev = (dev_t)m->file.dev;
	*ino = (ino_t)m->file.ino;
}

const struct sfs_fileid *sfs_map_fileid(const struct sfs_map *m)
{
	return &m->file;
}

const struct sfs_map_ident *sfs_map_ident(const struct sfs_map *m)
{
	return &m->ident;
}

const struct sfs_map_info *sfs_map_info(const struct sfs_map *m)
{
	return &m->info;
}

const struct sfs_map_damage *sfs_map_damage(const struct sfs_map *m)
{
	return &m->damage;
}

uint64_t sfs_map_nblocks(const struct sfs_map *m)
{
	return __atomic_load_n(&m->nblocks, __ATOMIC_ACQUIRE);
}

bool sfs_map_test(const struct sfs_map *m, uint64_t blk)
{
	return sfs_bitmap_test(__atomic_load_n(&m->words, __ATOMIC_ACQUIRE), blk);
}

void sfs_map_set(struct sfs_map *m, uint64_t blk)
{
	if (sfs_bitmap_set(m->words, blk)) {
		__atomic_fetch_add(&m->count, 1, __ATOMIC_RELAXED);
		map_mark_page_dirty(m, blk / MAP_PAGE_BITS);
	}
}

void sfs_map_clear(struct sfs_map *m, uint64_t blk)
{
	if (sfs_bitmap_clear(m->words, blk)) {
		__atomic_fetch_sub(&m->count, 1, __ATOMIC_RELAXED);
		map_mark_page_dirty(m, blk / MAP_PAGE_BITS);
	}
}

void sfs_map_set_range(struct sfs_map *m, uint64_t first, uint64_t end)
{
	/* a page at a time, so that the pages a bit was set in, and only those, are dirty */
	while (first < end) {
		uint64_t page = first / MAP_PAGE_BITS, stop = (page + 1) * MAP_PAGE_BITS, n;

		if (stop > end)
			stop = end;
		n = sfs_bitmap_set_range(m->words, first, stop);
		if (n) {
			__atomic_fetch_add(&m->count, n, __ATOMIC_RELAXED);
			map_mark_page_dirty(m, page);
		}
		first = stop;
	}
}

bool sfs_map_dirty(const struct sfs_map *m)
{
	return sfs_bitmap_any(__atomic_load_n(&m->dirty, __ATOMIC_ACQUIRE), m->npages / 64 + 1);
}

uint64_t sfs_map_count(const struct sfs_map *m)
{
	return __atomic_load_n(&m->count, __ATOMIC_RELAXED);
}

static uint64_t next_with(const struct sfs_map *m, uint64_t from, bool set)
{
	uint64_t nb = sfs_map_nblocks(m);

	return sfs_bitmap_next(__atomic_load_n(&m->words, __ATOMIC_ACQUIRE), nb, from, set);
}

uint64_t sfs_map_next_set(const struct sfs_map *m, uint64_t from)
{
	return next_with(m, from, true);
}

uint64_t sfs_map_next_clear(const struct sfs_map *m, uint64_t from)
{
	return next_with(m, from, false);
}

uint64_t sfs_blocks_bytes(const struct sfs_geom *g, uint64_t first, uint64_t end)
{
	uint64_t s0, e0, s1, e1;

	if (end <= first)
		return 0;
	sfs_geom_block_range(g, first, &s0, &e0);
	sfs_geom_block_range(g, end - 1, &s1, &e1);
	return e1 - s0;
}

uint64_t sfs_allocated_bytes(const struct sfs_map *m, const struct sfs_geom *g)
{
	uint64_t nb = sfs_map_nblocks(m), bytes = 0;

	for (uint64_t b = sfs_map_next_set(m, 0); b < nb;) {
		uint64_t e = sfs_map_next_clear(m, b);

		bytes += sfs_blocks_bytes(g, b, e);
		b = e < nb ? sfs_map_next_set(m, e) : nb;
	}
	return bytes;
}
