/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the files of image/ share about one image: io.c
 * (I/O), open.c (open, close, descriptors), resident.c, backing.c,
 * zero.c, size.c, attr.c and state.c; not for other folders.  The tests'
 * view is image_test.h.
 *
 * An image has a light part, kept from load to close (name, geometry,
 * sidecar, backing file identity, what the map header says, statistics
 * once there was I/O), and a resident part: the backing descriptors, the
 * map with its bitmap, the stripe locks and the range lock.  Opened
 * without a descriptor cache the resident part lives as long as the
 * image.  With one (open.c, fdcache.h) it exists while the image is
 * pinned or idle in the cache, and is dropped (map flushed first) when
 * the cache evicts it; the I/O functions of io.c run only pinned, so
 * they always find it there.
 */
#ifndef SFS_IMAGE_IMPL_H
#define SFS_IMAGE_IMPL_H

#include <pthread.h>
#include <sys/types.h>

#include "util/fdcache.h"
#include "image.h"
#include "contract/names.h"
#include "util/rangelock.h"
#include "stats/cell.h"

#define IMAGE_NSTRIPES 256
#define IMAGE_ZEROBUF_MAX (1u << 20)
#define IMAGE_BOUNCE_LEN (1u << 20)
#define IMAGE_BOUNCE_ALIGN 4096u

struct sfs_image {
	char name[256];              /* rewritten in place on rename (under the slot's lock) */
	unsigned flags;              /* SFS_IMAGE_* of the open */
	struct sfs_log log;
	int store_fd, state_fd;      /* the store's directories (not ours): reopening by name */
	struct sfs_fdcache *fdc;     /* NULL: the resident part lives from open to close */
	struct sfs_fdslot slot;      /* in fdc */

	/* resident part */
	int fd;
	int dfd;                     /* the backing file opened O_DIRECT, or -1 */
	struct sfs_map *map;
	pthread_mutex_t *stripe;     /* IMAGE_NSTRIPES */
	struct sfs_rangelock *rl;
	struct sfs_map *retired[4];  /* maps replaced by sfs_image_reformat, freed at close */
	unsigned nretired;

	/* identity (fileid.h, map/ident.h), and what the map said when the resident part was last
	 * dropped */
	struct sfs_fileid bid, mid;  /* backing file and map file, as first opened */
	unsigned char id[SFS_IMAGE_ID_LEN];   /* the image's, from its map */
	struct sfs_map_info mi;
	uint64_t map_count, map_nblocks;

	unsigned dio_mem, dio_off;   /* O_DIRECT alignment of buffers and of offset/length */
	bool direct;                 /* dfd was open when last resident */
	struct sfs_geom geom;        /* geom.size (the capacity) read atomically: grow changes it */
	uint64_t vsize;              /* the size the disk shows (atomic): the capacity, except
	                                while growing, when writes up to the capacity extend it */
	bool growing;                /* created through the mount, its creator still open */
	struct sfs_sidecar sc;
	struct sfs_stats_cell stats; /* made at the first I/O, packed while idle (stats/cell.h) */
	struct sfs_model *model;     /* the device profile's drive, NULL for none (model.h) */
	struct sfs_fail *fail;       /* the failures of the disk, NULL for none (failures.c; atomic) */
	pthread_mutex_t fail_lk;     /* serialises making it */
	int no_zero_range;           /* the errno FALLOC_FL_ZERO_RANGE failed with, by probe or in
	                                use: zeroing fell back to writing; 0 while it works (atomic) */
	size_t zerolen;              /* bytes of the shared zero buffer a zeroing writes at once */
	int dirty;                   /* backing written since the last flush (atomic) */
	bool ranged;                 /* requests take their range in rl (io.c); atomic */
	unsigned unranged;           /* requests in flight without a range (atomic) */

