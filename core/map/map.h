/* SPDX-License-Identifier: MIT */
/*
 * map.h - the allocation map of one image: which blocks hold data.
 *
 * A set bit means "the backing file holds this block's contents"; a clear
 * bit means "never written (or discarded): reads as zeros, whatever the
 * backing file holds".  The on-disk format and the crash-ordering rule
 * are described at the top of map.c.
 *
 * Bits are tested and set with atomics and no lock.  Persisting is a
 * two-step flush so that the caller can put the data barrier in between:
 *     sfs_map_flush_begin()   snapshot the dirty bitmap pages
 *     fdatasync(data)         make the data those bits point at durable
 *     sfs_map_flush_end()     write the snapshot, fdatasync the map
 * sfs_map_flush() does the three steps with the given data fd.
 */
#ifndef SFS_ALLOCMAP_H
#define SFS_ALLOCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/fileid.h"
#include "contract/geometry.h"
#include "util/log.h"
#include "contract/names.h"

struct sfs_map;

/* What the map header records about its image. */
struct sfs_map_info {
	struct sfs_geom geom;
	enum sfs_prov prov;
	uint32_t flags;          /* SFS_MAP_F_* */
};

/* Eager zeroing of the whole image has completed (eagerzeroedthick). */
#define SFS_MAP_F_ZEROED 0x1u

#define SFS_IMAGE_ID_LEN 16

/* What ties a map to its image, recorded in the header after the geometry (ident.c says
 * how it is judged).  Maps of older versions have none (present false). */
struct sfs_map_ident {
	bool present;
	unsigned char id[SFS_IMAGE_ID_LEN];   /* the image's random identity, for life */
	struct sfs_fileid backing;            /* the backing file the map describes */
	struct sfs_fileid self;               /* the map file it was written as (in place since) */
	char name[SFS_NAME_MAX + 1];          /* the image's name when last written */
};

/* Create dirfd/fname with all bits clear (atomically: a temporary file of tmpfile.h, made
 * durable, then renamed), with no identity (for tests and tools that make a map alone).
 * 0 or -errno (nothing left behind): -EFBIG, before anything is written, for a size past
 * sfs_geom_size_max; -ENOMEM; errors of the file's creation and writes. */
int sfs_map_create(int dirfd, const char *fname, const struct sfs_map_info *info,
		   struct sfs_map **out);

/* As sfs_map_create, tied to its image: ident's id, backing and name recorded (its self is
 * filled in with the new file's identity); NULL: none.  0 or -errno. */
int sfs_map_create_as(int dirfd, const char *fname, const struct sfs_map_info *info,
		      const struct sfs_map_ident *ident, struct sfs_map **out);

/* Create a durable map with all bits clear under a new temporary name of dirfd (put in tmp,
 * >= SFS_TMP_NAME_MAX bytes), tied as ident says (NULL: not tied); the caller renames it into
 * place (sfs_tmp_install) or removes it.  0 or -errno as sfs_map_create (nothing left behind). */
int sfs_map_create_tmp(int dirfd, const struct sfs_map_info *info, const struct sfs_map_ident *ident,
		       char *tmp, size_t tmplen, struct sfs_map **out);

/* Flags of sfs_map_open. */
#define SFS_MAP_RDONLY 0x1u    /* open O_RDONLY and change nothing: no reserve, no trim of an
				* interrupted grow's pages, no upgrade of a version-1 map; the map
				* cannot be flushed, grown or given flags (-EROFS) */
#define SFS_MAP_SALVAGE 0x2u   /* open a map whose bitmap chunks fail their checksum: every block
				* of a bad chunk reads allocated, those pages are dirty (rewritten
				* with valid checksums by the next flush; in memory only with
				* SFS_MAP_RDONLY); see sfs_map_damage */

