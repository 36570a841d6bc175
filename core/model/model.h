/* SPDX-License-Identifier: MIT */
/*
 * model.h - device timing profiles and the drive model that applies them.
 *
 * A profile (a small JSON file, sectorfs.json(5)) describes what a drive
 * charges for a request:
 *
 *   service time of a read / write of S bytes  points (size, us) from 512 B
 *                                              to 8 MiB, interpolated on
 *                                              log2(S); above the last point
 *                                              at the last point's rate
 *   channels                                   requests served at once; more
 *                                              wait for the first free one
 *   flush_us                                   a cache flush
 *   partial_write_us                           added per physical sector a
 *                                              write covers only in part
 *                                              (default: one physical-sector
 *                                              read, as a 512e drive does)
 *   zero_offload_mb_s, zero_offload_us         zeroing a first write's block
 *                                              with the drive's WRITE SAME;
 *                                              without offload the host
 *                                              writes the zeros at the
 *                                              drive's write rate
 *   latency_spike                              the long tail (spike.h): an
 *                                              extra time added to every
 *                                              Nth request, or to each with
 *                                              a probability, drawn from a
 *                                              seed and the request's number
 *
 * The model is a floor.  A request that arrived at t0 is given the channel
 * that frees first; it starts when both it and the channel are there and
 * holds the channel for its service time.  sfs_model_complete waits until
 * that model completion time, or not at all when the backing store already
 * took longer: a slow store is never made faster, a fast one is held back
 * to the drive's pace.  The channels' times are model time, so the queue
 * of a drive does not grow with the host's own latency.
 *
 * Physical sense: a profile's latencies are at most SFS_PROFILE_MAX_US
 * (60 s), its rates at least SFS_PROFILE_MIN_RATE (1 KiB/s: the zeroing
 * rate, and the rate of each curve's last point, which prices every
 * larger request), its sizes at most SFS_PROFILE_MAX_SIZE (64 MiB, the
 * largest block, the largest request the model prices); and whatever the
 * profile (one built in code too), no request is priced above
 * SFS_MODEL_MAX_NS (60 s), nor waits longer than that however many are
 * queued before it on its channel.
 *
 * The wait ends early: sfs_model_stop (the daemon ending) wakes every
 * wait, and the requests they held fail with -ESHUTDOWN; a request whose
 * caller has gone (the interrupted hook says so, asked on a wake and
 * before a long wait) ends its wait and completes.
 *
 * The clock and the wait are injected (struct sfs_model_clock), so the
 * queueing is tested deterministically without sleeping.
 */
#ifndef SFS_MODEL_H
#define SFS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spike.h"

#define SFS_PROFILE_MAX_POINTS 32
#define SFS_PROFILE_MAX_CHANNELS 1024
#define SFS_PROFILE_NAME_MAX 64
#define SFS_PROFILE_MAX_BYTES 65536
#define SFS_PROFILE_MAX_US 60e6                   /* a latency: 60 s */
#define SFS_PROFILE_MIN_RATE 1024.0               /* bytes per second */
#define SFS_PROFILE_MAX_SIZE (64ull << 20)        /* a point's size: the largest block */
#define SFS_MODEL_MAX_NS (60ull * 1000000000ull)  /* the most one request is priced at */

struct sfs_profile_point {
	uint64_t size;     /* bytes, strictly increasing along a curve */
	double us;         /* service time, microseconds, >= 0 */
};

struct sfs_profile {
	char name[SFS_PROFILE_NAME_MAX];
	unsigned channels;                     /* 1 .. SFS_PROFILE_MAX_CHANNELS */
	struct sfs_profile_point read[SFS_PROFILE_MAX_POINTS];
	struct sfs_profile_point write[SFS_PROFILE_MAX_POINTS];
	unsigned nread, nwrite;                /* >= 1 each */
	double flush_us;
	double partial_write_us;               /* < 0: one physical-sector read */
	double zero_offload_mb_s;              /* MB = 10^6 bytes; 0: offloaded zeroing is free */
	double zero_offload_us;                /* per offloaded zeroing command */
	bool rotational;                       /* the drive is a disk with heads (a hint only) */
	struct sfs_spike spike;                /* latency spikes; none when !sfs_spike_on */
};

/* Parse profile JSON text (fname only in messages); unknown keys, wrong types, unordered or
 * missing curves and numbers past the limits of physical sense (top of file) are errors naming
 * the file and the key.  A profile without "name" takes
 * default_name (NULL: "unnamed").  0 or -EINVAL with err filled. */
int sfs_profile_parse(const char *text, size_t len, const char *fname, const char *default_name,
		      struct sfs_profile *out, char *err, size_t errlen);

/* The directory shipped profiles are looked up in: $SECTORFS_PROFILE_DIR when set, else the
 * installed one ($(datadir)/sectorfs/profiles); a build that is not installed falls back on
 * the samples/profiles of its source tree. */
