/* SPDX-License-Identifier: MIT */
/*
 * sidecar.c - read and check the JSON sidecar NAME.json (see sidecar.h);
 * sidecar_write.c writes it.
 *
 * Parsing runs in two steps.  First each key of the object is read by its
 * handler in keys[] (type, syntax, names), in file order, so the first bad
 * key is the one reported.  Then sfs_geom_validate() (geometry.c) applies the rules that
 * relate values (powers of two, ranges, physical >= logical, size multiple
 * of the sector, block_size against the physical sector); it is the same
 * function sfs_sidecar_validate() uses, so each rule is written once.
 *
 * Every message is "FNAME: key 'KEY': REASON", or "FNAME: REASON" for a
 * problem with the file as a whole (unreadable, not JSON, not an object).
 *
 * Return codes: -EINVAL for any rule broken but one, -EFBIG for a size past
 * the largest disk (geometry.h); -ERANGE when a number cannot
 * even be represented (a size string above 2^63-1, a JSON integer beyond
 * 64 bits); load adds the errno of open/read, -ELOOP for a symbolic link,
 * -EINVAL for a file that is not regular and -EFBIG for one above 64 KiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "util/log.h"
#include "sidecar.h"
#include "util/tmpfile.h"
#include "util/units.h"

void sfs_sidecar_defaults(struct sfs_sidecar *sc)
{
	*sc = (struct sfs_sidecar){
		.size = 0,
		.lss = 512,
		.pss = 512,
		.prov = SFS_PROV_THIN,
		.block_size = SFS_BLOCK_DEFAULT,
		.zero_offload = true,
	};
}

int sfs_sidecar_set(struct sfs_sidecar *sc, const char *key, const char *value)
{
	struct sfs_sidecar_draft d;
	int rc;

	if (strcmp(key, "sector") && strcmp(key, "provisioning") && strcmp(key, "block_size"))
		return -ENOENT;
	sfs_sidecar_draft_init(&d, sc);
	rc = sfs_sidecar_draft_set(&d, key, value, NULL, 0);
	if (rc == 0)
		rc = sfs_sidecar_draft_done(&d, false, "", sc, NULL, 0);
	return rc < 0 ? -EINVAL : 0;
}

/* "FNAME: strerror(e)" into err; returns -e. */
static int sys_err(char *err, size_t errlen, const char *fname, int e)
{
	char buf[128];

	return sfs_err(err, errlen, -e, "%s: %s", fname, strerror_r(e, buf, sizeof(buf)));
}

void sfs_sidecar_fail_config(const struct sfs_sidecar *sc, struct sfs_wc_config *c, struct sfs_wc_cut *cut)
{
	const struct sfs_sidecar_fail *f = &sc->fail;

	sfs_wc_config_default(c, sc->lss, sc->pss);
	*cut = (struct sfs_wc_cut){ .policy = SFS_WC_LOSE_ALL, .p = 0.5 };
	if (f->have & SFS_HAVE_WRITE_CACHE)
		c->mode = f->mode;
	if (f->have & SFS_HAVE_WRITE_CACHE_SIZE)
		c->size = f->cache_size;
	if (f->have & SFS_HAVE_AWU)
		c->awu = f->awu;
	if (f->have & SFS_HAVE_AWB)
		c->awb = f->awb;
	if (f->have & SFS_HAVE_RMW_POWER_SAFE)
		c->rmw_power_safe = f->rmw_power_safe;
	if (f->have & SFS_HAVE_POWER_CUT_POLICY)
		*cut = (struct sfs_wc_cut){ .policy = f->cut.policy, .p = f->cut.p };
}

/* The rules between the failure keys and the sector format (failkeys.h). */
static int check_fail_keys(const struct sfs_sidecar *sc, const char *fname, char *err, size_t errlen)
{
	struct sfs_wc_config c;
	struct sfs_wc_cut cut;

	if (!(sc->fail.have & SFS_HAVE_FAIL_KEYS))
		return 0;
	sfs_sidecar_fail_config(sc, &c, &cut);
	return sfs_wc_config_check(&c, fname, err, errlen);
}