/* What an open found wrong with the bitmap: all zero when every chunk checks. */
struct sfs_map_damage {
	uint64_t chunks;         /* bitmap chunks whose checksum failed */
	uint64_t blocks;         /* blocks they cover (those SFS_MAP_SALVAGE marked allocated) */
	uint64_t first_off;      /* byte offset of the first bad chunk in the map file */
	uint64_t first_blk;      /* the blocks it covers: [first_blk, first_end); equal when it */
	uint64_t first_end;      /*   lies past the last block */
};

/* Open and validate dirfd/fname (flags: SFS_MAP_*).  A version-1 map opened read-write is
 * converted to version 2 in place, atomically, and that is logged to log (may be NULL).
 * 0 with *out set, or -errno with err set: -ENOENT when missing; -EUCLEAN for a corrupt,
 * truncated or foreign file, and for a bitmap chunk whose checksum fails (unless
 * SFS_MAP_SALVAGE); other errnos from I/O. */
int sfs_map_open(int dirfd, const char *fname, unsigned flags, const struct sfs_log *log,
		 struct sfs_map **out, char *err, size_t errlen);

/* Read and check the header of dirfd/fname as sfs_map_open does (the file's length included),
 * without reading the bitmap or changing anything: 0 with *info, *ident and *file set (each may
 * be NULL), or -errno with err set as sfs_map_open's. */
int sfs_map_peek(int dirfd, const char *fname, struct sfs_map_info *info, struct sfs_map_ident *ident,
		 struct sfs_fileid *file, char *err, size_t errlen);

/* The bitmap damage the open found (and salvaged: only an SFS_MAP_SALVAGE open gets a map
 * with damage); all zero for an intact map.  Never NULL. */
const struct sfs_map_damage *sfs_map_damage(const struct sfs_map *m);

/* Describe damage d of map file fname in the words an open refuses it with ("NAME.map: bitmap
 * checksum mismatch in 3 chunks (first at byte ...)") into buf, NUL-terminated when len > 0.
 * Precondition: d->chunks > 0. */
void sfs_map_damage_text(const char *fname, const struct sfs_map_damage *d, char *buf, size_t len);

/* Close without flushing (what a crash looks like to the file); NULL is fine. */
void sfs_map_close(struct sfs_map *m);

/* The device and inode of the map file, as when it was opened or made (a version-1 map
 * converted by the open: the new file's). */
void sfs_map_file_id(const struct sfs_map *m, dev_t *dev, ino_t *ino);

/* The map file's identity (fileid.h), taken as sfs_map_file_id's. */
const struct sfs_fileid *sfs_map_fileid(const struct sfs_map *m);

/* What the header records of the map's image (present false for a map of an older version). */
const struct sfs_map_ident *sfs_map_ident(const struct sfs_map *m);

/* Record ident in the header (its self replaced by the map file's own identity), rewritten in
 * place and made durable as sfs_map_set_prov does.  0; -EROFS (SFS_MAP_RDONLY); -errno (the
 * header as before in memory). */
int sfs_map_set_ident(struct sfs_map *m, const struct sfs_map_ident *ident);

/* The header as recorded. */
const struct sfs_map_info *sfs_map_info(const struct sfs_map *m);

/* Number of blocks the map covers. */
uint64_t sfs_map_nblocks(const struct sfs_map *m);

/* Is block blk allocated?  (Acquire load; blk must be < nblocks.) */
bool sfs_map_test(const struct sfs_map *m, uint64_t blk);

/* Mark block blk allocated (in memory; durable after the next flush). */
void sfs_map_set(struct sfs_map *m, uint64_t blk);

/* Mark block blk not allocated (in memory; durable after the next flush). */
void sfs_map_clear(struct sfs_map *m, uint64_t blk);

/* Mark blocks [first, end) allocated (in memory; durable after the next flush). */
void sfs_map_set_range(struct sfs_map *m, uint64_t first, uint64_t end);

/* Has a page changed since the last flush (one that a flush would write)? */
bool sfs_map_dirty(const struct sfs_map *m);

