/* SPDX-License-Identifier: MIT */
/*
 * profile.c - device timing profiles (model.h): parse and check a profile
 * file (every value bounded, errors naming the file and the key), find
 * and load one by name or path, dump one as JSON, and the figures the
 * model takes from it (service time of a request size, channels).
 */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/units.h"

#ifndef SFS_PROFILE_DIR
#define SFS_PROFILE_DIR "/usr/local/share/sectorfs/profiles"
#endif

/* ---- profiles ---- */

struct pparse {
	const char *fname;
	char *err;
	size_t errlen;
	struct sfs_profile *p;
	bool have_read, have_write, have_channels;
};

static int perr(const struct pparse *pp, const char *key, const char *what)
{
	return sfs_err(pp->err, pp->errlen, -EINVAL, "%s: key '%s': %s", pp->fname, key, what);
}

/* A latency in microseconds: 0 to SFS_PROFILE_MAX_US. */
static int get_us(const struct pparse *pp, const char *key, const json_t *v, double *out)
{
	if (!json_is_number(v))
		return perr(pp, key, "expected a number");
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0 || *out > SFS_PROFILE_MAX_US)
		return perr(pp, key, "expected microseconds from 0 to 60000000 (60 s)");
	return 0;
}

/* The zeroing rate in MB/s (10^6 bytes): 0 (free), or at least SFS_PROFILE_MIN_RATE. */
static int get_rate(const struct pparse *pp, const char *key, const json_t *v, double *out)
{
	if (!json_is_number(v))
		return perr(pp, key, "expected a number");
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0 || (*out > 0 && *out * 1e6 < SFS_PROFILE_MIN_RATE))
		return perr(pp, key, "expected 0 (free) or a rate of at least 1 KiB/s (0.001024 MB/s)");
	return 0;
}

/* Point i of a curve: its size (1 .. SFS_PROFILE_MAX_SIZE, above the point before) and us. */
static int get_point(const struct pparse *pp, const char *key, const json_t *e, size_t i,
		     struct sfs_profile_point *pts)
{
	json_t *s = json_object_get(e, "size"), *t = json_object_get(e, "us");
	uint64_t size = 0;
	char what[160];

	if (!json_is_object(e) || !s || !t || json_object_size(e) != 2)
		return perr(pp, key, "each point is {\"size\": bytes or \"4K\", \"us\": number}");
	if (json_is_integer(s) && json_integer_value(s) > 0)
		size = (uint64_t)json_integer_value(s);
	else if (!json_is_string(s) || sfs_parse_size(json_string_value(s), &size) || !size)
		return perr(pp, key, "a point's size is not a size");
	snprintf(what, sizeof what, "point %zu: ", i + 1);
	if (size > SFS_PROFILE_MAX_SIZE)
		return perr(pp, key, strcat(what, "its size is above 64 MiB, the largest request the model prices"));
	if (i && size <= pts[i - 1].size)
		return perr(pp, key, strcat(what, "sizes must increase"));
	if (!json_is_number(t) || !isfinite(json_number_value(t)) || json_number_value(t) < 0 ||
	    json_number_value(t) > SFS_PROFILE_MAX_US)
		return perr(pp, key, strcat(what, "its us is not microseconds from 0 to 60000000 (60 s)"));
	pts[i].size = size;
	pts[i].us = json_number_value(t);
	return 0;
}

static int get_curve(const struct pparse *pp, const char *key, const json_t *v,
		     struct sfs_profile_point *pts, unsigned *n)
{
	size_t i;
	json_t *e;
	int rc;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return perr(pp, key, "expected a non-empty array of {\"size\": ..., \"us\": ...}");
	if (json_array_size(v) > SFS_PROFILE_MAX_POINTS)
		return perr(pp, key, "more than 32 points");
	json_array_foreach(v, i, e)
		if ((rc = get_point(pp, key, e, i, pts)) < 0)
			return rc;
	*n = (unsigned)json_array_size(v);
	/* beyond its last point a curve prices requests at that point's rate */
	if ((double)pts[*n - 1].size * 1e6 < SFS_PROFILE_MIN_RATE * pts[*n - 1].us) {
		char what[160];

		snprintf(what, sizeof what, "the last point runs at %.0f bytes/s, below 1 KiB/s (larger "
			 "requests are priced at its rate)", (double)pts[*n - 1].size * 1e6 / pts[*n - 1].us);
		return perr(pp, key, what);
	}
	return 0;
}

