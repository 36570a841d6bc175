/* SPDX-License-Identifier: MIT */
/*
 * wcache.c - the volatile write cache (wcache.h): the log of what is not
 * yet durable, writes, flushes and destaging (its keys are the contract's,
 * contract/failkeys.c).  The cut itself is cut.c.
 *
 * Every call takes the cache's mutex for its whole length, the saving of a
 * write's old data included: writes to a volatile cache enter the log one
 * at a time (their data transfers, the caller's, still run in parallel).
 * The log's header is rewritten when entries leave its head; when the last
 * one leaves, the file is cut back to its header under a new generation.
 * When the dead space before the head grows past max(write_cache_size,
 * 1 MiB) the live entries are copied to a new file (undolog.c), so the
 * file stays within about twice the cache.
 */
#include "wcache_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

#define COMPACT_MIN (1ull << 20)

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* ---- the log ---- */

static struct sfs_undo_geom cfg_geom(const struct sfs_wc_config *c)
{
	return (struct sfs_undo_geom){ .lss = c->lss, .pss = c->pss, .awu = c->awu, .awb = c->awb,
				       .rmw_power_safe = c->rmw_power_safe };
}

int sfs_wc_buf(struct sfs_wc *wc, size_t len)
{
	char *p;

	if (len <= wc->buflen)
		return 0;
	p = realloc(wc->buf, len);
	if (!p)
		return -ENOMEM;
	wc->buf = p;
	wc->buflen = len;
	return 0;
}