int sfs_sidecar_validate(const struct sfs_sidecar *sc, const char *fname,
			 char *err, size_t errlen)
{
	int rc;

	if (!sfs_prov_name(sc->prov))
		return sfs_key_err(err, errlen, fname, "provisioning", -EINVAL,
			       "%d is not a provisioning mode", (int)sc->prov);
	rc = sfs_geom_validate(sc->size, sc->lss, sc->pss, sc->block_size, fname, err, errlen);
	return rc ? rc : check_fail_keys(sc, fname, err, errlen);
}

/* What the key handlers fill: a draft, from a JSON object (text NULL) or from options (text
 * the value of the key being set; messages then say "KEY=VALUE: REASON"). */
struct parse {
	const char *fname;
	char *err;
	size_t errlen;
	const char *text;
	struct sfs_sidecar_draft *d;
};

__attribute__((format(printf, 4, 5)))
static int bad(const struct parse *p, const char *key, int rc, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (p->text)
		return sfs_err(p->err, p->errlen, rc, "%s=%s: %s", key, p->text, reason);
	return sfs_key_err(p->err, p->errlen, p->fname, key, rc, "%s", reason);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "an unknown type";
}

static int wrong_type(const struct parse *p, const char *key, const json_t *v, const char *want)
{
	return bad(p, key, -EINVAL, "expected %s, got %s", want, type_name(v));
}

/* A JSON integer >= 0. */
static int get_uint(const struct parse *p, const char *key, const json_t *v, uint64_t *out)
{
	json_int_t i;

	if (!json_is_integer(v))
		return wrong_type(p, key, v, "an integer");
	i = json_integer_value(v);
	if (i < 0)
		return bad(p, key, -EINVAL, "%" JSON_INTEGER_FORMAT " is negative", i);
	*out = (uint64_t)i;
	return 0;
}

/* A JSON integer >= 0 or a size string ("8G"); an option's text is a size string. */
static int get_size(const struct parse *p, const char *key, const json_t *v, uint64_t *out)
{
	const char *s = p->text;
	int rc;

	if (!s && json_is_integer(v))
		return get_uint(p, key, v, out);
	if (!s && !json_is_string(v))
		return wrong_type(p, key, v, "an integer or a size string");
	if (!s)
		s = json_string_value(v);
	rc = sfs_parse_size(s, out);
	if (rc == -ERANGE)
		return bad(p, key, rc, "'%s' is too large (more than 2^63-1 bytes)", s);
	if (rc)
		return bad(p, key, rc, "'%s' is not a valid size (examples: 512, 4K, 1M, 8G, 2T)", s);
	return 0;
}

/* A JSON string, or an option's text. */
static int get_string(const struct parse *p, const char *key, const json_t *v, const char **out)
{
	if (p->text) {
		*out = p->text;
		return 0;
	}
	if (!json_is_string(v))
		return wrong_type(p, key, v, "a string");
	*out = json_string_value(v);
	return 0;
}

static int key_size(const struct parse *p, const char *key, const json_t *v)
{
	return get_size(p, key, v, &p->d->sc.size);
}

static int key_sector(const struct parse *p, const char *key, const json_t *v)
{
	uint32_t lss, pss;
	const char *s = NULL;
	int rc = get_string(p, key, v, &s);

	if (rc)
		return rc;
	if (sfs_sector_parse(s, &lss, &pss))
		return bad(p, key, -EINVAL, "unknown sector format '%s' (expected 512n, 512e or 4kn)", s);
	p->d->lss = lss;
	p->d->pss = pss;
	return 0;
}

static int key_lss(const struct parse *p, const char *key, const json_t *v)
{
	return p->text ? get_size(p, key, v, &p->d->lss) : get_uint(p, key, v, &p->d->lss);
}

static int key_pss(const struct parse *p, const char *key, const json_t *v)
{
	return p->text ? get_size(p, key, v, &p->d->pss) : get_uint(p, key, v, &p->d->pss);
}

static int key_provisioning(const struct parse *p, const char *key, const json_t *v)
{
	const char *s = NULL;
	int rc = get_string(p, key, v, &s);

	if (rc)
		return rc;
	if (sfs_prov_parse(s, &p->d->sc.prov))
		return bad(p, key, -EINVAL,
			   "unknown provisioning mode '%s' (expected thin, zeroedthick or eagerzeroedthick)", s);
	return 0;
}