static int pkey(struct pparse *pp, const char *key, const json_t *v)
{
	struct sfs_profile *p = pp->p;

	if (!strcmp(key, "name")) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) >= SFS_PROFILE_NAME_MAX)
			return perr(pp, key, "expected a string of 1 to 63 characters");
		snprintf(p->name, sizeof p->name, "%s", json_string_value(v));
		return 0;
	}
	if (!strcmp(key, "source") || !strcmp(key, "comment")) {
		if (!json_is_string(v))
			return perr(pp, key, "expected a string");
		return 0;
	}
	if (!strcmp(key, "channels")) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > SFS_PROFILE_MAX_CHANNELS)
			return perr(pp, key, "expected an integer from 1 to 1024");
		p->channels = (unsigned)json_integer_value(v);
		pp->have_channels = true;
		return 0;
	}
	if (!strcmp(key, "read")) {
		pp->have_read = true;
		return get_curve(pp, key, v, p->read, &p->nread);
	}
	if (!strcmp(key, "write")) {
		pp->have_write = true;
		return get_curve(pp, key, v, p->write, &p->nwrite);
	}
	if (!strcmp(key, "flush_us"))
		return get_us(pp, key, v, &p->flush_us);
	if (!strcmp(key, "partial_write_us")) {
		if (json_is_null(v)) {
			p->partial_write_us = -1;
			return 0;
		}
		return get_us(pp, key, v, &p->partial_write_us);
	}
	if (!strcmp(key, "zero_offload_mb_s"))
		return get_rate(pp, key, v, &p->zero_offload_mb_s);
	if (!strcmp(key, "zero_offload_us"))
		return get_us(pp, key, v, &p->zero_offload_us);
	if (!strcmp(key, "rotational")) {
		if (!json_is_boolean(v))
			return perr(pp, key, "expected true or false");
		p->rotational = json_is_true(v);
		return 0;
	}
	if (!strcmp(key, "latency_spike"))
		return sfs_spike_parse(v, pp->fname, key, &p->spike, pp->err, pp->errlen);
	return perr(pp, key, "unknown key");
}

int sfs_profile_parse(const char *text, size_t len, const char *fname, const char *default_name,
		      struct sfs_profile *out, char *err, size_t errlen)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1 };
	struct pparse pp = { .fname = fname, .err = err, .errlen = errlen, .p = &p };
	json_error_t je;
	const char *key;
	json_t *root, *v;
	int rc = 0;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return sfs_err(err, errlen, -EINVAL, "%s: line %d: %s", fname, je.line, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return sfs_err(err, errlen, -EINVAL, "%s: expected a JSON object", fname);
	}
	json_object_foreach(root, key, v)
		if ((rc = pkey(&pp, key, v)))
			break;
	json_decref(root);
	if (rc)
		return rc;
	if (!pp.have_read || !pp.have_write)
		return sfs_err(err, errlen, -EINVAL, "%s: key '%s': required", fname,
			       pp.have_read ? "write" : "read");
	if (!p.name[0])
		snprintf(p.name, sizeof p.name, "%s", default_name ? default_name : "unnamed");
	*out = p;
	return 0;
}

const char *sfs_profile_dir(void)
{
	const char *d = getenv("SECTORFS_PROFILE_DIR");

	return d && *d ? d : SFS_PROFILE_DIR;
}

void sfs_profile_file_name(const char *spec, char *out, size_t outlen)
{
	const char *b = strrchr(spec, '/');
	size_t n;

	b = b ? b + 1 : spec;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, b, n);
	out[n] = 0;
}

