/* SPDX-License-Identifier: MIT */
/*
 * image.h - one disk image: backing file + allocation map + stats.
 *
 * The image turns reads and writes at disk offsets into I/O on the
 * backing file with the disk's rules: alignment and range are checked
 * (geometry.h), never-written blocks read as zeros without touching the
 * backing file, and the first write to a block zeroes the rest of the
 * block (lazy zeroing, with FALLOC_FL_ZERO_RANGE when zero_offload is on
 * and the backing filesystem supports it, else by writing zeros).  First
 * writes to one block are serialised by a striped lock.  A write of a
 * sector is atomic to readers of it: where a transfer can go through the
 * host page cache, requests take their byte range in a range lock
 * (shared for reads, exclusive for writes); where every transfer is
 * O_DIRECT they take none, and requests that do not overlap never wait
 * for each other either way.
 *
 * All functions return 0 (or a byte count) or a negative errno.
 */
#ifndef SFS_IMAGE_H
#define SFS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "map/ident.h"
#include "map/map.h"
#include "contract/geometry.h"
#include "fail/fail.h"
#include "util/log.h"
#include "contract/sidecar.h"
#include "stats/stats.h"

struct sfs_image;
struct sfs_rangelock;
struct sfs_fdcache;

#define SFS_IMAGE_STATS 1u     /* keep statistics */
#define SFS_IMAGE_BUFFERED 2u  /* buffered backing I/O instead of O_DIRECT */
#define SFS_IMAGE_ZERO_BG 4u   /* eager zeroing in a thread of the image's own (sfs_image_zero_start) */
#define SFS_IMAGE_CREATE 8u    /* the image is being created: a map left under its name is an older
				* image's, and is replaced */

/* Open (or create, when the backing file is missing) image name.
 * store_fd: the store directory, holding name (backing file);
 * state_fd: STORE/.sectorfs, holding name.map.  sc is the parsed sidecar.
 * The recorded geometry wins: a sidecar whose sector sizes differ from the
 * map's is refused (-EINVAL, err says both).  flags: SFS_IMAGE_STATS
 * allocates stats; SFS_IMAGE_BUFFERED keeps backing I/O in the page cache
 * (else O_DIRECT where the backing filesystem supports it).  An
 * eagerzeroedthick image not yet all zeroed is zeroed before open returns,
 * unless SFS_IMAGE_ZERO_BG: then sfs_image_zero_start() zeroes it.
 * Bad state gives -EUCLEAN, a backing file that is not a regular file or
 * has other hard links -EPERM, each with err filled. */
int sfs_image_open(int store_fd, int state_fd, const char *name,
		   const struct sfs_sidecar *sc, unsigned flags,
		   const struct sfs_log *log, struct sfs_image **out,
		   char *err, size_t errlen);

/* As sfs_image_open, its descriptors (backing file, O_DIRECT twin, map) held in fdc
 * (fdcache.h; NULL: held from open to close, as sfs_image_open).  The image comes back pinned
 * once (sfs_image_unpin or sfs_image_release drops it).  An open that runs out of descriptors
 * closes an idle image's and tries again. */
int sfs_image_open_in(struct sfs_fdcache *fdc, int store_fd, int state_fd, const char *name,
		      const struct sfs_sidecar *sc, unsigned flags, const struct sfs_log *log,
		      struct sfs_image **out, char *err, size_t errlen);

/* Does the filesystem of directory dirfd zero ranges with fallocate(FALLOC_FL_ZERO_RANGE)?
 * Tried on an unnamed temporary file there (O_TMPFILE), so nothing in the directory changes.
 * 0 with *why 0 when it does, or *why the errno it fails with (EOPNOTSUPP...) when it does
 * not, zeroing then falling back to writing zeros; -errno when that cannot be told (no write
 * permission, no O_TMPFILE, no space). */
int sfs_zero_range_probe(int dirfd, int *why);

/* Stop the zeroing thread (at its next step, progress kept) and wait for it, flush (data then
 * map) and free the image; returns the flush result.  No other call on im may be running. */
int sfs_image_close(struct sfs_image *im);

