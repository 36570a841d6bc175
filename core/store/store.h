/* SPDX-License-Identifier: MIT */
/*
 * store.h - a directory of disk images, served by one daemon at a time.
 *
 * STORE/NAME is a backing file, STORE/NAME.json its sidecar, and
 * STORE/.sectorfs/ holds daemon state: NAME.map allocation maps, the
 * "lock" file (flock + holder description) and a rename journal.
 * Opening a store locks the store directory itself and the lock file; a
 * second opener gets -EBUSY and a message naming the holder, whatever
 * became of the lock file (lock.c).  Bad sidecars are logged (one line naming
 * file, key and reason) and their images left out; the rest is served.
 *
 * Images are reference counted: sfs_store_get() / sfs_store_put().  An
 * unlinked image keeps working for those holding it, as an unlinked file
 * does.
 *
 * An eagerzeroedthick image not yet all zeroed (new, grown, or stopped
 * part way) is zeroed when loaded and after a grow.  With zero_background
 * (the daemon) that runs in a thread of the image's own, outside the
 * store's lock, so the image is served at once and every other lookup
 * goes on; blocks not zeroed yet read zeros, and a write to one zeroes it
 * first, as in zeroedthick.  Without it (the tools) the load or the grow
 * returns once the zeroing is done.
 */
#ifndef SFS_STORE_H
#define SFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "image/image.h"
#include "util/log.h"
#include "contract/names.h"
#include "contract/sidecar.h"

struct sfs_store;

struct sfs_store_opts {
	struct sfs_sidecar defaults;  /* for images created through the mount (size ignored) */
	bool stats;                   /* keep per-image statistics */
	bool buffered;                /* buffered backing I/O (page cache) instead of O_DIRECT */
	struct sfs_log log;
	const char *holder;           /* description written in the lock file, e.g. "pid 42 mount /mnt" */
	bool lazy;                    /* load images only when asked for (tools): no scan at open */
	bool zero_background;         /* eager zeroing in the background (the daemon): an image is
	                                 served at once, zeroed while in use; else before it is served */
	unsigned fd_budget;           /* descriptors the images may hold at once (fdcache.h): an image
	                                 holds its own only while in use or idle in the cache; 0: every
	                                 image holds them from its load to the close (the tools) */
};

/* Open dir as a store: lock it, finish an interrupted rename, load every sidecar (unless lazy). */
int sfs_store_open(const char *dir, const struct sfs_store_opts *o, struct sfs_store **out,
		   char *err, size_t errlen);

/* Flush and close every image, release the lock and free; returns the first flush error. */
int sfs_store_close(struct sfs_store *s);

/* Rewrite the holder description in the lock file (after daemonising, the pid changes). */
int sfs_store_set_holder(struct sfs_store *s, const char *holder);

/* Who holds store dir: 0 with the holder's description in buf ("" when unknown), -ENOENT when
 * nobody does, or -errno when dir cannot be opened.  Holder is whoever holds the store
 * directory's lock or the lock file's (a holder of an older version). */
int sfs_store_holder(const char *dir, char *buf, size_t len);

/* Would the store whose state directory is statefd be refused for its lock file (dir for the
 * message)?  0 when the lock file is a regular file of one link, or absent; -EUCLEAN when it
 * is a symbolic link, directory, FIFO, socket or device (never opened) or hard-linked
 * elsewhere, -errno when it cannot be looked at; err is the message sfs_store_open refuses
 * the store with. */
int sfs_store_lock_file_check(const char *dir, int statefd, char *err, size_t errlen);

/* Look an image up by name (loading a sidecar added since); takes a reference, not a pin
 * (sfs_image_pin before I/O).  0, or why the image cannot be served, whole: the -errno of
 * what failed (-ENOENT: no sidecar; -EINVAL, -EUCLEAN, -EPERM, -EIO... from the sidecar,
 * map or backing file; -EMFILE/-ENFILE/-ENOMEM when the daemon ran out), with a message
 * naming the file and the reason in err. */
int sfs_store_lookup(struct sfs_store *s, const char *name, struct sfs_image **out, char *err,
		     size_t errlen);

/* sfs_store_lookup as the namespace sees it: an image that cannot be served is not there.
 * 0, -ENOENT, or -EMFILE/-ENFILE/-ENOMEM when an image that is not loaded yet cannot be for
 * want of descriptors or memory (the image may be fine). */
int sfs_store_get(struct sfs_store *s, const char *name, struct sfs_image **out);

/* stat of image name as sfs_image_stat gives it (size the disk's, st_blksize its physical
 * sector; the rest the backing file's, looked at by name: no descriptor needed).  As get. */
int sfs_store_stat(struct sfs_store *s, const char *name, struct stat *st);

/* Drop a reference taken by get or create. */
void sfs_store_put(struct sfs_store *s, struct sfs_image *im);

/* Create an empty image with the store defaults and write its sidecar; takes a reference (the
 * new image's descriptors stay open, idle, for the pin that comes next). */
int sfs_store_create(struct sfs_store *s, const char *name, struct sfs_image **out);

/* Remove an image: sidecar, backing file and map. */
int sfs_store_unlink(struct sfs_store *s, const char *name);

/* Progress of sfs_store_make_image and sfs_store_inflate, phase by phase ("copying", "zeroing"). */
struct sfs_store_progress {
	int (*phase)(void *ctx, const char *name);   /* a phase starts; NULL: the data is in place,
	                                                the commit comes; non-zero cancels */
	sfs_progress_fn fn;                          /* within a phase (may be NULL) */
	void *ctx;                                   /* for both */
};

