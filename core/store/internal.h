/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the store's state and the helpers its files share
 * (store.c: open, lookups; table.c: the table; scan.c: loading
 * sidecars and the scan; lock.c: the lock; namespace.c: create, unlink
 * and rename; size.c: grow, trim and the format of growing images).
 * Every helper runs under the store's mutex unless it says otherwise.
 */
#ifndef SFS_STORE_IMPL_H
#define SFS_STORE_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "util/fdcache.h"
#include "store.h"

/* What identifies one version of a sidecar file: a rewrite changes it. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct entry {
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	int refs;                  /* the table's own reference counts as one */
	struct sfs_sidecar declared;   /* the sidecar as loaded (or last written by the store) */
	struct file_id scid;       /* and the version of the file it was read from */
};

struct bad_sidecar {
	char name[NAME_MAX + 1];   /* the sidecar's file name */
	struct timespec mtime;
	off_t size;
};

struct sfs_store {
	int dirfd, statefd, lockfd;
	bool locked;               /* this process holds the lock (and may rewrite it) */
	struct sfs_store_opts opts;
	pthread_mutex_t lock;
	struct entry *ents;        /* sorted by name */
	size_t nents, capents;
	struct bad_sidecar *bad;   /* sidecars already reported, to report each change once */
	size_t nbad, capbad;
	struct entry *orphans;     /* unlinked or replaced images still held open */
	size_t norphans, caporphans;
	struct sfs_fdcache *fdc;   /* the images' descriptors (opts.fd_budget), or NULL */
	int reserve_fd;            /* space held for the trim of a growing image (size.c), or -1 */
	bool renames_left;         /* a rename record may be in .sectorfs: after recovery, or one of
				    * this run's left (namespace.c); only then do loads, creates and
				    * renames read .sectorfs for renames onto a name
				    * (sfs_recover_pending_known) */
};

/* The SFS_IMAGE_* flags the store opens its images with (its options). */
unsigned store_image_flags(const struct sfs_store *s);

/* The entry of name, NULL when none; *pos (when pos) where it is or would go. */
struct entry *store_find(struct sfs_store *s, const char *name, size_t *pos);

/* Make *arr (*cap elements of elem bytes) hold at least need; 0 or -ENOMEM. */
int store_grow_array(void **arr, size_t *cap, size_t need, size_t elem);

/* Put e into the table at its sorted place. */
int store_put_in(struct sfs_store *s, const struct entry *e);

/* A new entry for im (refs references) with the sidecar it was loaded from; 0 or -ENOMEM. */
int store_insert(struct sfs_store *s, const char *name, struct sfs_image *im, int refs,
		 const struct sfs_sidecar *declared, const struct file_id *scid);

/* The version of a sidecar file its stat says. */
struct file_id store_file_id_of(const struct stat *st);

/* Are a and b the same version of a file? */
bool store_same_file_id(const struct file_id *a, const struct file_id *b);

/* Identify the current version of name's sidecar; 0 or -errno. */
int store_sidecar_id(struct sfs_store *s, const char *name, struct file_id *id);

/* Describe how sidecar b differs from a ("size 1048576 -> 2097152, ..."); false when equal. */
bool store_sidecar_diff(const struct sfs_sidecar *a, const struct sfs_sidecar *b, char *buf, size_t len);

/* Take e out of the table and return it. */
struct entry store_take_out(struct sfs_store *s, struct entry *e);

/* Take e out of the table; an image still held open moves to the orphans. */
void store_remove_entry(struct sfs_store *s, struct entry *e);

/* Report sidecar name (a file name) again when it next fails. */
void store_forget_reported(struct sfs_store *s, const char *name);

/* Is rc the daemon running out of descriptors (-EMFILE, -ENFILE)? */
bool store_out_of_fds(int rc);

/* Load image name from its sidecar into the table (store lock held): 0, or why it cannot be
 * served, whole (-ENOENT without a sidecar, the -errno of what failed), err saying it (and
 * logged once per version of the sidecar). */
int store_load_locked(struct sfs_store *s, const char *name, struct entry **out, char *err,
		      size_t errlen);

/* Has e's image been removed from the store directory behind our back
 * (backing file unlinked, or another file put under its name, or its
 * sidecar gone), or its sidecar rewritten to say something else?  Then it
 * is dropped from the namespace; files still open on it keep working on
 * the instance they have.  The backing file is looked at by name and must
 * be the inode first opened (no descriptor needed); *bst is its stat
 * (valid when false is returned and the fstatat worked). */
bool store_prune_if_gone_stat(struct sfs_store *s, struct entry *e, struct stat *bst);

/* store_prune_if_gone_stat without the stat. */
bool store_prune_if_gone(struct sfs_store *s, struct entry *e);

/* The entry of name whose files are still there (one that has gone is pruned), or NULL (store
 * lock held). */
struct entry *store_find_live(struct sfs_store *s, const char *name);

/* Load every sidecar of the store not in the table yet.  The new names are loaded in sorted
 * order, so that each goes in at the end of a table filled from empty (a first scan of
 * thousands of images moves no entry). */
int store_scan_locked(struct sfs_store *s);

/* Take the store dir whose directory s->dirfd is: lock it, open (making it) its state directory
 * into s->statefd, lock its lock file into s->lockfd and write our holder into it
 * (lock.c draws the locks).  Never waits for a holder.
 *   -EBUSY   another holds the store; err names it
 *   -EUCLEAN the lock file is not a regular file (sfs_store_lock_file_check)
 *   -ESTALE  the state directory or lock file kept being replaced while being locked
 *   -errno   what failed, err saying it
 * Precondition: s->statefd and s->lockfd are -1. */
int store_take_lock(struct sfs_store *s, const char *dir, char *err, size_t errlen);

#endif
