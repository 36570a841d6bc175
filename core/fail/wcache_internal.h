/* SPDX-License-Identifier: MIT */
/*
 * wcache_internal.h - what wcache.c (the cache: writes, flushes, destaging,
 * the log) and cut.c (the cut: resolve, roll back) share: the cache and
 * its index of entries.
 *
 *   ents[head] ....... ents[n - 1]      oldest to newest, numbers rising
 *   log:  [hdr][dead ...][live entries ....................][tail
 *                        ^ hdr.live = ents[head].at         ^ tail
 */
#ifndef SFS_WCACHE_IMPL_H
#define SFS_WCACHE_IMPL_H

#include <pthread.h>

#include "contract/names.h"
#include "wcache.h"

struct wc_ent {
	uint64_t seq, off, len;   /* the write's number and range */
	uint64_t at;              /* its entry in the log */
	enum sfs_undo_kind kind;
};

struct sfs_wc {
	struct sfs_wc_config cfg;
	struct sfs_undo_geom lg;  /* the entries' geometry: cfg's, or a loaded log's */
	struct sfs_wc_backing b;
	int dirfd, fd;
	char fname[SFS_FILE_NAME_LEN];
	struct sfs_undo_hdr hdr;
	pthread_mutex_t lk;
	struct wc_ent *ents;
	size_t head, n, cap;
	uint64_t next_seq;
	uint64_t tail;            /* where the next entry goes */
	uint64_t cached;          /* bytes of the WRITE entries */
	uint64_t writes;          /* WRITE entries */
	uint64_t destaged;        /* bytes destaged since open */
	uint64_t loaded;          /* entries found at open, until settled */
	char *buf;                /* the old data of a write, the data a rollback copies */
	size_t buflen;
};

/* An entry as the log's codec sees it. */
static inline struct sfs_undo_rec sfs_wc_rec(const struct wc_ent *e)
{
	return (struct sfs_undo_rec){ .kind = e->kind, .seq = e->seq, .off = e->off, .len = e->len, .at = e->at };
}

/* Make wc->buf at least len bytes.  0 or -ENOMEM. */
int sfs_wc_buf(struct sfs_wc *wc, size_t len);

#endif
