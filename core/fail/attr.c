/* SPDX-License-Identifier: MIT */
/*
 * attr.c - a disk's failure attributes (fail.h): power, power_seed,
 * power_cut_policy and bad_sectors, set and read, the list's disk size,
 * and the counters and report of the last cut.  The cut itself and the request hooks are
 * fail.c.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- attributes ---- */

/* value (len bytes, one trailing newline dropped) as a string in buf. */
static int value_str(const char *value, size_t len, char *buf, size_t buflen, const char *what, char *err,
		     size_t errlen)
{
	if (len && value[len - 1] == '\n')
		len--;
	if (len >= buflen || memchr(value, '\0', len))
		return sfs_err(err, errlen, -EINVAL, "%s: not a value of at most %zu characters", what, buflen - 1);
	memcpy(buf, value, len);
	buf[len] = '\0';
	return 0;
}

/* A decimal or 0x number of at most max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end || errno || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_trigger(struct sfs_fail *f, int64_t *t, const char *s, uint64_t n, char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&f->mu);
	if (f->ds.power_off) {
		rc = sfs_err(err, errlen, -EINVAL, "power: '%s': the power is off: set it on first", s);
	} else {
		__atomic_store_n(&f->trig_writes, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&f->trig_flushes, 0, __ATOMIC_SEQ_CST);
		snprintf(f->trig, sizeof(f->trig), "%s", s);
		__atomic_store_n(t, (int64_t)n, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int sfs_fail_power_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen)
{
	char s[SFS_FAIL_VALUE_MAX];
	uint64_t n;
	int rc = value_str(value, len, s, sizeof(s), "power", err, errlen);

	if (rc < 0)
		return rc;
	if (!strcmp(s, "on"))
		return sfs_fail_power_on(f, err, errlen);
	if (!strcmp(s, "off"))
		return sfs_fail_cut_now(f, NULL, s, err, errlen);
	if (!strncmp(s, "off:", 4)) {
		if (parse_u64(s + 4, UINT64_MAX, &n) < 0)
			return sfs_err(err, errlen, -EINVAL, "power: '%s': the seed is not a number", s);
		return sfs_fail_cut_now(f, &n, s, err, errlen);
	}
	if (!strncmp(s, "cut-after-writes:", 17) || !strncmp(s, "cut-after-flushes:", 18)) {
		bool w = s[10] == 'w';

		if (parse_u64(s + (w ? 17 : 18), INT64_MAX, &n) < 0 || n == 0)
			return sfs_err(err, errlen, -EINVAL, "power: '%s': N must be a number from 1", s);
		return set_trigger(f, w ? &f->trig_writes : &f->trig_flushes, s, n, err, errlen);
	}
	return sfs_err(err, errlen, -EINVAL,
		       "power: '%s': expected on, off, off:SEED, cut-after-writes:N or cut-after-flushes:N", s);
}

const char *sfs_fail_power(struct sfs_fail *f)
{
	return __atomic_load_n(&f->off, __ATOMIC_ACQUIRE) ? "off" : "on";
}

int sfs_fail_seed_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen)
{
	char s[SFS_FAIL_VALUE_MAX];
	uint64_t n;
	int rc = value_str(value, len, s, sizeof(s), "power_seed", err, errlen);

	if (rc < 0)
		return rc;
	if (parse_u64(s, UINT64_MAX, &n) < 0)
		return sfs_err(err, errlen, -EINVAL, "power_seed: '%s': not a number (decimal or 0x)", s);
	pthread_mutex_lock(&f->mu);
	f->cut.seed = n;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

uint64_t sfs_fail_seed(struct sfs_fail *f)
{
	uint64_t s;

	pthread_mutex_lock(&f->mu);
	s = f->cut.seed;
	pthread_mutex_unlock(&f->mu);
	return s;
}

int sfs_fail_policy_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen)
{
	char s[SFS_FAIL_VALUE_MAX];
	struct sfs_wc_cut c;
	int rc = value_str(value, len, s, sizeof(s), "power_cut_policy", err, errlen);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&f->mu);
	c = f->cut;
	rc = sfs_wc_parse_policy(s, &c, err, errlen);
	if (rc == 0)
		f->cut = c;
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void sfs_fail_policy(struct sfs_fail *f, char *buf, size_t len)
{
	pthread_mutex_lock(&f->mu);
	sfs_wc_format_policy(&f->cut, buf, len);
	pthread_mutex_unlock(&f->mu);
}

int sfs_fail_bad_set(struct sfs_fail *f, const char *value, size_t len, char *err, size_t errlen)
{
	struct sfs_diskstate t;
	bool changed = false;
	int rc;

	pthread_mutex_lock(&f->mu);
	t = f->ds;
	sfs_ext_init(&t.bad.ext);
	rc = sfs_ext_copy(&t.bad.ext, &f->ds.bad.ext);
	if (rc == 0)
		rc = sfs_bad_apply(&t.bad, value, len, &changed, err, errlen);
	if (rc == 0 && changed && (rc = sfs_fail_save(f, &t)) < 0)
		sfs_err(err, errlen, rc, "%s: the bad sectors could not be saved in %s: %s", f->name, f->dname,
			strerror(-rc));
	if (rc == 0) {
		sfs_bad_free(&f->ds.bad);
		f->ds.bad = t.bad;
		__atomic_store_n(&f->nbad, f->ds.bad.ext.n, __ATOMIC_RELEASE);
	} else {
		sfs_bad_free(&t.bad);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int sfs_fail_bad_get(struct sfs_fail *f, char **out, size_t *len)
{
	int rc;

	pthread_mutex_lock(&f->mu);
	rc = sfs_bad_format(&f->ds.bad, out, len);
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void sfs_fail_resize(struct sfs_fail *f, uint64_t size)
{
	assert(size % f->ds.bad.lss == 0);
	pthread_mutex_lock(&f->mu);
	sfs_bad_resize(&f->ds.bad, size / f->ds.bad.lss);
	pthread_mutex_unlock(&f->mu);
}

/* ---- counters ---- */