/* Keep im's descriptors and map open until the matching unpin, reopening them first when the
 * cache closed them: backing file by name (-ENOENT when the file there now is not the one
 * opened first: removed or replaced behind our back), map checked again (-EUCLEAN, logged,
 * when it is another file or says something else); -EMFILE/-ENFILE when no descriptor can be
 * had; any other -errno a call on the way failed with (fstat, the map's reads).  Every call below that does I/O, and sfs_image_fd and sfs_image_map, need a pin when
 * the image has a cache; without one pin and unpin do nothing (0). */
int sfs_image_pin(struct sfs_image *im);

/* Drop a pin (precondition: pinned); the last one leaves the image idle in its cache. */
void sfs_image_unpin(struct sfs_image *im);

/* Drop a pin; the last one closes the image's descriptors at once (after a load: an image
 * nobody uses holds none). */
void sfs_image_release(struct sfs_image *im);

/* The device and inode of the backing file as first opened. */
void sfs_image_identity(const struct sfs_image *im, dev_t *dev, ino_t *ino);

/* What an intent record says of the image (intent.h): its identity and its backing file's. */
struct sfs_intent_who sfs_image_intent_who(const struct sfs_image *im);

/* The stat of the backing file by its name (no pin needed): 0, -ESTALE when another file is
 * there now (not the one first opened: another inode, or a new file that took its inode
 * number, fileid.h), or -errno (-ENOENT: none). */
int sfs_image_backing_stat(struct sfs_image *im, struct stat *st);

/* Is the backing file gone from its name (removed, or another file put there)? */
bool sfs_image_backing_gone(struct sfs_image *im);

/* Make st, a stat of the backing file, the disk's: st_size the disk size, st_blksize the
 * physical sector. */
void sfs_image_stat_fill(const struct sfs_image *im, struct stat *st);

/* fchmod (mode & 07777), fchown, futimens of the backing file, pinned for the call: 0 or
 * -errno (a pin's too). */
int sfs_image_chmod(struct sfs_image *im, mode_t mode);
int sfs_image_chown(struct sfs_image *im, uid_t uid, gid_t gid);
int sfs_image_utimens(struct sfs_image *im, const struct timespec tv[2]);

/* Read len bytes at off into buf: bytes read (0 at/after the end) or -EINVAL/-EIO. */
ssize_t sfs_image_read(struct sfs_image *im, void *buf, size_t len, uint64_t off);

/* Write len bytes at off: len, or -EINVAL/-ENOSPC/-EIO (nothing written when refused). */
ssize_t sfs_image_write(struct sfs_image *im, const void *buf, size_t len, uint64_t off);

/* Read as through a block device's page cache: any offset and length; what reaches the disk
 * (and the stats) is whole physical sectors around them.  Bytes read (0 at/after the end) or
 * -errno.  Aligned requests are sfs_image_read. */
ssize_t sfs_image_read_any(struct sfs_image *im, void *buf, size_t len, uint64_t off);

/* Write as through a page cache: partial physical sectors are read, merged and written whole,
 * under an exclusive range (so the merge races no other write of them).  len, -ENOSPC past
 * the end (nothing written), -EINVAL for a growing image's extending write that is not whole
 * sectors, or -errno.  Aligned requests are sfs_image_write. */
ssize_t sfs_image_write_any(struct sfs_image *im, const void *buf, size_t len, uint64_t off);

/* From now on every request of im takes its range in the range lock (the read-modify-writes
 * of sfs_image_write_any need it); waits for the requests in flight without one. */
void sfs_image_need_ranges(struct sfs_image *im);

/* Make every write before it durable: data fdatasync, then the map.  With a volatile write
 * cache it is the drive's flush too (fail.h).  0, -EIO with the power off, or -errno. */
int sfs_image_flush(struct sfs_image *im);

/* The writes this thread makes next are FUA (fua true: an O_DSYNC or O_SYNC open), or not:
 * under a volatile write cache a FUA write is durable at completion, without the writes before
 * it.  Set by the daemon for each write request, as sfs_requester_set names its requester. */
void sfs_image_fua_next(bool fua);

/* After a FUA write: what sfs_image_flush does on the host (data, then map, counted as a flush
 * in the stats, priced as one by a profile), without flushing the drive's write cache. */
int sfs_image_sync(struct sfs_image *im);

/* Discard [off, off+len): thin frees whole blocks and zeroes partial ones, thick zeroes. */
int sfs_image_discard(struct sfs_image *im, uint64_t off, uint64_t len);

