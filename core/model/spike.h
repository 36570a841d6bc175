/* SPDX-License-Identifier: MIT */
/*
 * spike.h - latency spikes: the long tail of a drive (garbage collection,
 * a retried read, a firmware hiccup) that makes timeouts and failovers
 * fire.
 *
 * A spike adds extra_us to a request: to every Nth request ("every": N),
 * or to each with a probability ("probability": P, drawn with prng.h's
 * sfs_draw(seed, request number, SFS_SPIKE_STREAM)), or to both kinds.
 * The request number counts every request the drive model prices, from 0
 * at open, so the same seed and the same sequence of requests spike the
 * same requests.  In JSON (a profile's key, or the sidecar's alone):
 *
 *   "latency_spike": { "probability": 0.001, "extra_us": 50000, "seed": 7 }
 *   "latency_spike": { "every": 1000, "extra_us": 20000 }
 *
 * How it plugs into the drive model (model.c, not changed yet): struct
 * sfs_profile gains a struct sfs_spike, parsed by sfs_spike_parse under
 * the profile key "latency_spike"; struct sfs_model gains an atomic
 * request counter; sfs_model_schedule adds sfs_spike_extra_ns(&p.spike,
 * counter++) to the request's cost before it takes its channel, so a spike
 * holds its channel as a drive's internal stall does and requests queued
 * behind it wait too.  Set alone (sidecar key "latency_spike" without a
 * profile), the image runs a model of a profile that costs nothing (every
 * curve at 0 us, SFS_PROFILE_MAX_CHANNELS channels) with the spike.
 */
#ifndef SFS_SPIKE_H
#define SFS_SPIKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFS_SPIKE_STREAM 0x5350494b45ull     /* "SPIKE": the draws' second address */
#define SFS_SPIKE_MAX_US 60e6                /* 60 s: the longest any request is held (model.h) */

struct sfs_spike {
	double probability;        /* [0, 1]; 0: none drawn */
	uint64_t every;            /* 0: none; else the Nth, 2Nth, ... request */
	uint64_t extra_ns;         /* added to a request that spikes */
	uint64_t seed;
};

struct json_t;

/* Parse the object v (jansson's json_t) of key `key` in file fname: "extra_us" (a number
 * > 0, at most 60 s: SFS_SPIKE_MAX_US) and "probability" (0 to 1) or "every" (an integer >= 1) or both,
 * "seed" (an integer >= 0) optional.  0 or -EINVAL with err "FNAME: key 'KEY': REASON". */
int sfs_spike_parse(const struct json_t *v, const char *fname, const char *key, struct sfs_spike *out, char *err,
		    size_t errlen);

/* s as the JSON object sfs_spike_parse reads back (a new reference, NULL when out of memory). */
struct json_t *sfs_spike_json(const struct sfs_spike *s);

/* Does s ever add time? */
bool sfs_spike_on(const struct sfs_spike *s);

/* The time spike s adds to request number n (0 for most): a pure function of s and n. */
uint64_t sfs_spike_extra_ns(const struct sfs_spike *s, uint64_t n);

#endif
