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
 * same requests.  In JSON (a profile's key, or the sidecar's alone; the
 * object and struct sfs_spike are the contract's, contract/failkeys.h):
 *
 *   "latency_spike": { "probability": 0.001, "extra_us": 50000, "seed": 7 }
 *   "latency_spike": { "every": 1000, "extra_us": 20000 }
 *
 * How it plugs into the drive model (model.c): struct sfs_profile holds a
 * struct sfs_spike, read by sfs_spike_parse under the profile key
 * "latency_spike"; struct sfs_model counts the requests it queues;
 * sfs_model_schedule adds sfs_spike_extra_ns(&p.spike, count++) to the
 * request's cost before it takes its channel, so a spike holds its channel
 * as a drive's internal stall does and requests queued behind it wait too.
 * Set alone (sidecar key "latency_spike" without a profile), the image
 * runs a model of a profile that costs nothing (every curve at 0 us,
 * SFS_PROFILE_MAX_CHANNELS channels) with the spike (image/open.c).
 */
#ifndef SFS_SPIKE_H
#define SFS_SPIKE_H

#include <stdbool.h>
#include <stdint.h>

#include "contract/failkeys.h"

#define SFS_SPIKE_STREAM 0x5350494b45ull     /* "SPIKE": the draws' second address */

/* Does s ever add time? */
bool sfs_spike_on(const struct sfs_spike *s);

/* The time spike s adds to request number n (0 for most): a pure function of s and n. */
uint64_t sfs_spike_extra_ns(const struct sfs_spike *s, uint64_t n);

#endif