static int key_block_size(const struct parse *p, const char *key, const json_t *v)
{
	return get_size(p, key, v, &p->d->sc.block_size);
}

static int key_zero_offload(const struct parse *p, const char *key, const json_t *v)
{
	if (p->text && (strcmp(p->text, "true") == 0 || strcmp(p->text, "false") == 0)) {
		p->d->sc.zero_offload = p->text[0] == 't';
		return 0;
	}
	if (p->text)
		return bad(p, key, -EINVAL, "expected true or false");
	if (!json_is_boolean(v))
		return wrong_type(p, key, v, "true or false");
	p->d->sc.zero_offload = json_is_true(v);
	return 0;
}

static int key_profile(const struct parse *p, const char *key, const json_t *v)
{
	const char *s = NULL;
	int rc;

	if ((rc = get_string(p, key, v, &s)))
		return rc;
	if (!s[0] || strlen(s) >= sizeof(p->d->sc.profile) ||
	    (!p->text && strlen(s) != json_string_length(v)))
		return bad(p, key, -EINVAL, "expected a profile name or path of 1 to %zu bytes",
			   sizeof(p->d->sc.profile) - 1);
	snprintf(p->d->sc.profile, sizeof(p->d->sc.profile), "%s", s);
	return 0;
}

/* ---- the failure keys (doc/failures.md) ---- */

/* true or false, from JSON or an option's text. */
static int get_bool(const struct parse *p, const char *key, const json_t *v, bool *out)
{
	if (p->text && (strcmp(p->text, "true") == 0 || strcmp(p->text, "false") == 0)) {
		*out = p->text[0] == 't';
		return 0;
	}
	if (p->text)
		return bad(p, key, -EINVAL, "expected true or false");
	if (!json_is_boolean(v))
		return wrong_type(p, key, v, "true or false");
	*out = json_is_true(v);
	return 0;
}

/* A size of at most 4 GiB - 1 (a sector-sized value: its rule is checked with the others). */
static int get_size32(const struct parse *p, const char *key, const json_t *v, uint32_t *out)
{
	uint64_t n;
	int rc = get_size(p, key, v, &n);

	if (rc)
		return rc;
	if (n > UINT32_MAX)
		return bad(p, key, -EINVAL, "%" PRIu64 " is too large (at most 64K)", n);
	*out = (uint32_t)n;
	return 0;
}

static int key_write_cache(const struct parse *p, const char *key, const json_t *v)
{
	const char *s = NULL;
	int rc = get_string(p, key, v, &s);

	if (rc)
		return rc;
	if (sfs_wc_parse_mode(s, &p->d->sc.fail.mode))
		return bad(p, key, -EINVAL, "unknown write cache '%s' (expected none or volatile)", s);
	return 0;
}

static int key_write_cache_size(const struct parse *p, const char *key, const json_t *v)
{
	return get_size(p, key, v, &p->d->sc.fail.cache_size);
}

static int key_awu(const struct parse *p, const char *key, const json_t *v)
{
	return get_size32(p, key, v, &p->d->sc.fail.awu);
}

static int key_awb(const struct parse *p, const char *key, const json_t *v)
{
	return get_size32(p, key, v, &p->d->sc.fail.awb);
}

static int key_rmw_power_safe(const struct parse *p, const char *key, const json_t *v)
{
	return get_bool(p, key, v, &p->d->sc.fail.rmw_power_safe);
}

static int key_power_cut_policy(const struct parse *p, const char *key, const json_t *v)
{
	struct sfs_wc_cut c = { 0 };
	const char *s = NULL;
	char why[160];
	int rc = get_string(p, key, v, &s);

	if (rc)
		return rc;
	if (sfs_wc_parse_policy(s, &c, why, sizeof(why)) < 0)
		return bad(p, key, -EINVAL, "%s", why);
	p->d->sc.fail.cut = c;
	return 0;
}

