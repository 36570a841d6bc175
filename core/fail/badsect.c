/* SPDX-License-Identifier: MIT */
/*
 * badsect.c - the unreadable sectors of a disk (badsect.h): the commands
 * of user.sectorfs.bad_sectors, the listing, the read check and healing
 * by writes.
 *
 * A command is applied to a copy of the list, which replaces the list
 * only when every command of the value was good: a value is all or none.
 */
#include "badsect.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

void sfs_bad_init(struct sfs_badsect *b, uint32_t lss, uint32_t pss, uint64_t nsect)
{
	assert(lss && !(lss & (lss - 1)) && pss >= lss && !(pss & (pss - 1)));
	sfs_ext_init(&b->ext);
	b->lss = lss;
	b->pss = pss;
	b->nsect = nsect;
}

void sfs_bad_free(struct sfs_badsect *b)
{
	sfs_ext_free(&b->ext);
}

void sfs_bad_resize(struct sfs_badsect *b, uint64_t nsect)
{
	b->nsect = nsect;
}

const char *sfs_bad_kind_name(unsigned kind)
{
	return kind == SFS_BAD_STICKY ? "sticky" : kind == SFS_BAD_DAMAGED ? "damaged" : "bad";
}

/* Logical sectors per physical sector. */
static uint64_t per_phys(const struct sfs_badsect *b)
{
	return b->pss / b->lss;
}

/* ---- the commands ---- */

/* A decimal LBA at *p: 0, or -EINVAL (none there, or too large). */
static int parse_lba(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; s < end && isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

#define SYNTAX "expected +START[-END][:sticky|:damaged], -START[-END] or clear"

/* One command, cmd[0..n), onto b. */
static int apply_one(struct sfs_badsect *b, const char *cmd, size_t n, char *err, size_t errlen)
{
	const char *p = cmd + 1, *end = cmd + n;
	uint64_t s, e;
	unsigned kind = SFS_BAD_PLAIN;
	int w = n > 40 ? 40 : (int)n;   /* the command, as quoted in messages */

	if (n == 5 && !memcmp(cmd, "clear", 5)) {
		sfs_ext_free(&b->ext);
		return 0;
	}
	if ((cmd[0] != '+' && cmd[0] != '-') || parse_lba(&p, end, &s) < 0)
		return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': %s", w, cmd, SYNTAX);
	e = s;
	if (p < end && *p == '-') {
		p++;
		if (parse_lba(&p, end, &e) < 0)
			return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': END is not a number", w, cmd);
	}
	if (p < end && *p == ':' && cmd[0] == '+') {
		size_t k = (size_t)(end - p - 1);

		if (k == 6 && !memcmp(p + 1, "sticky", 6))
			kind = SFS_BAD_STICKY;
		else if (k == 7 && !memcmp(p + 1, "damaged", 7))
			kind = SFS_BAD_DAMAGED;
		else
			return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': unknown kind '%.*s' (sticky or damaged)",
				       w, cmd, (int)(k > 20 ? 20 : k), p + 1);
		p = end;
	}
	if (p != end)
		return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': %s", w, cmd, SYNTAX);
	if (e < s)
		return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': END %" PRIu64 " is before START %" PRIu64,
			       w, cmd, e, s);
	if (b->nsect == 0)
		return sfs_err(err, errlen, -EINVAL, "bad_sectors: '%.*s': the disk has no sectors", w, cmd);
	if (e >= b->nsect)
		return sfs_err(err, errlen, -EINVAL,
			       "bad_sectors: '%.*s': sector %" PRIu64 " is past the end of the disk (last: %" PRIu64 ")",
			       w, cmd, e, b->nsect ? b->nsect - 1 : 0);
	if (cmd[0] == '-')
		return sfs_ext_set(&b->ext, s, e + 1, 0);
	if (kind == SFS_BAD_DAMAGED) {         /* whole physical sectors, as far as the disk goes */
		s -= s % per_phys(b);
		e = e - e % per_phys(b) + per_phys(b) - 1;
		if (e >= b->nsect)
			e = b->nsect - 1;
	}
	return sfs_ext_set(&b->ext, s, e + 1, kind);
}

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

int sfs_bad_apply_one(struct sfs_badsect *b, const char *cmd, size_t len, char *err, size_t errlen)
{
	int rc;

	if (len == 0 || memchr(cmd, '\0', len))
		return sfs_err(err, errlen, -EINVAL, "bad_sectors: an empty command or a NUL byte");
	rc = apply_one(b, cmd, len, err, errlen);
	if (rc == 0 && b->ext.n > SFS_BAD_MAX_RANGES)
		rc = sfs_err(err, errlen, -E2BIG, "bad_sectors: more than %d ranges", SFS_BAD_MAX_RANGES);
	if (rc == -ENOMEM)
		sfs_err(err, errlen, rc, "bad_sectors: out of memory");
	return rc;
}

