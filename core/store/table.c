/* SPDX-License-Identifier: MIT */
/*
 * table.c - the store's table of images (internal.h): a sorted array of
 * entries, under the store's mutex (store.c says who takes it), with its
 * lookup, insertion and removal, the orphans an unlinked image still held
 * open goes to, and what tells one version of a sidecar from another.
 * store.c and scan.c both use it; it uses neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

unsigned store_image_flags(const struct sfs_store *s)
{
	return (s->opts.stats ? SFS_IMAGE_STATS : 0) | (s->opts.buffered ? SFS_IMAGE_BUFFERED : 0) |
	       (s->opts.zero_background ? SFS_IMAGE_ZERO_BG : 0);
}

struct entry *store_find(struct sfs_store *s, const char *name, size_t *pos)
{
	size_t lo = 0, hi = s->nents;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->ents[mid].name, name);

		if (c == 0) {
			if (pos)
				*pos = mid;
			return &s->ents[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return NULL;
}

int store_grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Put e into the table at its sorted place. */
int store_put_in(struct sfs_store *s, const struct entry *e)
{
	size_t pos;

	if (store_find(s, e->name, &pos))
		return -EEXIST;
	if (store_grow_array((void **)&s->ents, &s->capents, s->nents + 1, sizeof(*s->ents)) < 0)
		return -ENOMEM;
	memmove(&s->ents[pos + 1], &s->ents[pos], (s->nents - pos) * sizeof(*s->ents));
	s->ents[pos] = *e;
	s->nents++;
	return 0;
}

int store_insert(struct sfs_store *s, const char *name, struct sfs_image *im, int refs,
		 const struct sfs_sidecar *declared, const struct file_id *scid)
{
	struct entry e = { .im = im, .refs = refs, .declared = *declared, .scid = *scid };

	snprintf(e.name, sizeof(e.name), "%s", name);
	return store_put_in(s, &e);
}

struct file_id store_file_id_of(const struct stat *st)
{
	struct file_id id = { st->st_dev, st->st_ino, st->st_size, st->st_mtim };

	return id;
}

bool store_same_file_id(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Identify the current version of name's sidecar; 0 or -errno. */
int store_sidecar_id(struct sfs_store *s, const char *name, struct file_id *id)
{
	char scname[SFS_NAME_MAX + 8];
	struct stat st;

	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*id = store_file_id_of(&st);
	return 0;
}

/* Describe how sidecar b differs from a ("size 1048576 -> 2097152, ..."); false when equal. */
bool store_sidecar_diff(const struct sfs_sidecar *a, const struct sfs_sidecar *b, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
#define DIFF(cond, ...) \
	do { \
		if ((cond) && n < len) \
			n += (size_t)snprintf(buf + n, len - n, "%s", n ? ", " : ""); \
		if ((cond) && n < len) \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
	} while (0)
	DIFF(a->size != b->size, "size %llu -> %llu", (unsigned long long)a->size, (unsigned long long)b->size);
	DIFF(a->lss != b->lss || a->pss != b->pss, "sector %u/%u -> %u/%u", a->lss, a->pss, b->lss, b->pss);
	DIFF(a->prov != b->prov, "provisioning %s -> %s", sfs_prov_name(a->prov), sfs_prov_name(b->prov));
	DIFF(a->block_size != b->block_size, "block_size %llu -> %llu", (unsigned long long)a->block_size,
	     (unsigned long long)b->block_size);
	DIFF(a->zero_offload != b->zero_offload, "zero_offload %s -> %s", a->zero_offload ? "true" : "false",
	     b->zero_offload ? "true" : "false");
	DIFF(strcmp(a->profile, b->profile), "profile '%s' -> '%s'", a->profile, b->profile);
#undef DIFF
	return n > 0;
}

/* Take e out of the table and return it. */
struct entry store_take_out(struct sfs_store *s, struct entry *e)
{
	size_t pos = (size_t)(e - s->ents);
	struct entry old = *e;

	memmove(&s->ents[pos], &s->ents[pos + 1], (s->nents - pos - 1) * sizeof(*s->ents));
	s->nents--;
	return old;
}

/* Take e out of the table; an image still held open moves to the orphans. */
void store_remove_entry(struct sfs_store *s, struct entry *e)
{
	struct entry old = store_take_out(s, e);

	/* no use zeroing a backing file that is gone; its holders read zeros there anyway */
	if (sfs_image_backing_gone(old.im))
		sfs_image_zero_cancel(old.im);
	if (--old.refs == 0) {
		sfs_image_close(old.im);
		return;
	}
	if (store_grow_array((void **)&s->orphans, &s->caporphans, s->norphans + 1, sizeof(old)) == 0)
		s->orphans[s->norphans++] = old;
	/* else: leaked until exit rather than freed under its users */
}