static int key_latency_spike(const struct parse *p, const char *key, const json_t *v)
{
	if (p->text)
		return bad(p, key, -EINVAL, "only in a sidecar file (a JSON object, sectorfs.json(5))");
	return sfs_spike_parse(v, p->fname, key, &p->d->sc.fail.spike, p->err, p->errlen);
}

/* The sidecar's keys: each read by its handler, from JSON or from an option's text. */
static const struct key_handler {
	const char *key;
	unsigned have;      /* SFS_HAVE_* it sets */
	int (*fn)(const struct parse *p, const char *key, const json_t *v);
} keys[] = {
	{ "size", SFS_HAVE_SIZE, key_size },
	{ "sector", SFS_HAVE_SECTOR, key_sector },
	{ "logical_sector_size", SFS_HAVE_LSS, key_lss },
	{ "physical_sector_size", SFS_HAVE_PSS, key_pss },
	{ "provisioning", SFS_HAVE_PROV, key_provisioning },
	{ "block_size", SFS_HAVE_BLOCK, key_block_size },
	{ "zero_offload", SFS_HAVE_OFFLOAD, key_zero_offload },
	{ "profile", SFS_HAVE_PROFILE, key_profile },
	{ "write_cache", SFS_HAVE_WRITE_CACHE, key_write_cache },
	{ "write_cache_size", SFS_HAVE_WRITE_CACHE_SIZE, key_write_cache_size },
	{ "atomic_write_unit", SFS_HAVE_AWU, key_awu },
	{ "atomic_write_boundary", SFS_HAVE_AWB, key_awb },
	{ "rmw_power_safe", SFS_HAVE_RMW_POWER_SAFE, key_rmw_power_safe },
	{ "power_cut_policy", SFS_HAVE_POWER_CUT_POLICY, key_power_cut_policy },
	{ "latency_spike", SFS_HAVE_LATENCY_SPIKE, key_latency_spike },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const struct key_handler *key_of(const char *key)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(key, keys[i].key) == 0)
			return &keys[i];
	return NULL;
}

static int read_key(const struct parse *p, const char *key, const json_t *v)
{
	const struct key_handler *k = key_of(key);
	int rc;

	if (!k)
		return p->text ? sfs_err(p->err, p->errlen, -ENOENT, "%s: unknown key", key)
			       : bad(p, key, -EINVAL, "unknown key");
	rc = k->fn(p, key, v);
	if (rc == 0)
		p->d->have |= k->have;
	return rc;
}

static int read_keys(const struct parse *p, json_t *root)
{
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach(root, key, v)
		if ((rc = read_key(p, key, v)))
			return rc;
	return 0;
}

void sfs_sidecar_draft_init(struct sfs_sidecar_draft *d, const struct sfs_sidecar *from)
{
	if (from)
		d->sc = *from;
	else
		sfs_sidecar_defaults(&d->sc);
	d->lss = d->sc.lss;
	d->pss = d->sc.pss;
	d->have = 0;
}

int sfs_sidecar_draft_set(struct sfs_sidecar_draft *d, const char *key, const char *text, char *err,
			  size_t errlen)
{
	struct parse p = { .fname = "", .err = err, .errlen = errlen, .text = text, .d = d };

	return read_key(&p, key, NULL);
}

enum sfs_key_clash sfs_sidecar_draft_clash(const struct sfs_sidecar_draft *d)
{
	if ((d->have & SFS_HAVE_SECTOR) && (d->have & (SFS_HAVE_LSS | SFS_HAVE_PSS)))
		return SFS_CLASH_SECTOR_AND_SIZES;
	if (!(d->have & SFS_HAVE_LSS) != !(d->have & SFS_HAVE_PSS))
		return SFS_CLASH_SIZES_APART;
	return SFS_CLASH_NONE;
}

