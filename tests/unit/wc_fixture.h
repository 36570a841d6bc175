/* SPDX-License-Identifier: MIT */
/*
 * wc_fixture.h - a disk in memory under the write cache (wcache.h's
 * struct sfs_wc_backing), for test_wcache.c, test_wcut.c and test_fail.c.
 *
 * The disk counts its transfers and syncs and can be told to fail its
 * reads, or its writes after a number of them (what a crash in the middle
 * of a rollback leaves).  Writes fill sectors with one byte each, so that
 * a sector's content says which write put it there: wr(d, off, len, v).
 * The data is shared with forked children (test_fail.c's crashes).
 * A reference model beside it, struct oracle, gives each logical sector
 * the value the result rule of wcache.h says, sector by sector and write
 * by write, independently of wcut.c's walk over ranges.
 */
#ifndef SFS_TEST_WC_FIXTURE_H
#define SFS_TEST_WC_FIXTURE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>

#include "util/prng.h"
#include "fail/wcache.h"

struct memdisk {
	unsigned char *data;
	uint64_t size;
	unsigned reads, writes, syncs;
	int fail_read;             /* reads fail with -EIO */
	long writes_left;          /* > 0: writes fail with -EIO once this many more were made */
};

static inline int md_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct memdisk *d = arg;

	cr_assert_leq(off + len, d->size, "read past the end: %llu+%zu", (unsigned long long)off, len);
	if (d->fail_read)
		return -EIO;
	memcpy(buf, d->data + off, len);
	d->reads++;
	return 0;
}

static inline int md_write(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct memdisk *d = arg;

	cr_assert_leq(off + len, d->size, "write past the end: %llu+%zu", (unsigned long long)off, len);
	if (d->writes_left > 0 && --d->writes_left == 0)
		return -EIO;
	memcpy(d->data + off, buf, len);
	d->writes++;
	return 0;
}

static inline int md_sync(void *arg)
{
	((struct memdisk *)arg)->syncs++;
	return 0;
}

/* The data is a shared mapping: what a forked child writes, its parent sees, as a page cache
 * outlives a killed process. */
static inline void md_init(struct memdisk *d, uint64_t size)
{
	memset(d, 0, sizeof(*d));
	d->data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(d->data, MAP_FAILED);
	d->size = size;
}

static inline void md_free(struct memdisk *d)
{
	if (d->data)
		munmap(d->data, d->size);
	d->data = NULL;
}

static inline struct sfs_wc_backing md_backing(struct memdisk *d)
{
	return (struct sfs_wc_backing){ .read = md_read, .write = md_write, .sync = md_sync, .arg = d };
}

/* The disk's byte at off. */
static inline int md_at(const struct memdisk *d, uint64_t off)
{
	return d->data[off];
}

/* Is every byte of [off, off+len) v?  The first that is not, else -1. */
static inline long long md_differs(const struct memdisk *d, uint64_t off, uint64_t len, int v)
{
	for (uint64_t i = 0; i < len; i++)
		if (d->data[off + i] != v)
			return (long long)(off + i);
	return -1;
}

/* ---- the reference model of the result rule ---- */

#define ORACLE_MAX 256

struct oracle_w {
	uint64_t seq, off, len;
	int v;
	int kept_always;           /* FUA, discard: durable at completion */
};

struct oracle {
	struct sfs_undo_geom g;
	unsigned char *durable;    /* each logical sector's value before the unflushed writes */
	uint64_t nsect;
	struct oracle_w w[ORACLE_MAX];
	int n;
	uint64_t seq;
	uint64_t cache, cached;    /* write_cache_size; bytes of the writes that may be lost */
};

static inline void oracle_init(struct oracle *o, struct sfs_undo_geom g, uint64_t size, uint64_t cache)
{
	memset(o, 0, sizeof(*o));
	o->g = g;
	o->cache = cache;
	o->nsect = size / g.lss;
	o->durable = calloc(1, o->nsect);
	cr_assert_not_null(o->durable);
}

static inline void oracle_free(struct oracle *o)
{
	free(o->durable);
}

/* The oldest write becomes durable (destaged, or flushed). */
static inline void oracle_pop(struct oracle *o)
{
	const struct oracle_w *w = &o->w[0];

	for (uint64_t s = w->off / o->g.lss; s < (w->off + w->len) / o->g.lss; s++)
		o->durable[s] = (unsigned char)w->v;
	if (!w->kept_always)
		o->cached -= w->len;
	memmove(&o->w[0], &o->w[1], (size_t)(o->n - 1) * sizeof(o->w[0]));
	o->n--;
}

/* A write (or a durable one) of value v, as the cache numbers it; the oldest destaged first
 * when the cache is full, as wcache.h says. */
static inline void oracle_write(struct oracle *o, uint64_t off, uint64_t len, int v, int kept_always)
{
	if (!kept_always) {
		while (o->n && o->cached + len > o->cache)
			oracle_pop(o);
		while (o->n && o->w[0].kept_always)
			oracle_pop(o);
		o->cached += len;
	}
	cr_assert_lt(o->n, ORACLE_MAX);
	o->w[o->n++] = (struct oracle_w){ o->seq++, off, len, v, kept_always };
}

/* Everything so far is durable (a flush). */
static inline void oracle_flush(struct oracle *o)
{
	while (o->n)
		oracle_pop(o);
}

/* Is the unit of write w holding byte pos kept?  Units numbered as wcache.h says. */
static inline int oracle_kept(const struct oracle *o, const struct oracle_w *w, const struct sfs_wc_cut *c,
			      uint64_t pos)
{
	uint64_t k;
	int whole = w->len <= o->g.awu &&
		    (!o->g.awb || w->off / o->g.awb == (w->off + w->len - 1) / o->g.awb);

	if (w->kept_always || c->policy == SFS_WC_KEEP_ALL)
		return 1;
	if (c->policy == SFS_WC_LOSE_ALL)
		return 0;
	k = whole ? 0 : pos / o->g.awu - w->off / o->g.awu;
	return sfs_draw_unit(sfs_draw(c->seed, w->seq, k)) < c->p;
}

/* The value of logical sector s after cut c: the newest kept write's, else the durable one. */
static inline int oracle_sector(const struct oracle *o, const struct sfs_wc_cut *c, uint64_t s)
{
	uint64_t pos = s * o->g.lss;

	for (int i = o->n - 1; i >= 0; i--) {
		const struct oracle_w *w = &o->w[i];

		if (pos >= w->off && pos < w->off + w->len && oracle_kept(o, w, c, pos))
			return w->v;
	}
	return o->durable[s];
}

#endif
