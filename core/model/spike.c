/* SPDX-License-Identifier: MIT */
/*
 * spike.c - latency spikes (spike.h): the JSON object and the draw.
 */
#include "spike.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "util/log.h"
#include "util/prng.h"

bool sfs_spike_on(const struct sfs_spike *s)
{
	return s->extra_ns && (s->every || s->probability > 0);
}

uint64_t sfs_spike_extra_ns(const struct sfs_spike *s, uint64_t n)
{
	if (!s->extra_ns)
		return 0;
	if (s->every && (n + 1) % s->every == 0)
		return s->extra_ns;
	if (s->probability > 0 && sfs_draw_unit(sfs_draw(s->seed, n, SFS_SPIKE_STREAM)) < s->probability)
		return s->extra_ns;
	return 0;
}

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