/* The rules on which keys go together. */
static int check_keys(const struct sfs_sidecar_draft *d, bool need_size, const char *fname, char *err,
		      size_t errlen)
{
	bool lss = d->have & SFS_HAVE_LSS;

	if (need_size && !(d->have & SFS_HAVE_SIZE))
		return sfs_key_err(err, errlen, fname, "size", -EINVAL, "missing (it is required)");
	switch (sfs_sidecar_draft_clash(d)) {
	case SFS_CLASH_SECTOR_AND_SIZES:
		return sfs_key_err(err, errlen, fname, "sector", -EINVAL, "cannot be combined with %s",
				   lss ? "logical_sector_size" : "physical_sector_size");
	case SFS_CLASH_SIZES_APART:
		return sfs_key_err(err, errlen, fname, lss ? "physical_sector_size" : "logical_sector_size",
				   -EINVAL, "missing (logical_sector_size and physical_sector_size go together)");
	case SFS_CLASH_NONE:
		break;
	}
	return 0;
}

int sfs_sidecar_draft_done(const struct sfs_sidecar_draft *d, bool need_size, const char *fname,
			   struct sfs_sidecar *out, char *err, size_t errlen)
{
	struct sfs_sidecar sc = d->sc;
	int rc = check_keys(d, need_size, fname, err, errlen);

	if (rc == 0)
		rc = sfs_geom_validate(d->sc.size, d->lss, d->pss, d->sc.block_size, fname, err, errlen);
	if (rc == 0 && !sfs_prov_name(d->sc.prov))
		rc = sfs_key_err(err, errlen, fname, "provisioning", -EINVAL, "%d is not a provisioning mode",
				 (int)d->sc.prov);
	sc.lss = (uint32_t)d->lss;
	sc.pss = (uint32_t)d->pss;
	sc.fail.have |= d->have & SFS_HAVE_FAIL_KEYS;
	if (rc == 0)
		rc = check_fail_keys(&sc, fname, err, errlen);
	if (rc)
		return rc;
	*out = sc;
	return 0;
}

int sfs_sidecar_parse(const char *text, size_t len, const char *fname,
		      struct sfs_sidecar *out, char *err, size_t errlen)
{
	struct sfs_sidecar_draft d;
	struct parse p = { .fname = fname, .err = err, .errlen = errlen, .d = &d };
	json_error_t jerr;
	json_t *root;
	int rc;

	sfs_sidecar_draft_init(&d, NULL);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return sfs_err(err, errlen,
			       json_error_code(&jerr) == json_error_numeric_overflow ? -ERANGE : -EINVAL,
			       "%s: JSON error at line %d, column %d: %s",
			       fname, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root))
		rc = sfs_err(err, errlen, -EINVAL, "%s: the top level is %s, not a JSON object",
			     fname, type_name(root));
	else if (!(rc = read_keys(&p, root)))
		rc = sfs_sidecar_draft_done(&d, true, fname, out, err, errlen);
	json_decref(root);
	return rc;
}

int sfs_sidecar_load(int dirfd, const char *fname, struct sfs_sidecar *out,
		     char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	fd = openat(dirfd, fname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP)
			return sfs_err(err, errlen, -ELOOP,
				       "%s: is a symbolic link (sidecars must be regular files)", fname);
		if (errno == ENXIO)          /* a socket: never opened */
			return sfs_err(err, errlen, -EINVAL, "%s: not a regular file", fname);
		return sys_err(err, errlen, fname, errno);
	}
	if (fstat(fd, &st) < 0) {
		rc = sys_err(err, errlen, fname, errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = sfs_err(err, errlen, -EINVAL, "%s: not a regular file", fname);
		goto out;
	}
	if (st.st_size > SFS_SIDECAR_MAX_BYTES)
		goto too_big;
	/* One byte more than allowed, to notice a file that grew since fstat. */
	buf = malloc(SFS_SIDECAR_MAX_BYTES + 1);
	if (!buf) {
		rc = sys_err(err, errlen, fname, ENOMEM);
		goto out;
	}
	while (len <= SFS_SIDECAR_MAX_BYTES) {
		ssize_t n = read(fd, buf + len, SFS_SIDECAR_MAX_BYTES + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sys_err(err, errlen, fname, errno);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len <= SFS_SIDECAR_MAX_BYTES) {
		rc = sfs_sidecar_parse(buf, len, fname, out, err, errlen);
		goto out;
	}
too_big:
	rc = sfs_err(err, errlen, -EFBIG, "%s: larger than 64 KiB", fname);
out:
	free(buf);
	close(fd);
	return rc;
}
