/* SPDX-License-Identifier: MIT */
/*
 * parse.c - the JSON stats file read back (stats.h), for the tools
 * that show it (sectorfs-stat); the inverse of sfs_stats_render_json.
 *
 * The keys a reader needs must be there (counts, bytes, first writes and
 * overwrites, refusals, blocks, the process's identity and the read and
 * write latency classes); the others read as 0 when absent, so a reader
 * keeps working on a file that gained keys or lost optional ones.  Times
 * come in microseconds with three decimals and go back to nanoseconds.
 *
 * The recent lists (refused_recent, rmw_recent: sectorfs-stat --refused)
 * are read on their own, so that the counters of a daemon without them
 * still read: each entry back into a struct sfs_recent_io, its time from
 * time_ns (the ISO time and the reason are derived, and not read), its op
 * and error by the names the renderer gives them.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "util/log.h"
#include "stats.h"

/* A key, required or not, and where its counter goes. */
struct counter {
	const char *key;
	size_t off;       /* in struct sfs_stats_snap */
	bool required;
};

#define C(key, field, req) { key, offsetof(struct sfs_stats_snap, field), req }
static const struct counter counters[] = {
	C("reads", reads, true), C("writes", writes, true),
	C("bytes_read", bytes_read, true), C("bytes_written", bytes_written, true),
	C("flushes", flushes, false), C("discards", discards, false),
	C("discard_bytes", discard_bytes, false), C("write_zeroes", write_zeroes, false),
	C("write_zeroes_bytes", write_zeroes_bytes, false),
	C("first_writes", first_writes, true), C("overwrites", overwrites, true),
	C("zeroed_bytes", zeroed_bytes, false),
	C("misaligned_rejected", misaligned_rejected, true), C("rmw_writes", rmw_writes, true),
	C("out_of_range", out_of_range, false),
	C("reset_generation", reset_generation, true), C("daemon_start", daemon_start, true),
	C("daemon_pid", daemon_pid, true),
};
#undef C