int sfs_bad_apply(struct sfs_badsect *b, const char *value, size_t len, bool *changed, char *err, size_t errlen)
{
	struct sfs_badsect t = *b;
	size_t i = 0;
	int rc;

	sfs_ext_init(&t.ext);
	rc = sfs_ext_copy(&t.ext, &b->ext);
	while (rc == 0 && i < len) {
		size_t j;

		if (is_sep(value[i])) {
			i++;
			continue;
		}
		if (value[i] == '\0')
			rc = sfs_err(err, errlen, -EINVAL, "bad_sectors: a NUL byte in the value");
		for (j = i; rc == 0 && j < len && !is_sep(value[j]) && value[j]; j++)
			;
		if (rc == 0)
			rc = apply_one(&t, value + i, j - i, err, errlen);
		if (rc == 0 && t.ext.n > SFS_BAD_MAX_RANGES)
			rc = sfs_err(err, errlen, -E2BIG, "bad_sectors: more than %d ranges", SFS_BAD_MAX_RANGES);
		if (rc == -ENOMEM)
			sfs_err(err, errlen, rc, "bad_sectors: out of memory");
		i = j;
	}
	if (rc < 0) {
		sfs_ext_free(&t.ext);
		return rc;
	}
	if (changed)
		*changed = !sfs_ext_equal(&t.ext, &b->ext);
	sfs_ext_free(&b->ext);
	b->ext = t.ext;
	return 0;
}

int sfs_bad_format(const struct sfs_badsect *b, char **out, size_t *outlen)
{
	size_t cap = b->ext.n * 52 + 1, n = 0;   /* 2 x 20 digits, '-', ":damaged", '\n' */
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	s[0] = '\0';
	for (size_t i = 0; i < b->ext.n; i++) {
		const struct sfs_ext *x = &b->ext.v[i];

		n += (size_t)snprintf(s + n, cap - n, "%" PRIu64 "-%" PRIu64 "%s%s\n", x->start, x->end - 1,
				      x->tag == SFS_BAD_PLAIN ? "" : ":",
				      x->tag == SFS_BAD_PLAIN ? "" : sfs_bad_kind_name(x->tag));
	}
	*out = s;
	*outlen = n;
	return 0;
}

/* ---- I/O ---- */

int sfs_bad_check_read(const struct sfs_badsect *b, uint64_t off, uint64_t len, uint64_t *lba, unsigned *kind)
{
	uint64_t s = off / b->lss, e = (off + len + b->lss - 1) / b->lss, first;

	if (len == 0 || b->ext.n == 0 || !sfs_ext_any(&b->ext, s, e, SFS_BAD_ANY, &first))
		return 0;
	if (lba)
		*lba = first;
	if (kind)
		*kind = b->ext.v[sfs_ext_find(&b->ext, first)].tag;
	return -EIO;
}

int sfs_bad_heal(struct sfs_badsect *b, uint64_t off, uint64_t len, bool *changed)
{
	uint64_t s = off / b->lss, e = (off + len) / b->lss, pp = per_phys(b);
	uint64_t ps = (s + pp - 1) / pp * pp, pe = e / pp * pp;   /* the physical sectors covered whole */
	size_t n0 = b->ext.n;
	uint64_t c0 = n0 ? sfs_ext_count(&b->ext, SFS_BAD_PLAIN | SFS_BAD_DAMAGED) : 0;
	int rc;

	if (changed)
		*changed = false;
	if (n0 == 0 || !sfs_ext_any(&b->ext, s, e, SFS_BAD_PLAIN | SFS_BAD_DAMAGED, NULL))
		return 0;
	rc = sfs_ext_clear_tag(&b->ext, s, e, SFS_BAD_PLAIN);
	if (rc == 0 && ps < pe)
		rc = sfs_ext_clear_tag(&b->ext, ps, pe, SFS_BAD_DAMAGED);
	if (changed)
		*changed = b->ext.n != n0 || sfs_ext_count(&b->ext, SFS_BAD_PLAIN | SFS_BAD_DAMAGED) != c0;
	return rc;
}

int sfs_bad_damage(struct sfs_badsect *b, uint64_t off, uint64_t len)
{
	uint64_t s = off / b->pss * b->pss, e = (off + len + b->pss - 1) / b->pss * b->pss;

	if (len == 0 || s / b->lss >= b->nsect)
		return 0;
	if (e / b->lss > b->nsect)             /* a disk that ends inside a physical sector */
		e = b->nsect * b->lss;
	return sfs_ext_set(&b->ext, s / b->lss, e / b->lss, SFS_BAD_DAMAGED);
}

uint64_t sfs_bad_count(const struct sfs_badsect *b, unsigned kinds)
{
	return sfs_ext_count(&b->ext, kinds);
}

int sfs_bad_copy(struct sfs_badsect *dst, const struct sfs_badsect *src)
{
	struct sfs_extents t;
	int rc;

	sfs_ext_init(&t);
	rc = sfs_ext_copy(&t, &src->ext);
	if (rc < 0)
		return rc;
	sfs_ext_free(&dst->ext);
	*dst = *src;
	dst->ext = t;
	return 0;
}