/* Make image name from sidecar sc (validated), for the tools (make.c draws the order):
 * backing file and map, the raw file src_fd copied in when >= 0 (sfs_image_import_raw),
 * eagerzeroedthick zeroed now, then the sidecar (the commit point), under an intent record so
 * that a crash part way is undone at the next open.  Nothing existing is overwritten.  pr may
 * be NULL.  0; -ECANCELED or -errno (-EEXIST: a file of the image is there) with nothing left
 * behind and err saying what failed (without the image's name). */
int sfs_store_make_image(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc, int src_fd,
			 const struct sfs_store_progress *pr, char *err, size_t errlen);

/* Convert im (thin or zeroedthick) to eagerzeroedthick, for the tools: every block not yet
 * written zeroed (data kept), then the map header, then the sidecar (make.c).  0, also
 * when it already was (its sidecar made to say so, if a crash left it saying another mode);
 * -ECANCELED with the image valid in its old mode (more blocks allocated); -errno with err
 * saying what failed (past the map's commit, the next open finishes the sidecar). */
int sfs_store_inflate(struct sfs_store *s, struct sfs_image *im, const struct sfs_store_progress *pr,
		      char *err, size_t errlen);

/* Rename an image with its sidecar and map (journalled); replaces the target unless noreplace. */
int sfs_store_rename(struct sfs_store *s, const char *from, const char *to, bool noreplace);

/* Grow an image and rewrite its sidecar, all or nothing (grow.h); a growing image shows
 * new_size, its capacity grown to it if need be.  0, -EINVAL (a bad or smaller size), -EFBIG
 * (past sfs_geom_size_max, refused before any work), -errno. */
int sfs_store_resize(struct sfs_store *s, struct sfs_image *im, uint64_t new_size);

/* Grow the capacity of growing image im (sfs_image_set_growing) to at least end, with room
 * ahead of its writes (journalled as any grow).  0, -EINVAL when not growing, -EFBIG when end
 * is past sfs_geom_size_max (refused before any work), -ENOSPC when the store has no room, or
 * -errno. */
int sfs_store_make_room(struct sfs_store *s, struct sfs_image *im, uint64_t end);

/* Write through the handle that created im: sfs_image_write (direct) or sfs_image_write_any,
 * and when a growing image needs more capacity, sfs_store_make_room and the write again.  As
 * those. */
ssize_t sfs_store_write_growing(struct sfs_store *s, struct sfs_image *im, const void *buf, size_t len,
				uint64_t off, bool direct);

/* Choose the format of growing image im while it is empty (capacity 0): key "sector",
 * "provisioning" or "block_size" set to value (sidecar words), the sidecar rewritten and a new
 * map made, all or nothing: every limit is checked before a file changes, and a failure before
 * the sidecar's rewrite puts everything back (size.c draws the order).  0, or:
 *   -EBUSY   it has room or data, is not growing, or has had 4 formats since it was opened
 *   -EINVAL  a bad value
 *   -EPERM   another key
 *   -errno   of the files (nothing changed) */
int sfs_store_set_format(struct sfs_store *s, struct sfs_image *im, const char *key, const char *value);

/* Make the size a growing image shows its durable size, giving back the room ahead of its
 * writes (grow.h, sfs_trim): with done when its creator closes it, after which it is a disk of
 * fixed size (an fsync keeps the room: the next write would take it again).  With done the
 * store first gives up the space it held for this (size.c), so that the trim can write
 * on a store the copy filled; a room it still cannot give back is logged with what the image
 * keeps.  No-op for other images (done still clears growing).  0 or -errno. */
int sfs_store_settle(struct sfs_store *s, struct sfs_image *im, bool done);

/* Call cb for every image name, sorted; stops at and returns cb's first non-zero result. */
int sfs_store_list(struct sfs_store *s, int (*cb)(void *ctx, const char *name), void *ctx);

/* Call cb for the images at sorted positions [first, first + max) (a listing in pieces, as
 * readdir with offsets reads it; the names are copied first, cb runs without the store's
 * lock); stops at cb's first non-zero result.  How many names there were (>= 0), a negative
 * result of cb, or -ENOMEM. */
int sfs_store_list_range(struct sfs_store *s, size_t first, size_t max,
			 int (*cb)(void *ctx, const char *name), void *ctx);

/* Pick up sidecars added to the store directory since it was opened. */
int sfs_store_rescan(struct sfs_store *s);

/* What a store serves, for the daemon's start-up report. */
struct sfs_store_tally {
	size_t served;     /* images in the namespace */
	size_t refused;    /* sidecars there whose image is not served (each reason logged once) */
	size_t zeroing;    /* served images whose eager zeroing runs in the background */
	size_t open_max;   /* images that can have their descriptors open at once (0: no limit) */
	size_t open_now;   /* images with their descriptors open now */
	size_t fds_now;    /* descriptors they hold (0 without a budget) */
	uint64_t evictions;   /* images whose descriptors were closed to make room */
};

/* Count what s serves now into *t. */
void sfs_store_tally(struct sfs_store *s, struct sfs_store_tally *t);

/* What an idle look gave back. */
struct sfs_store_idle {
	size_t packed;     /* images whose stats were packed */
	unsigned closed;   /* images whose descriptors (and bitmap and locks) were closed */
};

/* The idle look, made every quiet_ns by the daemon: every image's stats with no I/O since the
 * previous look are packed (sfs_image_stats_idle), and the resident part of every image that
 * nobody has used for quiet_ns is closed (sfs_fdcache_close_idle), its next use opening it
 * again.  What it gave back into *out. */
void sfs_store_idle(struct sfs_store *s, uint64_t quiet_ns, struct sfs_store_idle *out);

/* The store directory's fd (for statfs). */
int sfs_store_fd(const struct sfs_store *s);

#endif