/* An integer >= 0 at key of o into *out; absent is 0 unless required. */
static bool get_u64(const json_t *o, const char *key, bool required, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
	if (!v)
		return !required;
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

static bool get_us(const json_t *o, const char *key, uint64_t *ns)
{
	json_t *v = json_object_get(o, key);

	*ns = json_is_number(v) ? (uint64_t)llround(json_number_value(v) * 1000.0) : 0;
	return json_is_number(v);
}

/* A histogram object of labelled counts. */
static bool get_counts(const json_t *o, const char *key, const char *const *labels, unsigned n,
		       uint64_t *v)
{
	json_t *h = json_object_get(o, key);

	if (!h)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (!get_u64(h, labels[i], false, &v[i]))
			return false;
	return json_is_object(h);
}

/* One latency class: count, mean and max (us), histogram of [lower_bound_us, count]. */
static bool get_latency(const json_t *lat, enum sfs_lat_class c, struct sfs_stats_snap *s)
{
	json_t *o = json_object_get(lat, sfs_stats_lat_keys[c]), *h = json_object_get(o, "histogram"), *e;
	bool required = c != SFS_LAT_FLUSH;
	uint64_t mean;
	size_t i;

	if (!o)
		return !required;
	if (!get_u64(o, "count", true, &s->lat[c].count) || !get_us(o, "mean", &mean) ||
	    !get_us(o, "max", &s->lat[c].max_ns) || !json_is_array(h))
		return false;
	s->lat[c].sum_ns = mean * s->lat[c].count;
	json_array_foreach(h, i, e) {
		json_t *low = json_array_get(e, 0), *n = json_array_get(e, 1);

		if (!json_is_number(low) || !json_is_integer(n) || json_integer_value(n) < 0)
			return false;
		s->lat[c].hist[sfs_stats_lat_bucket((uint64_t)llround(json_number_value(low) * 1000.0))] +=
			(uint64_t)json_integer_value(n);
	}
	return true;
}

static int parse_object(const json_t *o, struct sfs_stats_parsed *out, char *err, size_t errlen)
{
	struct sfs_stats_snap *s = &out->snap;
	json_t *name = json_object_get(o, "name"), *lat = json_object_get(o, "latency_us");
	const char *bad = NULL;
	double el;

	if (!json_object_get(o, "reset_generation"))
		return sfs_err(err, errlen, -EPROTO, "no reset_generation");
	snprintf(out->name, sizeof(out->name), "%s", json_is_string(name) ? json_string_value(name) : "?");
	for (size_t i = 0; !bad && i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!get_u64(o, counters[i].key, counters[i].required,
			     (uint64_t *)((char *)s + counters[i].off)))
			bad = counters[i].key;
	if (!bad && !get_u64(o, "allocated_blocks", true, &out->allocated_blocks))
		bad = "allocated_blocks";
	if (!bad && !get_u64(o, "total_blocks", true, &out->total_blocks))
		bad = "total_blocks";
	if (!bad && !json_is_number(json_object_get(o, "elapsed_seconds")))
		bad = "elapsed_seconds";
	if (!bad && !get_counts(o, "size_histogram", sfs_stats_size_labels, SFS_SIZE_NBUCKET, s->size_hist))
		bad = "size_histogram";
	if (!bad && !get_counts(o, "alignment_histogram", sfs_stats_align_labels, SFS_ALIGN_NCLASS,
				s->align_hist))
		bad = "alignment_histogram";
	for (unsigned c = 0; !bad && c < SFS_LAT_NCLASS; c++)
		if (!get_latency(lat, c, s))
			bad = "latency_us";
	if (bad)
		return sfs_err(err, errlen, -EINVAL, "missing or malformed key '%s'", bad);
	el = json_number_value(json_object_get(o, "elapsed_seconds"));
	s->elapsed_ns = (uint64_t)llround(el * 1e9);
	return 0;
}

/* text as a JSON object into *o (to json_decref): 0, or -EINVAL (err says why). */
static int load_object(const char *text, size_t len, json_t **o, char *err, size_t errlen)
{
	json_error_t jerr;

	*o = json_loadb(text, len, 0, &jerr);
	if (!*o)
		return sfs_err(err, errlen, -EINVAL, "not valid JSON: %s", jerr.text);
	if (json_is_object(*o))
		return 0;
	json_decref(*o);
	*o = NULL;
	return sfs_err(err, errlen, -EINVAL, "not a JSON object");
}

int sfs_stats_parse_json(const char *text, size_t len, struct sfs_stats_parsed *out, char *err,
			 size_t errlen)
{
	json_t *o;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = load_object(text, len, &o, err, errlen);
	if (rc < 0)
		return rc;
	rc = parse_object(o, out, err, errlen);
	json_decref(o);
	return rc;
}

/* ---- the recent lists ---- */

/* The op the renderer names name (sfs_io_op_name), SFS_OP_NCLASS for any other. */
static uint32_t op_named(const char *name)
{
	uint32_t op = 0;

	while (op < SFS_OP_NCLASS && strcmp(sfs_io_op_name(op), name) != 0)
		op++;
	return op;
}

/* The errno the renderer names name (sfs_stats_refusal_name), 0 for any other. */
static int32_t refusal_named(const char *name)
{
	static const int32_t errs[] = { EINVAL, ENOSPC, EIO };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (strcmp(sfs_stats_refusal_name(errs[i]), name) == 0)
			return errs[i];
	return 0;
}

/* One entry {time_ns, op, offset, length, pid, comm[, error]} into *io. */
static bool get_recent_io(const json_t *e, bool refused, struct sfs_recent_io *io)
{
	json_t *op = json_object_get(e, "op"), *comm = json_object_get(e, "comm"),
	       *er = json_object_get(e, "error"), *pid = json_object_get(e, "pid");

	if (!json_is_object(e) || !get_u64(e, "time_ns", true, &io->time_ns) ||
	    !get_u64(e, "offset", true, &io->off) || !get_u64(e, "length", true, &io->len) ||
	    !json_is_integer(pid) || json_integer_value(pid) < 0 || json_integer_value(pid) > INT32_MAX ||
	    !json_is_string(op) || !json_is_string(comm) || json_string_length(comm) >= SFS_COMM_LEN ||
	    (refused && !json_is_string(er)))
		return false;
	io->pid = (int32_t)json_integer_value(pid);
	io->op = op_named(json_string_value(op));
	io->err = refused ? refusal_named(json_string_value(er)) : 0;
	memcpy(io->comm, json_string_value(comm), json_string_length(comm) + 1);
	return true;
}

/* The list at key of o, newest first, into v (SFS_RECENT_MAX entries at most) and *n. */
static bool get_recent(const json_t *o, const char *key, bool refused, struct sfs_recent_io *v,
		       size_t *n)
{
	json_t *a = json_object_get(o, key), *e;
	size_t i;

	if (json_array_size(a) > SFS_RECENT_MAX)
		return false;
	json_array_foreach(a, i, e)
		if (!get_recent_io(e, refused, &v[i]))
			return false;
	*n = json_array_size(a);
	return true;
}

int sfs_stats_parse_recent_json(const char *text, size_t len, struct sfs_stats_parsed_recent *out,
				char *err, size_t errlen)
{
	struct sfs_stats_recent *r = &out->recent;
	json_t *o, *name;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = load_object(text, len, &o, err, errlen);
	if (rc < 0)
		return rc;
	name = json_object_get(o, "name");
	snprintf(out->name, sizeof(out->name), "%s", json_is_string(name) ? json_string_value(name) : "?");
	if (!json_is_array(json_object_get(o, "refused_recent")) || !json_is_array(json_object_get(o, "rmw_recent")))
		rc = sfs_err(err, errlen, -EPROTO, "no refused_recent and rmw_recent");
	else if (!get_recent(o, "refused_recent", true, r->refused, &r->nrefused))
		rc = sfs_err(err, errlen, -EINVAL, "malformed key 'refused_recent'");
	else if (!get_recent(o, "rmw_recent", false, r->rmw, &r->nrmw))
		rc = sfs_err(err, errlen, -EINVAL, "malformed key 'rmw_recent'");
	json_decref(o);
	return rc;
}
