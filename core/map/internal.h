/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the allocation map in memory, shared by map.c (create,
 * open, close and the bits) and flush.c (the flush protocol, grow, shrink
 * and flags).  map.c draws the format and the ordering.  The tests' view
 * is map_test.h; map.h holds what the rest of sectorfs uses.
 */
#ifndef SFS_ALLOCMAP_IMPL_H
#define SFS_ALLOCMAP_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "map.h"
#include "format.h"

#define MAP_HDR SFS_MAPFILE_HDR
#define MAP_PAGE SFS_MAPFILE_PAGE
#define PAGE_WORDS SFS_MAPFILE_PAGE_WORDS               /* 504 in memory per bitmap page */
#define MAP_PAGE_BITS SFS_MAPFILE_PAGE_BITS             /* 32256 */

struct old_arrays {
	struct old_arrays *next;
	uint64_t *words;
	uint64_t *dirty;
};

struct snap_page {
	uint64_t page;
	unsigned char data[MAP_PAGE];     /* encoded: 8 chunks with their CRCs */
};

struct sfs_map {
	int fd;
	struct sfs_fileid file;           /* the file's identity, taken when it was opened or made */
	struct sfs_map_ident ident;       /* what the header records of the image */
	bool rdonly;                      /* SFS_MAP_RDONLY */
	struct sfs_map_info info;
	struct sfs_map_damage damage;     /* what the open found (and salvaged) */
	uint64_t nblocks;
	uint64_t npages;                  /* bitmap pages */
	uint64_t cap_pages;               /* pages the arrays have room for (>= npages) */
	uint64_t *words;                  /* cap_pages * PAGE_WORDS words, zero past npages */
	uint64_t *dirty;                  /* one bit per page (of cap_pages) */
	uint64_t count;                   /* allocated blocks, atomic */
	pthread_mutex_t flush_lock;
	struct snap_page *snap;
	size_t nsnap;
	struct old_arrays *old;
	uint64_t *pend_words, *pend_dirty;   /* a prepared grow's arrays (NULL: they have room) */
	uint64_t pend_size, pend_pages;      /* a prepared grow's size and page count */
	uint64_t pend_cap;                   /* the room of pend_words, in pages */
	bool pending;                        /* a grow is prepared */
};

int map_write_header(struct sfs_map *m);

/* Memory for n objects of size bytes, zeroed, for everything the map holds (the map itself,
 * its arrays, a flush's snapshot, a grow's retired arrays): calloc, or the tests' hook.  NULL
 * when there is none (or n * size overflows). */
void *map_calloc(size_t n, size_t size);

/* The bitmap and dirty arrays of npages bitmap pages, zeroed.  0, or -ENOMEM with *words and
 * *dirty NULL (nothing left allocated). */
int map_alloc_arrays(uint64_t npages, uint64_t **words, uint64_t **dirty);

void map_drop_pending(struct sfs_map *m);

void map_mark_page_dirty(struct sfs_map *m, uint64_t page);

#endif
