/* SPDX-License-Identifier: MIT */
/*
 * extents.c - sorted, merged, tagged ranges in one array (extents.h).
 *
 * sfs_ext_set(s, e, t) in three moves:
 *
 *   before   [a.......)[b.............)      [c....)
 *   cut             s|                 |e
 *   split    [a..)  [a'.)[b.......)[b')      [c....)   the extents that straddle s or e
 *   replace  [a..)  [t.................)[b') [c....)   those inside [s, e) give way to t
 *   merge    neighbours of equal tag that touch become one
 */
#include "extents.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sfs_ext_init(struct sfs_extents *e)
{
	e->v = NULL;
	e->n = e->cap = 0;
}

void sfs_ext_free(struct sfs_extents *e)
{
	free(e->v);
	sfs_ext_init(e);
}

/* Room for `more` extents beyond n. */
static int reserve(struct sfs_extents *e, size_t more)
{
	size_t cap = e->cap ? e->cap : 8;
	struct sfs_ext *v;

	if (e->n + more <= e->cap)
		return 0;
	while (cap < e->n + more)
		cap *= 2;
	v = realloc(e->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->v = v;
	e->cap = cap;
	return 0;
}

size_t sfs_ext_find(const struct sfs_extents *e, uint64_t pos)
{
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->v[mid].end <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Merge v[i] with v[i + 1] when they touch and share a tag. */
static void merge_at(struct sfs_extents *e, size_t i)
{
	if (i + 1 >= e->n || e->v[i].end != e->v[i + 1].start || e->v[i].tag != e->v[i + 1].tag)
		return;
	e->v[i].end = e->v[i + 1].end;
	memmove(&e->v[i + 1], &e->v[i + 2], (e->n - i - 2) * sizeof(e->v[0]));
	e->n--;
}

int sfs_ext_set(struct sfs_extents *e, uint64_t start, uint64_t end, unsigned tag)
{
	size_t i, j;

	if (start >= end)
		return 0;
	if (reserve(e, 2) < 0)   /* at most one split and one new extent */
		return -ENOMEM;
	i = sfs_ext_find(e, start);
	/* an extent that starts before start and reaches into the range: keep its head */
	if (i < e->n && e->v[i].start < start) {
		if (e->v[i].end > end) {                 /* it holds the whole range: split in two */
			memmove(&e->v[i + 2], &e->v[i + 1], (e->n - i - 1) * sizeof(e->v[0]));
			e->v[i + 1] = (struct sfs_ext){ end, e->v[i].end, e->v[i].tag };
			e->n++;
		}
		e->v[i].end = start;
		i++;
	}
	/* the extents inside the range go, one that reaches past end keeps its tail */
	for (j = i; j < e->n && e->v[j].end <= end; j++)
		;
	if (j < e->n && e->v[j].start < end)
		e->v[j].start = end;
	if (tag) {
		if (j == i) {
			memmove(&e->v[i + 1], &e->v[i], (e->n - i) * sizeof(e->v[0]));
			e->n++;
		} else if (j > i + 1) {
			memmove(&e->v[i + 1], &e->v[j], (e->n - j) * sizeof(e->v[0]));
			e->n -= j - i - 1;
		}
		e->v[i] = (struct sfs_ext){ start, end, tag };
		merge_at(e, i);
		if (i > 0)
			merge_at(e, i - 1);
	} else if (j > i) {
		memmove(&e->v[i], &e->v[j], (e->n - j) * sizeof(e->v[0]));
		e->n -= j - i;
	}
	return 0;
}

bool sfs_ext_any(const struct sfs_extents *e, uint64_t start, uint64_t end, unsigned mask, uint64_t *first)
{
	for (size_t i = sfs_ext_find(e, start); i < e->n && e->v[i].start < end; i++)
		if (e->v[i].tag & mask) {
			if (first)
				*first = e->v[i].start > start ? e->v[i].start : start;
			return true;
		}
	return false;
}

uint64_t sfs_ext_count(const struct sfs_extents *e, unsigned mask)
{
	uint64_t n = 0;

	for (size_t i = 0; i < e->n; i++)
		if (e->v[i].tag & mask)
			n += e->v[i].end - e->v[i].start;
	return n;
}

int sfs_ext_clear_tag(struct sfs_extents *e, uint64_t start, uint64_t end, unsigned mask)
{
	size_t i = sfs_ext_find(e, start);

	while (i < e->n && e->v[i].start < end) {
		struct sfs_ext x = e->v[i];
		uint64_t s = x.start > start ? x.start : start, t = x.end < end ? x.end : end;
		int rc;

		if (!(x.tag & mask)) {
			i++;
			continue;
		}
		rc = sfs_ext_set(e, s, t, 0);
		if (rc < 0)
			return rc;
		i = sfs_ext_find(e, t);
	}
	return 0;
}

bool sfs_ext_equal(const struct sfs_extents *a, const struct sfs_extents *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)   /* field by field: the struct has padding */
		if (a->v[i].start != b->v[i].start || a->v[i].end != b->v[i].end || a->v[i].tag != b->v[i].tag)
			return false;
	return true;
}

int sfs_ext_copy(struct sfs_extents *dst, const struct sfs_extents *src)
{
	assert(dst != src);
	dst->n = 0;
	if (reserve(dst, src->n) < 0) {
		sfs_ext_free(dst);
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(src->v[0]));
	dst->n = src->n;
	return 0;
}