/* Is everything a flush would write on disk already: no page changed since the last flush and
 * no flush under way (a flush that has taken the dirty pages but not written them yet)?  A
 * flush of the data alone then makes every earlier allocation durable too. */
bool sfs_map_flushed(struct sfs_map *m);

/* Number of allocated blocks (maintained, O(1)). */
uint64_t sfs_map_count(const struct sfs_map *m);

/* First allocated block >= from, or nblocks when none. */
uint64_t sfs_map_next_set(const struct sfs_map *m, uint64_t from);

/* First unallocated block >= from, or nblocks when none. */
uint64_t sfs_map_next_clear(const struct sfs_map *m, uint64_t from);

/* Step 1 of a flush: snapshot and encode the dirty pages (serialises flushes until _end, which
 * must follow a 0).  0, -ENOMEM (pages still dirty) or -EROFS (SFS_MAP_RDONLY). */
int sfs_map_flush_begin(struct sfs_map *m);

/* Step 2 of a flush, after a flush_begin that returned 0: write the snapshot and fdatasync the
 * map file.  0 or -errno (the snapshotted pages dirty again). */
int sfs_map_flush_end(struct sfs_map *m);

/* Whole flush: begin, fdatasync(data_fd) (skipped when < 0), end.  0 or -errno (-EROFS for an
 * SFS_MAP_RDONLY map; on failure the pages stay dirty). */
int sfs_map_flush(struct sfs_map *m, int data_fd);

/* Grow, step 1: extend the map file for new_size (>= size; new blocks clear) with encoded
 * empty pages, durably, and allocate the arrays; header and bits unchanged.  0, -EINVAL
 * (new_size < size), -EFBIG (past sfs_geom_size_max: nothing allocated or written), -EROFS
 * (SFS_MAP_RDONLY), -ENOMEM or -errno (file cut back as before). */
int sfs_map_grow_prepare(struct sfs_map *m, uint64_t new_size);

/* Grow, step 2, the commit point: write the header with new_size and flags durably, then
 * cover new_size in memory.  Needs a prepare of new_size; the caller keeps set/clear out
 * (image stripe locks).  0, or -errno with the map in memory as before (then abort). */
int sfs_map_grow_commit(struct sfs_map *m, uint64_t new_size, uint32_t flags);

/* Undo a prepared grow that is not committed: header rewritten as in memory, file cut to
 * what it describes.  0 or -errno (-EROFS for an SFS_MAP_RDONLY map). */
int sfs_map_grow_abort(struct sfs_map *m);

/* Shrink to new_size (<= size, a multiple of the logical sector) when no allocated block lies
 * past it: the header is rewritten durably (the commit point), then the file cut to what it
 * describes.  For the capacity a growing image reserved ahead of its writes.  The caller keeps
 * set/clear/flush out (image stripe locks).  0; -EBUSY (nothing changed) when a block past
 * new_size is allocated; -EINVAL; -EROFS; -errno (map as before when the header write fails). */
int sfs_map_shrink(struct sfs_map *m, uint64_t new_size);

/* Record provisioning prov and flags in the header, rewritten in place and made durable (its
 * first sector, CRC included: a crash leaves the old header or the new, never the bitmap
 * touched).  0; -EINVAL for no mode; -EROFS (SFS_MAP_RDONLY); -errno (the header as before in
 * memory). */
int sfs_map_set_prov(struct sfs_map *m, enum sfs_prov prov, uint32_t flags);

/* Bytes covered by blocks [first, end) of g (the last block of the disk may be partial). */
uint64_t sfs_blocks_bytes(const struct sfs_geom *g, uint64_t first, uint64_t end);

/* Bytes of the disk of geometry g held by the allocated blocks of m. */
uint64_t sfs_allocated_bytes(const struct sfs_map *m, const struct sfs_geom *g);

#endif