const char *sfs_profile_dir(void);

/* The name a profile file goes by: spec's base name without ".json", cut to fit outlen (> 0). */
void sfs_profile_file_name(const char *spec, char *out, size_t outlen);

/* Load a profile by spec: a name without '/' is a shipped profile (DIR/NAME.json, DIR from
 * sfs_profile_dir); anything else is a path, relative ones from dirfd (AT_FDCWD: the current
 * directory).  0, or -errno (-ENOENT: no such profile, -EINVAL: a bad one) with err filled. */
int sfs_profile_load(int dirfd, const char *spec, struct sfs_profile *out, char *err, size_t errlen);

/* Serialise p as profile JSON (with source, when non-NULL) into a malloc'd string; NULL on ENOMEM. */
char *sfs_profile_dump(const struct sfs_profile *p, const char *source);

/* Service time in microseconds of a read or write of size bytes, from the curve. */
double sfs_profile_service_us(const struct sfs_profile *p, bool write, uint64_t size);

/* The channels that make the profile p reach iops (a drive's best, measured at queue depths up
 * to max_qd) with requests of size bytes: Little's law, iops times p's service time of one,
 * rounded, within [1, max_qd]. */
unsigned sfs_profile_channels_for(const struct sfs_profile *p, bool write, uint64_t size, double iops,
				  unsigned max_qd);

/* Number of physical sectors (0, 1 or 2) that [off, off+len) covers only in part. */
unsigned sfs_model_partial_sectors(uint32_t pss, uint64_t off, uint64_t len);

enum sfs_model_op { SFS_MODEL_READ, SFS_MODEL_WRITE, SFS_MODEL_FLUSH };

/* One request, as the model prices it. */
struct sfs_model_req {
	enum sfs_model_op op;
	uint64_t off, len;        /* read, write */
	uint64_t zeroed;          /* write: bytes of first-written blocks zeroed around it */
	bool offload;             /* ... zeroed with the drive's WRITE SAME */
	uint32_t pss;             /* write: the physical sector; 0: the model's */
};

/* The clock (nanoseconds, monotonic) and a wait until a time on it, which returns as
 * sfs_model_wait_until does. */
struct sfs_model_clock {
	uint64_t (*now)(void *arg);
	int (*sleep_until)(void *arg, uint64_t t_ns);
	void *arg;
};

/* Wait until clock.h's clock reaches t_ns, the last 100 us spun (model.c), unless cut short.
 * 0 when it did (at once when it had); -ESHUTDOWN when the process stopped serving
 * (sfs_model_stop, before or during the wait); -EINTR when the interrupted hook says this
 * thread's request was interrupted. */
int sfs_model_wait_until(uint64_t t_ns);

/* The process stops serving: every wait ends now, and every later one at once, with
 * -ESHUTDOWN.  For good; safe from any thread (not from a signal handler). */
void sfs_model_stop(void);

/* Has sfs_model_stop been called? */
bool sfs_model_stopped(void);

/* Wake every wait to ask the interrupted hook again (after an interrupt arrived). */
void sfs_model_wake(void);

/* The hook that says whether the request of the calling thread was interrupted (its caller
 * gone): non-zero when it was.  Asked before a wait longer than a millisecond and after every
 * wake-up; NULL (the default): never. */
void sfs_model_set_interrupted(int (*fn)(void));

struct sfs_model;

/* A drive of profile p (copied) with physical sector pss; clk NULL: clock.h's clock, and its
 * sleep with the last 100 us spun (model.c).  0 or -ENOMEM. */
int sfs_model_new(const struct sfs_profile *p, uint32_t pss, const struct sfs_model_clock *clk,
		  struct sfs_model **out);

/* Free a model (NULL is fine). */
void sfs_model_free(struct sfs_model *m);

/* The profile in force. */
const struct sfs_profile *sfs_model_profile(const struct sfs_model *m);

/* The service time of rq in nanoseconds: transfer, plus read-modify-write and zeroing. */
uint64_t sfs_model_cost_ns(const struct sfs_model *m, const struct sfs_model_req *rq);

/* Queue rq, arrived at t0_ns, on the channel that frees first and return its model
 * completion time; a latency spike (numbered in the order requests are queued) holds the
 * channel longer, so the requests behind it wait too.  Thread-safe. */
uint64_t sfs_model_schedule(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns);

/* Schedule rq (arrived at t0_ns) and wait until its completion time; the time waited in
 * nanoseconds in *waited (0 when the request already took longer than the model says).
 * 0, also when an interrupt ended the wait early; -ESHUTDOWN when the process stopped
 * serving while the model still held the request (it must fail). */
int sfs_model_complete(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns, uint64_t *waited);

#endif