static int push(struct sfs_wc *wc, const struct wc_ent *e)
{
	if (wc->head > 0 && wc->head >= wc->n / 2) {   /* reuse the room popped entries left */
		memmove(wc->ents, wc->ents + wc->head, (wc->n - wc->head) * sizeof(*e));
		wc->n -= wc->head;
		wc->head = 0;
	}
	if (wc->n == wc->cap) {
		size_t cap = wc->cap ? wc->cap * 2 : 64;
		struct wc_ent *v = realloc(wc->ents, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		wc->ents = v;
		wc->cap = cap;
	}
	wc->ents[wc->n++] = *e;
	if (e->kind == SFS_UNDO_WRITE) {
		wc->cached += e->len;
		wc->writes++;
	}
	return 0;
}

/* Drop the oldest entry (destaged when destage: its bytes counted). */
static void pop(struct sfs_wc *wc, bool destage)
{
	const struct wc_ent *e = &wc->ents[wc->head++];

	if (e->kind == SFS_UNDO_WRITE) {
		wc->cached -= e->len;
		wc->writes--;
		if (destage)
			wc->destaged += e->len;
	}
	if (wc->head == wc->n)
		wc->head = wc->n = 0;
}

/* After entries left the head: KEPT entries with nothing older go too (they settle nothing),
 * then the header points at the new head, or the log is emptied. */
static int settle_head(struct sfs_wc *wc)
{
	while (wc->head < wc->n && wc->ents[wc->head].kind == SFS_UNDO_KEPT)
		pop(wc, false);
	if (wc->head == wc->n) {
		wc->tail = SFS_UNDO_HDR_LEN;
		return sfs_undo_reset(wc->fd, &wc->hdr, wc->next_seq, false);
	}
	wc->hdr.live = wc->ents[wc->head].at;
	wc->hdr.mark = wc->ents[wc->head].seq;
	return sfs_undo_write_hdr(wc->fd, &wc->hdr);
}

/* The dead space before the head is larger than the cache: copy the live entries down. */
static void maybe_compact(struct sfs_wc *wc)
{
	uint64_t lim = wc->cfg.size > COMPACT_MIN ? wc->cfg.size : COMPACT_MIN, shift = 0;

	if (wc->head == wc->n || wc->hdr.live - SFS_UNDO_HDR_LEN < lim)
		return;
	if (sfs_undo_compact(wc->dirfd, wc->fname, &wc->fd, &wc->hdr, wc->tail, &shift) < 0)
		return;   /* the file stays longer; nothing is lost */
	for (size_t i = wc->head; i < wc->n; i++)
		wc->ents[i].at -= shift;
	wc->tail -= shift;
}

/* ---- open and close ---- */

static int load_one(void *ctx, const struct sfs_undo_rec *r)
{
	struct sfs_wc *wc = ctx;
	struct wc_ent e = { .seq = r->seq, .off = r->off, .len = r->len, .at = r->at, .kind = r->kind };

	wc->next_seq = r->seq + 1;
	return push(wc, &e);
}

/* Read an existing log into the index. */
static int load(struct sfs_wc *wc)
{
	long n = sfs_undo_scan(wc->fd, &wc->hdr, load_one, wc, &wc->tail);

	if (n < 0)
		return (int)n;
	wc->loaded = (uint64_t)n;
	wc->lg = wc->hdr.g;
	return 0;
}

int sfs_wc_open(const struct sfs_wc_config *c, const struct sfs_wc_backing *b, int dirfd, const char *fname,
		struct sfs_wc **out, char *err, size_t errlen)
{
	struct sfs_wc *wc = calloc(1, sizeof(*wc));
	int rc;

	assert(pow2(c->lss) && pow2(c->pss) && c->pss >= c->lss && pow2(c->awu) && c->awu >= c->lss);
	if (!wc)
		return sfs_err(err, errlen, -ENOMEM, "%s: out of memory", fname);
	wc->cfg = *c;
	wc->lg = cfg_geom(c);
	wc->b = *b;
	wc->dirfd = dirfd;
	wc->tail = SFS_UNDO_HDR_LEN;
	snprintf(wc->fname, sizeof(wc->fname), "%s", fname);
	pthread_mutex_init(&wc->lk, NULL);
	wc->fd = sfs_undo_open(dirfd, fname, true);
	rc = wc->fd < 0 ? wc->fd : sfs_undo_read_hdr(wc->fd, &wc->hdr);
	if (rc == 0)
		rc = load(wc);
	if (rc == -ENODATA || (rc == 0 && wc->loaded == 0)) {   /* new, or nothing in it */
		wc->head = wc->n = 0;
		wc->hdr.g = wc->lg = cfg_geom(c);
		wc->tail = SFS_UNDO_HDR_LEN;
		wc->next_seq = 0;
		rc = sfs_undo_reset(wc->fd, &wc->hdr, 0, false);
	}
	if (rc < 0) {
		if (rc == -EPERM)
			sfs_err(err, errlen, rc, "%s: not a regular file of one link", fname);
		else if (rc == -EUCLEAN)
			sfs_err(err, errlen, rc, "%s: not an undo log (its header is damaged)", fname);
		else
			sfs_err(err, errlen, rc, "%s: %s", fname, strerror(-rc));
		sfs_wc_close(wc);
		return rc;
	}
	*out = wc;
	return 0;
}

void sfs_wc_set_name(struct sfs_wc *wc, const char *fname)
{
	pthread_mutex_lock(&wc->lk);
	snprintf(wc->fname, sizeof(wc->fname), "%s", fname);
	pthread_mutex_unlock(&wc->lk);
}

void sfs_wc_close(struct sfs_wc *wc)
{
	if (!wc)
		return;
	if (wc->fd >= 0)
		close(wc->fd);
	pthread_mutex_destroy(&wc->lk);
	free(wc->ents);
	free(wc->buf);
	free(wc);
}

/* ---- writes and flushes ---- */

/* Save the old contents of the write's range (WRITE) and log the entry. */
static int log_write(struct sfs_wc *wc, struct wc_ent *e)
{
	struct sfs_undo_rec r;
	int rc = 0;

	e->at = wc->tail;
	r = sfs_wc_rec(e);
	if (e->kind == SFS_UNDO_WRITE) {
		rc = sfs_wc_buf(wc, e->len);
		if (rc == 0)
			rc = wc->b.read(wc->b.arg, wc->buf, e->len, e->off);
	}
	if (rc == 0)
		rc = sfs_undo_append(wc->fd, wc->hdr.gen, &r, wc->buf);
	if (rc == 0)
		rc = push(wc, e);
	if (rc == 0)
		wc->tail += sfs_undo_rec_size(&r);
	return rc;
}

int sfs_wc_write(struct sfs_wc *wc, uint64_t off, uint64_t len, unsigned flags)
{
	struct wc_ent e = { .off = off, .len = len, .kind = SFS_UNDO_WRITE };
	bool popped = false;
	int rc = 0;

	assert(len > 0 && off % wc->cfg.lss == 0 && len % wc->cfg.lss == 0);
	pthread_mutex_lock(&wc->lk);
	assert(wc->loaded == 0);
	e.seq = wc->next_seq++;
	if ((flags & (SFS_WC_FUA | SFS_WC_ZERO)) || len > wc->cfg.size)
		e.kind = SFS_UNDO_KEPT;
	if (e.kind == SFS_UNDO_KEPT && wc->head == wc->n)
		goto out;                 /* durable, and nothing older for it to settle */
	while (e.kind == SFS_UNDO_WRITE && wc->head < wc->n && wc->cached + len > wc->cfg.size) {
		pop(wc, true);            /* destage the oldest */
		popped = true;
	}
	if (popped)
		rc = settle_head(wc);
	if (rc == 0)
		maybe_compact(wc);
	if (rc == 0)
		rc = log_write(wc, &e);
out:
	pthread_mutex_unlock(&wc->lk);
	return rc;
}

uint64_t sfs_wc_flush_mark(struct sfs_wc *wc)
{
	uint64_t m;

	pthread_mutex_lock(&wc->lk);
	m = wc->next_seq;
	pthread_mutex_unlock(&wc->lk);
	return m;
}

int sfs_wc_flushed(struct sfs_wc *wc, uint64_t mark)
{
	bool popped = false;
	int rc = 0;

	pthread_mutex_lock(&wc->lk);
	while (wc->head < wc->n && wc->ents[wc->head].seq < mark) {
		pop(wc, false);
		popped = true;
	}
	if (popped)
		rc = settle_head(wc);
	pthread_mutex_unlock(&wc->lk);
	return rc;
}

void sfs_wc_state(struct sfs_wc *wc, struct sfs_wc_state *st)
{
	pthread_mutex_lock(&wc->lk);
	*st = (struct sfs_wc_state){ .entries = wc->n - wc->head, .writes = wc->writes, .cached_bytes = wc->cached,
				     .destaged_bytes = wc->destaged, .next_seq = wc->next_seq, .loaded = wc->loaded };
	pthread_mutex_unlock(&wc->lk);
}

struct sfs_undo_geom sfs_wc_geom(struct sfs_wc *wc)
{
	struct sfs_undo_geom g;

	pthread_mutex_lock(&wc->lk);
	g = wc->lg;
	pthread_mutex_unlock(&wc->lk);
	return g;
}

int sfs_wc_sync_log(struct sfs_wc *wc)
{
	int rc;

	pthread_mutex_lock(&wc->lk);
	rc = fsync(wc->fd) < 0 ? -errno : 0;
	pthread_mutex_unlock(&wc->lk);
	return rc;
}

int sfs_wc_drop(struct sfs_wc *wc, bool durable)
{
	int rc;

	pthread_mutex_lock(&wc->lk);
	wc->head = wc->n = 0;
	wc->cached = wc->writes = wc->loaded = wc->next_seq = 0;
	wc->lg = wc->hdr.g = cfg_geom(&wc->cfg);
	wc->tail = SFS_UNDO_HDR_LEN;
	rc = sfs_undo_reset(wc->fd, &wc->hdr, 0, durable);
	pthread_mutex_unlock(&wc->lk);
	return rc;
}

int sfs_wc_keep(struct sfs_wc *wc)
{
	int rc = wc->b.sync(wc->b.arg);

	return rc < 0 ? rc : sfs_wc_drop(wc, false);
}