/* Make [off, off+len) read as zeros. */
int sfs_image_write_zeroes(struct sfs_image *im, uint64_t off, uint64_t len);

/* Allocate (zero and mark written) every block touching [off, off+len). */
int sfs_image_allocate(struct sfs_image *im, uint64_t off, uint64_t len);

/* Grow the disk to new_size (multiple of the logical sector, >= size) in one call, without a
 * journal: prepare, commit, zeroing (sfs_image_zero_start: in the background when opened
 * SFS_IMAGE_ZERO_BG), flush.  0; -EINVAL for a bad size, -EFBIG past sfs_geom_size_max (both
 * before any work); -errno with the image as before when prepare or commit fails (a later
 * error leaves it grown). */
int sfs_image_grow(struct sfs_image *im, uint64_t new_size);

/* Grow, step 1: extend the backing file to new_size (space reserved when thick, the old partial
 * last block's tail zeroed) and the map file, durably; the disk keeps its size.  0 (also when
 * new_size is the size), -EINVAL for a bad size, -EFBIG past sfs_geom_size_max (both before any
 * work), or -errno with everything as before. */
int sfs_image_grow_prepare(struct sfs_image *im, uint64_t new_size);

/* Grow, step 2, the commit point: the map header records new_size (eagerzeroedthick: no longer
 * all zeroed) and the disk has it.  Needs a prepare of new_size.  0 or -errno (size as before,
 * then abort). */
int sfs_image_grow_commit(struct sfs_image *im, uint64_t new_size);

/* Undo a prepare that is not committed: the map file as its header describes, the backing file
 * cut back to old_len (its length before the prepare) with what was reserved for the growth.
 * 0 or -errno (then the next open, through the store's journal, finishes the undo). */
int sfs_image_grow_abort(struct sfs_image *im, uint64_t old_len);

/* Eagerzeroedthick: zero and mark every block not yet allocated (under the block locks, so it
 * may run while the disk is in use), flushing every 256 MiB, then record the image zeroed once
 * every bit is set (checked under all the block locks, so a grow cannot slip in).  No-op for
 * other modes or when already zeroed.  0 or -errno (progress kept). */
int sfs_image_finish_zeroing(struct sfs_image *im);

/* Progress of a long operation: bytes done of total.  A non-zero return cancels the operation,
 * which then returns -ECANCELED. */