	bool zero_bg;                /* eager zeroing in zero_thr (SFS_IMAGE_ZERO_BG) */
	pthread_mutex_t zero_lk;     /* guards the four below */
	pthread_t zero_thr;
	bool zero_joinable;          /* zero_thr is to be joined */
	bool zero_active;            /* zero_thr is zeroing, or about to (atomic reads) */
	bool zero_again;             /* a grow added blocks while it ran: look again */
	int zero_err;                /* how its last run ended: 0, or -errno (atomic reads) */
	int zero_stop;               /* atomic: stop at the next step, for good */
	uint64_t zero_t0, zero_from; /* when the thread started, and the bytes done by then */
};

/* The image's failure state, or NULL (failures.c). */
static inline struct sfs_fail *image_fail(const struct sfs_image *im)
{
	return __atomic_load_n(&im->fail, __ATOMIC_ACQUIRE);
}

/* The geometry of the backing file and the map: size is the capacity. */
/* The geometry the disk shows: size is the visible size (reads end there). */
static inline struct sfs_geom image_vis_geom(const struct sfs_image *im)
{
	struct sfs_geom g = im->geom;

	g.size = __atomic_load_n(&im->vsize, __ATOMIC_ACQUIRE);
	return g;
}

static inline struct sfs_geom image_cur_geom(const struct sfs_image *im)
{
	struct sfs_geom g = im->geom;

	g.size = __atomic_load_n(&im->geom.size, __ATOMIC_ACQUIRE);
	return g;
}

/* The process's buffer of IMAGE_ZEROBUF_MAX zeros (read-only, page-aligned, never resident:
 * reads map the kernel's zero page); NULL when it cannot be mapped. */
void *image_zerobuf(void);

/* Stop the zeroing thread, if any, and wait for it (io.c). */
void image_zero_join(struct sfs_image *im);

/* Hold the resident part as it is (no eviction, no reopen): true when it is there; unhold
 * after, either way. */
bool image_hold(const struct sfs_image *im);
void image_unhold(const struct sfs_image *im);

/* The image's live stats, made (or unpacked) at its first I/O; NULL without stats (or out of
 * memory).  Precondition: the caller is between sfs_stats_cell_enter and sfs_stats_cell_leave of
 * im->stats (the public I/O calls of io.c are), and uses them only until the leave. */
struct sfs_stats *image_stats_of(struct sfs_image *im);

/* The backing file was written: the next flush (or the eviction) must sync it. */
void image_mark_dirty(struct sfs_image *im);

/* Read or write len bytes at off of the backing file, through the O_DIRECT descriptor when
 * the transfer is aligned (bounced when buf is not), else the buffered one.  0 or -errno. */
int image_back_read(struct sfs_image *im, void *buf, size_t len, uint64_t off);
int image_back_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off);

/* The failure state's transfers (io.c): len bytes at off of the disk, through the
 * allocation map (a block never written reads as zeros, a write of one allocates it), with no
 * range, statistics, model or hook; and the sync that makes them durable (data, then map).
 * Pinned.  0, -EIO past the capacity, or -errno. */
int image_raw_read(struct sfs_image *im, void *buf, size_t len, uint64_t off);
int image_raw_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off);
int image_raw_sync(struct sfs_image *im);

/* ---- failures (failures.c) ---- */

/* At the end of the first open: the failure state, when the sidecar has a failure key or
 * NAME.disk or NAME.undo exists (a crash's log kept, a cut under way finished).  Pinned.
 * 0, or -errno with err filled (-EUCLEAN: a damaged NAME.disk, or a log a cut needs). */
int image_fail_open(struct sfs_image *im, char *err, size_t errlen);

/* At close, before the last flush of the map: the state's log settled and closed (logged when
 * it fails).  No request in flight. */
void image_fail_close(struct sfs_image *im);

/* The capacity changed (grow, trim): the bad-sector list follows. */
void image_fail_resize(struct sfs_image *im);

/* A request that takes no range when the image takes none (io.c): true when it is now
 * counted among those in flight without one (sfs_image_need_ranges waits for them; uncount it
 * when it ends), false when the image takes ranges. */
bool image_count_unranged(struct sfs_image *im);
void image_uncount_unranged(struct sfs_image *im);

