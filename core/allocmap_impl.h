/* SPDX-License-Identifier: MIT */
/*
 * allocmap_impl.h - the allocation map in memory, shared by allocmap.c
 * (create, open, close and the bits) and mapflush.c (the flush protocol,
 * grow, shrink and flags).  allocmap.c draws the format and the ordering.
 * Its last part is the tests' view: what a unit test may look at beside
 * allocmap.h, which holds what the rest of sectorfs uses.
 */
#ifndef SFS_ALLOCMAP_IMPL_H
#define SFS_ALLOCMAP_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "allocmap.h"
#include "mapfile.h"

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
	uint64_t *words;                  /* npages * PAGE_WORDS words */
	uint64_t *dirty;                  /* one bit per page */
	uint64_t count;                   /* allocated blocks, atomic */
	pthread_mutex_t flush_lock;
	struct snap_page *snap;
	size_t nsnap;
	struct old_arrays *old;
	uint64_t *pend_words, *pend_dirty;   /* a prepared grow's arrays (NULL: same pages) */
	uint64_t pend_size, pend_pages;      /* a prepared grow's size and page count */
	bool pending;                        /* a grow is prepared */
};

int sfs_mapi_write_header(struct sfs_map *m);

int sfs_mapi_alloc_arrays(uint64_t npages, uint64_t **words, uint64_t **dirty);

void sfs_mapi_drop_pending(struct sfs_map *m);

void sfs_mapi_mark_page_dirty(struct sfs_map *m, uint64_t page);

/* ---- the tests' view: what the unit tests look at and fs/ and tools/ never need ---- */

/* The map file's descriptor (do not close): test_faults aims its failures at it. */
int sfs_map_fd(const struct sfs_map *m);

#endif
