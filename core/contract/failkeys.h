/* SPDX-License-Identifier: MIT */
/*
 * failkeys.h - the failure keys of a sidecar (doc/failures.md,
 * sectorfs.json(5)): the values write_cache, write_cache_size,
 * atomic_write_unit, atomic_write_boundary, rmw_power_safe,
 * power_cut_policy and latency_spike take, their defaults, their text and
 * JSON forms and the rules between them and the sector format.
 *
 * They are part of the contract: the sidecar (sidecar.c) reads and checks
 * them with its other keys, so that a bad one is refused with the file,
 * the key and the reason wherever a sidecar is read (the daemon, the -o
 * options, sectorfs-img, the fuzzer).  What they do is not here: the
 * write cache and the power cut are fail/'s (fail/wcache.h), the spike
 * the drive model's (model/spike.h), which also reads latency_spike from
 * a device profile.
 */
#ifndef SFS_FAILKEYS_H
#define SFS_FAILKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the write cache: write_cache, write_cache_size, atomic_write_unit,
 * atomic_write_boundary, rmw_power_safe, power_cut_policy ---- */

enum sfs_wc_mode { SFS_WC_NONE, SFS_WC_VOLATILE };
enum sfs_wc_policy { SFS_WC_LOSE_ALL, SFS_WC_KEEP_ALL, SFS_WC_RANDOM };

#define SFS_WC_DEFAULT_SIZE (32ull << 20)
#define SFS_WC_MIN_SIZE 4096ull
#define SFS_WC_MAX_SIZE (1ull << 40)
#define SFS_WC_MAX_AWU 65536u

/* The sidecar keys of the write cache model. */
struct sfs_wc_config {
	enum sfs_wc_mode mode;     /* write_cache */
	uint64_t size;             /* write_cache_size, bytes */
	uint32_t lss, pss;         /* the disk's logical and physical sector */
	uint32_t awu;              /* atomic_write_unit, bytes */
	uint32_t awb;              /* atomic_write_boundary, bytes; 0: none */
	bool rmw_power_safe;
};

/* How a cut resolves the unflushed writes (power_cut_policy, and the seed the
 * power_seed attribute sets). */
struct sfs_wc_cut {
	enum sfs_wc_policy policy;
	double p;                  /* random: probability that a unit is kept, [0, 1] */
	uint64_t seed;
};

/* The defaults for a disk of sectors lss/pss: volatile off, 32 MiB, awu = pss, no boundary,
 * rmw_power_safe when pss == lss. */
void sfs_wc_config_default(struct sfs_wc_config *c, uint32_t lss, uint32_t pss);

/* Check c against the rules of its keys: write_cache_size from 4K to 1T, atomic_write_unit a
 * power of two from the logical sector to 64K, atomic_write_boundary 0 or a power of two of
 * at least the unit.  0, or -EINVAL with err "FNAME: key 'KEY': REASON". */
int sfs_wc_config_check(const struct sfs_wc_config *c, const char *fname, char *err, size_t errlen);

/* "none"/"volatile" into *m: 0 or -EINVAL. */
int sfs_wc_parse_mode(const char *s, enum sfs_wc_mode *m);

/* "lose-all", "keep-all", "random" or "random:P" (0 <= P <= 1) into *c's policy and p (seed
 * untouched): 0 or -EINVAL with err naming what is wrong. */
int sfs_wc_parse_policy(const char *s, struct sfs_wc_cut *c, char *err, size_t errlen);

/* The policy as sfs_wc_parse_policy reads it ("random:0.25") into buf (len bytes). */
void sfs_wc_format_policy(const struct sfs_wc_cut *c, char *buf, size_t len);

/* ---- latency_spike (a sidecar's, or a device profile's) ----
 *
 *   "latency_spike": { "probability": 0.001, "extra_us": 50000, "seed": 7 }
 *   "latency_spike": { "every": 1000, "extra_us": 20000 }
 *
 * What a spike adds to which request is model/spike.h's. */

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

#endif