/* The stripe lock of block blk (first writes, discards: one block at a time). */
static inline pthread_mutex_t *image_stripe_of(struct sfs_image *im, uint64_t blk)
{
	return &im->stripe[(blk * 0x9e3779b97f4a7c15ull) >> 56];
}

/* A request's hold on its byte range: a lock in rl when the image takes ranges, else a place in
 * the count of requests in flight without one (sfs_image_need_ranges waits for those); none
 * when the caller holds the range already (a read-modify-write). */
struct image_hold {
	struct sfs_range r;
	enum { HOLD_NONE, HOLD_COUNTED, HOLD_LOCKED } mode;
};

/* Take [off, off+len) for a request when the image needs it (io.c's note).  0 or the range
 * lock's -errno. */
static inline int image_range_lock(struct sfs_image *im, struct image_hold *h, uint64_t off, uint64_t len,
				   bool excl, bool caller_holds)
{
	int rc;

	h->mode = HOLD_NONE;
	if (caller_holds)
		return 0;
	if (image_count_unranged(im)) {
		h->mode = HOLD_COUNTED;
		return 0;
	}
	rc = sfs_rangelock_lock(im->rl, &h->r, off, len, excl);
	if (rc == 0)
		h->mode = HOLD_LOCKED;
	return rc;
}

/* Give back what image_range_lock took. */
static inline void image_range_unlock(struct sfs_image *im, struct image_hold *h)
{
	if (h->mode == HOLD_LOCKED)
		sfs_rangelock_unlock(im->rl, &h->r);
	else if (h->mode == HOLD_COUNTED)
		image_uncount_unranged(im);
}

/* A write of a growing image reached end: the disk shows at least that much. */
void image_extend_visible(struct sfs_image *im, uint64_t end);

/* Make [off, off+len) of the backing file read as zeros (FALLOC_FL_ZERO_RANGE with zero
 * offload, else zero buffers written).  0 or -errno. */
int image_zero_backing(struct sfs_image *im, uint64_t off, uint64_t len);

/* With zero offload, find out at open whether the backing filesystem (device dev, that of the
 * store directory im->store_fd; else nothing is done) zeroes ranges: probed once per
 * filesystem in the process (sfs_zero_range_probe), logged once when it does not, and
 * recorded in im->no_zero_range.  A probe that cannot tell leaves it to the first zeroing.
 * 0, or the -errno of an fstat of the store directory that failed. */
int image_probe_zero_range(struct sfs_image *im, dev_t dev);

/* Allocate every block touching [off, off+len) of the capacity (zeroed, each under its stripe
 * lock, as a first write does), for eager zeroing; no range lock.  0 or -errno. */
int image_allocate_range(struct sfs_image *im, uint64_t off, uint64_t len);

/* What the map records (resident: the map itself; else as last seen), safe without a pin. */
void image_map_state(const struct sfs_image *im, struct sfs_map_info *mi, uint64_t *count,
		     uint64_t *nblocks);

/* ---- the resident part (resident.c) ---- */

/* Stripe locks and range lock: 0 or -ENOMEM. */
int image_locks_alloc(struct sfs_image *im);

/* Close and free the resident part (whatever of it is there), without flushing. */
void image_res_drop(struct sfs_image *im);

/* Open the O_DIRECT twin of im->fd where the backing filesystem takes direct I/O: 0 (with or
 * without it), or -errno (out of descriptors, a failed fstat). */
int image_open_direct(struct sfs_image *im);

/* Descriptors the resident part holds now. */
unsigned image_res_nfds(const struct sfs_image *im);

/* Remember what identifies the map file and what its header says (resident). */
void image_note_map(struct sfs_image *im);

/* Whether requests take a range, from the descriptors open (io.c). */
void image_note_direct(struct sfs_image *im);

/* The descriptor cache's open and close of an image's slot (fdcache.h's callbacks): the open
 * gives the descriptors it opened or -errno with nothing left open; the close flushes what
 * was written (a failed flush keeps it open unless force) and drops the rest. */
int image_slot_open(struct sfs_fdslot *s);
int image_slot_close(struct sfs_fdslot *s, bool force);

#endif