typedef int (*sfs_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Any mode: zero and mark every block not yet allocated, as the eager zeroing does (the same
 * loop), fn (may be NULL) called after each step with the bytes done of those clear at the
 * start; then flush (an eagerzeroedthick image is also recorded zeroed).  Data already
 * written is not touched.  0, -ECANCELED (what was done flushed: a valid image with more
 * blocks allocated) or -errno. */
int sfs_image_fill(struct sfs_image *im, sfs_progress_fn fn, void *ctx);

/* Every block allocated (sfs_image_fill): record the image eagerzeroedthick and zeroed in its
 * map header, rewritten in place (map/map.h, sfs_map_set_prov), and serve it as one.  The
 * sidecar is the caller's.  0, -EAGAIN when a block is not allocated, or -errno. */
int sfs_image_make_eager(struct sfs_image *im);

/* Copy the data extents of the raw file src_fd (SEEK_DATA/SEEK_HOLE) into the image at the
 * same offsets, through sfs_image_write: extents are widened to whole logical sectors, bytes
 * past the end of src read as zeros, holes are not written and stay unallocated.  The file
 * must fit in the disk (-EFBIG otherwise).  A filesystem without SEEK_DATA is copied whole.
 * Then flush.  0, -ECANCELED (fn's) or -errno. */
int sfs_image_import_raw(struct sfs_image *im, int src_fd, sfs_progress_fn fn, void *ctx);

/* Eagerzeroedthick not yet all zeroed (after open or a grow): opened SFS_IMAGE_ZERO_BG, start
 * the image's zeroing thread, or have the running one take in the blocks a grow added, and
 * return at once; else zero now (sfs_image_finish_zeroing).  No-op for other modes, when
 * zeroed, or after sfs_image_zero_cancel.  0, or -errno (thread not started, logged; or the
 * error of zeroing now). */
int sfs_image_zero_start(struct sfs_image *im);

/* Ask the zeroing thread to stop, for good, at its next step (about every 8 MiB), the map
 * flushed; returns at once (sfs_image_close waits for it).  For an image whose backing file is
 * gone. */
void sfs_image_zero_cancel(struct sfs_image *im);

/* Where eager zeroing stands: *done of *total bytes zeroed or written (blocks set), *err the
 * error that ended a FAILED run (else 0).  Safe while it runs; no pin needed. */
enum sfs_zeroing sfs_image_zeroing(const struct sfs_image *im, uint64_t *done, uint64_t *total, int *err);

/* stat of the backing file with st_size = disk size, st_blksize = physical sector (no pin
 * needed: by name when not open; -ENOENT when another file is there now). */
int sfs_image_stat(struct sfs_image *im, struct stat *st);

/* The geometry the disk shows (its size: what a grow or, while growing, a write made it). */
struct sfs_geom sfs_image_geom(const struct sfs_image *im);

/* The capacity: the size backing file, map and sidecar have (>= the size shown; more only
 * while growing). */
uint64_t sfs_image_capacity(const struct sfs_image *im);

/* An image created through the mount grows while the handle that created it is open: then
 * writes up to the capacity extend the size it shows.  Set by the creator, cleared by the
 * store (sfs_store_settle); cleared, the image shows its whole capacity. */
void sfs_image_set_growing(struct sfs_image *im, bool growing);

/* Is the image growing (sfs_image_set_growing)? */
bool sfs_image_growing(const struct sfs_image *im);

/* A growing image shows size (>= its size, <= its capacity, a multiple of the logical
 * sector): what truncate does within the capacity.  0 or -EINVAL. */
int sfs_image_show_size(struct sfs_image *im, uint64_t size);

/* The commit point of a shrink (grow.c, sfs_trim): the map shrinks to cap durably, which no
 * written block lies past: capacity a growing image reserved ahead of its writes (cap >= the
 * size shown), or a disk holding no data (it then shows cap).  0; -EAGAIN when a write went
 * past cap meanwhile; -EBUSY when a block past cap is allocated; -EINVAL; or -errno. */
int sfs_image_trim_commit(struct sfs_image *im, uint64_t cap);

/* Can im, of capacity 0 and holding nothing, take the format of sc (sector sizes, provisioning,
 * block size; size 0) now?  Every limit of sfs_image_reformat, checked before the store changes
 * a file.  0, or:
 *   -EINVAL  sc is not a valid sidecar of size 0
 *   -EBUSY   im has room or data, or has had a new format 4 times since its files were opened
 *            (the maps it replaced are kept until they are closed: a lock-free reader may hold
 *            one) */
int sfs_image_reformat_check(const struct sfs_image *im, const struct sfs_sidecar *sc);

/* The header of the empty map of im in sc's format (size 0, no flags) and the identity that ties
 * it to im, for the store to make before sfs_image_reformat. */
void sfs_image_reformat_map_info(const struct sfs_image *im, const struct sfs_sidecar *sc,
				 struct sfs_map_info *mi, struct sfs_map_ident *ident);

/* Give im the format of sc with nm, the empty map the store made for it (as
 * sfs_image_reformat_map_info says) and put in place of NAME.map; im owns nm.  Cannot fail.
 * Precondition: sfs_image_reformat_check(im, sc) is 0, under the store's lock that kept im as
 * it was since. */
void sfs_image_reformat(struct sfs_image *im, struct sfs_map *nm, const struct sfs_sidecar *sc);

/* After sfs_image_trim_commit: cut the backing file to the capacity, durably (its
 * reservation goes with it).  0 or -errno. */
int sfs_image_trim_backing(struct sfs_image *im);

/* The sidecar the image runs with (recorded geometry; size: the capacity, which the sidecar
 * file says). */
struct sfs_sidecar sfs_image_sidecar(const struct sfs_image *im);

/* The allocation map (for tools and tests; pinned when the image has a cache). */
struct sfs_map *sfs_image_map(struct sfs_image *im);

/* The live stats, made (or unpacked) now if need be (same generation and start as the empty
 * snapshots before); NULL when opened without, or out of memory.  For tests and tools: the
 * pointer holds until sfs_image_stats_idle packs the stats, which only the daemon's idle thread
 * calls. */
struct sfs_stats *sfs_image_stats(struct sfs_image *im);

/* A snapshot of the stats into snap, all zero when the image had no I/O yet (which allocates
 * nothing: reading the stats of many idle images costs no memory), from the packed values when
 * it is idle (which unpacks nothing).  Precondition: opened with SFS_IMAGE_STATS. */
void sfs_image_stats_snapshot(struct sfs_image *im, struct sfs_stats_snap *snap);

/* The recent refused and read-modify-write I/Os into out, none when the image had no I/O yet
 * (which allocates nothing).  Precondition: opened with SFS_IMAGE_STATS. */
void sfs_image_stats_recent(struct sfs_image *im, struct sfs_stats_recent *out);

/* Run a command written to the image's text stats file (buf, len bytes): "reset" zeroes the
 * counters and lists and takes a new generation, idle or not (stats/cell.h).  0, or -EINVAL
 * for anything else (nothing changes). */
int sfs_image_stats_command(struct sfs_image *im, const char *buf, size_t len);

/* The idle look at the image's stats (sfs_stats_cell_idle): pack them when no I/O came or went
 * since the previous look.  1 when packed, 0 when not, -ENOMEM.  Safe at any time, from any
 * thread (never waits for I/O). */
int sfs_image_stats_idle(struct sfs_image *im);

/* Fill info for the stats renderers (name, geometry, allocation, profile; no recent lists:
 * NULL; no pin needed). */
void sfs_image_stats_info(const struct sfs_image *im, struct sfs_stats_info *info);

/* The image's name (as opened, or as last renamed). */
const char *sfs_image_name(const struct sfs_image *im);

/* Change the name the image reports (after a rename by the store); 0 or -ENAMETOOLONG. */
int sfs_image_set_name(struct sfs_image *im, const char *name);

/* ---- failures (failures.c; fail.h, doc/failures.md) ----
 *
 * An image has a failure state when its sidecar has a failure key, when STORE/.sectorfs holds
 * its NAME.disk or NAME.undo, or from the first failure attribute written to it (made then,
 * once the requests in flight are done).  Without one an image pays one NULL pointer load per
 * request.  With one, its requests always take their range (sfs_image_need_ranges). */

/* Does the image have a failure state now? */
bool sfs_image_has_failures(const struct sfs_image *im);

/* The value of failure attribute key (sfs_xattr_failure) into a malloc'd NUL-terminated string (*out, *len without
 * the NUL, no newline), from the state or, without one, the defaults ("on", "0", the sidecar's
 * policy and unit, no bad sector).  0, -ENODATA (not a failure attribute) or -ENOMEM. */
int sfs_image_fail_attr_get(struct sfs_image *im, const char *key, char **out, size_t *len);

/* Write failure attribute key (value, len bytes; a trailing newline ignored), making the state
 * first when there is none.  0; -EPERM (read-only: atomic_write_unit), -ENODATA (not one);
 * -EINVAL with err naming what is wrong; or the -errno of the state's open or save, with err. */
int sfs_image_fail_attr_set(struct sfs_image *im, const char *key, const char *value, size_t len, char *err,
			    size_t errlen);

/* The failure status and the last cut into st and last (may be NULL; free last->rep with
 * sfs_wc_report_free): 0, -ENODATA when the image has no failure state, or -ENOMEM. */
int sfs_image_fail_status(struct sfs_image *im, struct sfs_fail_status *st, struct sfs_fail_cutinfo *last);

/* Run a command written to the text stats file (sfs_stats_command); a reset zeroes the failure
 * counters too.  0 or -EINVAL. */
int sfs_image_stats_command(struct sfs_image *im, const char *buf, size_t len);

/* For the store around a rename or unlink of the image (fail.h): pause its failure state; resume
 * it under its new name (NULL: the same), or detached (its files removed).  No-ops without one. */
void sfs_image_fail_pause(struct sfs_image *im);
void sfs_image_fail_resume(struct sfs_image *im, const char *name, bool detach);

/* The backing file descriptor (for tools and tests; do not close; pinned when the image has a
 * cache). */
int sfs_image_fd(const struct sfs_image *im);

/* True when the image's backing I/O is O_DIRECT (aligned transfers). */
bool sfs_image_direct(const struct sfs_image *im);

#endif