int sfs_profile_load(int dirfd, const char *spec, struct sfs_profile *out, char *err, size_t errlen)
{
	char path[4096], name[SFS_PROFILE_NAME_MAX], *buf;
	struct stat stt;
	ssize_t n;
	int fd, rc;

	if (!spec || !*spec)
		return sfs_err(err, errlen, -EINVAL, "empty profile name");
	if (!strchr(spec, '/')) {
		if (spec[0] == '.')
			return sfs_err(err, errlen, -EINVAL, "profile '%s': not a profile name", spec);
		snprintf(path, sizeof path, "%s/%s.json", sfs_profile_dir(), spec);
		dirfd = AT_FDCWD;
	} else {
		snprintf(path, sizeof path, "%s", spec);
	}
	/* O_NONBLOCK: a FIFO there would hold the open until a writer came (refused below) */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
#ifdef SFS_PROFILE_SRCDIR
	/* not installed: the profiles of the source tree it was built from */
	if (fd < 0 && errno == ENOENT && !strchr(spec, '/') && !getenv("SECTORFS_PROFILE_DIR")) {
		char alt[4096];

		snprintf(alt, sizeof alt, "%s/%s.json", SFS_PROFILE_SRCDIR, spec);
		if ((fd = openat(AT_FDCWD, alt, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0)
			snprintf(path, sizeof path, "%s", alt);
		else
			errno = ENOENT;
	}
#endif
	if (fd < 0 && errno == ENXIO)          /* a socket: never opened */
		return sfs_err(err, errlen, -EINVAL, "profile '%s': %s: not a regular file of at most 64 KiB",
			       spec, path);
	if (fd < 0) {
		rc = -errno;
		return sfs_err(err, errlen, rc, "profile '%s': %s: %s", spec, path, strerror(-rc));
	}
	if (fstat(fd, &stt) < 0 || !S_ISREG(stt.st_mode) || stt.st_size > SFS_PROFILE_MAX_BYTES) {
		close(fd);
		return sfs_err(err, errlen, -EINVAL, "profile '%s': %s: not a regular file of at most 64 KiB",
			       spec, path);
	}
	buf = malloc((size_t)stt.st_size + 1);
	if (!buf) {
		close(fd);
		return sfs_err(err, errlen, -ENOMEM, "profile '%s': out of memory", spec);
	}
	n = read(fd, buf, (size_t)stt.st_size);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc == 0) {
		sfs_profile_file_name(spec, name, sizeof name);
		rc = sfs_profile_parse(buf, (size_t)n, path, name, out, err, errlen);
	} else {
		sfs_err(err, errlen, rc, "profile '%s': %s: %s", spec, path, strerror(-rc));
	}
	free(buf);
	return rc;
}

static json_t *curve_json(const struct sfs_profile_point *pts, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < n; i++) {
		char s[32];

		if (sfs_format_size(pts[i].size, s, sizeof s))
			snprintf(s, sizeof s, "%llu", (unsigned long long)pts[i].size);
		json_array_append_new(a, json_pack("{s:s, s:f}", "size", s, "us",
						   round(pts[i].us * 10) / 10));
	}
	return a;
}

char *sfs_profile_dump(const struct sfs_profile *p, const char *source)
{
	json_t *o = json_object();
	char *s;

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(p->name));
	if (source)
		json_object_set_new(o, "source", json_string(source));
	json_object_set_new(o, "channels", json_integer(p->channels));
	json_object_set_new(o, "read", curve_json(p->read, p->nread));
	json_object_set_new(o, "write", curve_json(p->write, p->nwrite));
	json_object_set_new(o, "flush_us", json_real(round(p->flush_us * 10) / 10));
	json_object_set_new(o, "partial_write_us",
			    p->partial_write_us < 0 ? json_null() : json_real(p->partial_write_us));
	json_object_set_new(o, "zero_offload_mb_s", json_real(p->zero_offload_mb_s));
	json_object_set_new(o, "zero_offload_us", json_real(p->zero_offload_us));
	json_object_set_new(o, "rotational", json_boolean(p->rotational));
	if (sfs_spike_on(&p->spike))
		json_object_set_new(o, "latency_spike", sfs_spike_json(&p->spike));
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(o);
	return s;
}

double sfs_profile_service_us(const struct sfs_profile *p, bool write, uint64_t size)
{
	const struct sfs_profile_point *pts = write ? p->write : p->read;
	unsigned n = write ? p->nwrite : p->nread, i;
	double x, x0, x1;

	if (size <= pts[0].size)
		return pts[0].us;
	if (size >= pts[n - 1].size)   /* beyond the curve: at the rate of its last point */
		return pts[n - 1].us * (double)size / (double)pts[n - 1].size;
	for (i = 1; pts[i].size < size; i++)
		;
	x = log2((double)size);
	x0 = log2((double)pts[i - 1].size);
	x1 = log2((double)pts[i].size);
	return pts[i - 1].us + (pts[i].us - pts[i - 1].us) * (x - x0) / (x1 - x0);
}

/* The model serves at most channels requests at once, each for its service time, so at its best
 * it completes channels / service_us per microsecond: the channels that replay a drive's best IOPS
 * are those IOPS times the service time.  The service time is the profile's, the QD1 figure, which
 * holds the host's own time too, as the replay's cost will; a queue-depth knee would take the
 * host's time per request under load (two threads per core) for the drive's. */
unsigned sfs_profile_channels_for(const struct sfs_profile *p, bool write, uint64_t size, double iops,
				  unsigned max_qd)
{
	double n = iops * sfs_profile_service_us(p, write, size) / 1e6;

	if (max_qd < 1)
		max_qd = 1;
	if (!(n >= 1))   /* NaN too */
		return 1;
	return n >= max_qd ? max_qd : (unsigned)llround(n);
}
