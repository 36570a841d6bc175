/* SPDX-License-Identifier: MIT */
/*
 * failkeys.c - the failure keys of a sidecar (failkeys.h): the write
 * cache's defaults, rules and policy text, and the latency_spike object.
 */
#include "failkeys.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* ---- the write cache ---- */

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

void sfs_wc_config_default(struct sfs_wc_config *c, uint32_t lss, uint32_t pss)
{
	*c = (struct sfs_wc_config){ .mode = SFS_WC_NONE, .size = SFS_WC_DEFAULT_SIZE, .lss = lss, .pss = pss,
				     .awu = pss, .awb = 0, .rmw_power_safe = pss == lss };
}

int sfs_wc_config_check(const struct sfs_wc_config *c, const char *fname, char *err, size_t errlen)
{
	if (c->size < SFS_WC_MIN_SIZE || c->size > SFS_WC_MAX_SIZE)
		return sfs_key_err(err, errlen, fname, "write_cache_size", -EINVAL, "must be from 4K to 1T");
	if (!pow2(c->awu) || c->awu < c->lss || c->awu > SFS_WC_MAX_AWU)
		return sfs_key_err(err, errlen, fname, "atomic_write_unit", -EINVAL,
				   "must be a power of two from the logical sector (%u) to 64K", c->lss);
	if (c->awb && (!pow2(c->awb) || c->awb < c->awu))
		return sfs_key_err(err, errlen, fname, "atomic_write_boundary", -EINVAL,
				   "must be a power of two of at least atomic_write_unit (%u)", c->awu);
	return 0;
}

int sfs_wc_parse_mode(const char *s, enum sfs_wc_mode *m)
{
	if (!strcmp(s, "none"))
		*m = SFS_WC_NONE;
	else if (!strcmp(s, "volatile"))
		*m = SFS_WC_VOLATILE;
	else
		return -EINVAL;
	return 0;
}

int sfs_wc_parse_policy(const char *s, struct sfs_wc_cut *c, char *err, size_t errlen)
{
	char *end;
	double p;

	if (!strcmp(s, "lose-all") || !strcmp(s, "keep-all") || !strcmp(s, "random")) {
		c->policy = s[0] == 'l' ? SFS_WC_LOSE_ALL : s[0] == 'k' ? SFS_WC_KEEP_ALL : SFS_WC_RANDOM;
		c->p = 0.5;
		return 0;
	}
	if (strncmp(s, "random:", 7) != 0)
		return sfs_err(err, errlen, -EINVAL, "power cut policy '%.40s': expected lose-all, keep-all, random or random:P",
			       s);
	errno = 0;
	p = strtod(s + 7, &end);
	if (end == s + 7 || *end || errno || !(p >= 0 && p <= 1))
		return sfs_err(err, errlen, -EINVAL, "power cut policy '%.40s': P must be a number from 0 to 1", s);
	c->policy = SFS_WC_RANDOM;
	c->p = p;
	return 0;
}

void sfs_wc_format_policy(const struct sfs_wc_cut *c, char *buf, size_t len)
{
	if (c->policy == SFS_WC_RANDOM)
		snprintf(buf, len, "random:%.17g", c->p);
	else
		snprintf(buf, len, "%s", c->policy == SFS_WC_KEEP_ALL ? "keep-all" : "lose-all");
}

/* ---- latency_spike ---- */

json_t *sfs_spike_json(const struct sfs_spike *s)
{
	json_t *o = json_object();
	int bad = !o;

	if (o && (s->probability > 0 || !s->every))
		bad |= json_object_set_new(o, "probability", json_real(s->probability));
	if (o && s->every)
		bad |= json_object_set_new(o, "every", json_integer((json_int_t)s->every));
	if (o)
		bad |= json_object_set_new(o, "extra_us", json_real((double)s->extra_ns / 1000.0));
	if (o && s->seed)
		bad |= json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int sfs_spike_parse(const struct json_t *v, const char *fname, const char *key, struct sfs_spike *out, char *err,
		    size_t errlen)
{
	struct sfs_spike s = { 0 };
	const char *k;
	json_t *x;
	bool have_extra = false;

	if (!json_is_object(v))
		return sfs_key_err(err, errlen, fname, key, -EINVAL,
				   "expected {\"probability\": P or \"every\": N, \"extra_us\": US}");
	json_object_foreach((json_t *)v, k, x) {
		double d = json_is_number(x) ? json_number_value(x) : NAN;

		if (!strcmp(k, "probability")) {
			if (!(d >= 0 && d <= 1))
				return sfs_key_err(err, errlen, fname, key, -EINVAL, "probability must be from 0 to 1");
			s.probability = d;
		} else if (!strcmp(k, "every")) {
			if (!json_is_integer(x) || json_integer_value(x) < 1)
				return sfs_key_err(err, errlen, fname, key, -EINVAL, "every must be an integer >= 1");
			s.every = (uint64_t)json_integer_value(x);
		} else if (!strcmp(k, "extra_us")) {
			if (!(d > 0 && d <= SFS_SPIKE_MAX_US))
				return sfs_key_err(err, errlen, fname, key, -EINVAL,
						   "extra_us must be a number > 0 and at most 60000000 (60 s)");
			s.extra_ns = (uint64_t)llround(d * 1000);
			have_extra = true;
		} else if (!strcmp(k, "seed")) {
			if (!json_is_integer(x) || json_integer_value(x) < 0)
				return sfs_key_err(err, errlen, fname, key, -EINVAL, "seed must be an integer >= 0");
			s.seed = (uint64_t)json_integer_value(x);
		} else {
			return sfs_key_err(err, errlen, fname, key, -EINVAL, "unknown key '%s'", k);
		}
	}
	if (!have_extra)
		return sfs_key_err(err, errlen, fname, key, -EINVAL, "extra_us is required");
	if (!s.every && !json_object_get(v, "probability"))
		return sfs_key_err(err, errlen, fname, key, -EINVAL, "probability or every is required");
	*out = s;
	return 0;
}