void sfs_fail_counters(struct sfs_fail *f, struct sfs_fail_counters *c)
{
	struct sfs_wc_state st = { 0 };

	if (f->wc)
		sfs_wc_state(f->wc, &st);
	pthread_mutex_lock(&f->mu);
	*c = f->cnt;
	c->bad_sectors = sfs_bad_count(&f->ds.bad, SFS_BAD_ANY);
	pthread_mutex_unlock(&f->mu);
	c->cached_bytes = st.cached_bytes;
	c->destaged_bytes = st.destaged_bytes;
}

void sfs_fail_reset_counters(struct sfs_fail *f)
{
	pthread_mutex_lock(&f->mu);
	f->cnt = (struct sfs_fail_counters){ .kept_at_start = f->cnt.kept_at_start };
	pthread_mutex_unlock(&f->mu);
}

int sfs_fail_last_cut(struct sfs_fail *f, struct sfs_fail_cutinfo *out)
{
	int rc = 0;

	pthread_mutex_lock(&f->mu);
	*out = f->last;
	sfs_ext_init(&out->rep.lost_lba);
	sfs_ext_init(&out->rep.torn_lba);
	sfs_ext_init(&out->rep.damaged_lba);
	if (sfs_ext_copy(&out->rep.lost_lba, &f->last.rep.lost_lba) < 0 ||
	    sfs_ext_copy(&out->rep.torn_lba, &f->last.rep.torn_lba) < 0 ||
	    sfs_ext_copy(&out->rep.damaged_lba, &f->last.rep.damaged_lba) < 0) {
		sfs_wc_report_free(&out->rep);
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void sfs_fail_status(struct sfs_fail *f, struct sfs_fail_status *out)
{
	int64_t w = __atomic_load_n(&f->trig_writes, __ATOMIC_ACQUIRE);
	int64_t fl = __atomic_load_n(&f->trig_flushes, __ATOMIC_ACQUIRE);

	memset(out, 0, sizeof(*out));
	sfs_fail_counters(f, &out->cnt);
	pthread_mutex_lock(&f->mu);
	out->power_off = __atomic_load_n(&f->off, __ATOMIC_ACQUIRE) != 0;
	if (w > 0 || fl > 0) {
		snprintf(out->trigger, sizeof(out->trigger), "%s", f->trig);
		out->trigger_left = (uint64_t)(w > 0 ? w : fl);
	}
	out->next = f->cut;
	out->wc = f->cfg.wc;
	pthread_mutex_unlock(&f->mu);
}
