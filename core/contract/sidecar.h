/* SPDX-License-Identifier: MIT */
/*
 * sidecar.h - the JSON sidecar NAME.json that declares a disk image.
 *
 * Keys (see sectorfs.json(5)): size (required), sector | logical_sector_size
 * + physical_sector_size, provisioning, block_size, zero_offload, profile,
 * and the failure keys of doc/failures.md (write_cache, write_cache_size,
 * atomic_write_unit, atomic_write_boundary, rmw_power_safe,
 * power_cut_policy, latency_spike: their values and rules are
 * failkeys.h's), which are kept as the file gave them so that a sidecar
 * the daemon rewrites keeps them too.  Every
 * rule of the contract is enforced here, once: unknown keys, wrong types,
 * overflowing sizes, non-powers of two, physical < logical, sizes outside
 * 512..65536, block_size < physical or > 64M, size not a multiple of the
 * logical sector.  Each error message names the file, the key and the
 * reason, e.g. "disk.json: key 'size': 1000 is not a multiple of the
 * logical sector size 512".
 */
#ifndef SFS_SIDECAR_H
#define SFS_SIDECAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failkeys.h"
#include "geometry.h"

/* Largest sidecar file read; anything bigger is refused unread. */
#define SFS_SIDECAR_MAX_BYTES 65536
/* Longest profile name or path, NUL included. */
#define SFS_SIDECAR_PROFILE_MAX 256

/* The failure keys, as the file gave them: a key not in have takes its default (which for
 * atomic_write_unit and rmw_power_safe depends on the sector format: sfs_sidecar_fail_config),
 * and only the keys in have are written back. */
struct sfs_sidecar_fail {
	unsigned have;             /* SFS_HAVE_* bits of SFS_HAVE_FAIL_KEYS given */
	enum sfs_wc_mode mode;     /* write_cache */
	uint64_t cache_size;       /* write_cache_size */
	uint32_t awu, awb;         /* atomic_write_unit, atomic_write_boundary */
	bool rmw_power_safe;
	struct sfs_wc_cut cut;     /* power_cut_policy (its seed is 0: the xattr sets it) */
	struct sfs_spike spike;    /* latency_spike */
};

struct sfs_sidecar {
	uint64_t size;          /* bytes, multiple of lss */
	uint32_t lss;           /* logical sector size */
	uint32_t pss;           /* physical sector size, >= lss */
	enum sfs_prov prov;
	uint64_t block_size;    /* allocation/zeroing unit, >= pss, <= 64M */
	bool zero_offload;
	char profile[SFS_SIDECAR_PROFILE_MAX];   /* a device profile's name or path; "" for none */
	struct sfs_sidecar_fail fail;
};

/* Fill sc with the defaults of the contract (512n, thin, 1M, offload on, size 0). */
void sfs_sidecar_defaults(struct sfs_sidecar *sc);

/* Parse JSON text; fname is only used in messages.  0 or -EINVAL/-EFBIG/-ERANGE with err filled
 * (-EFBIG: a size past the largest disk, geometry.h). */
int sfs_sidecar_parse(const char *text, size_t len, const char *fname,
		      struct sfs_sidecar *out, char *err, size_t errlen);

/* Read and parse dirfd/fname (O_NOFOLLOW, regular file, <= 64 KiB). 0 or -errno with err filled. */
int sfs_sidecar_load(int dirfd, const char *fname, struct sfs_sidecar *out,
		     char *err, size_t errlen);

/* Serialise sc as JSON (named sector format when it is one) into a malloc'd string; NULL on ENOMEM. */
char *sfs_sidecar_dump(const struct sfs_sidecar *sc);

/* Write dirfd/fname atomically: a new temporary file in tmpdir (the store's state directory;
 * -1: beside fname), fsync, rename, fsync dirs.  0 or -errno; nothing left behind on failure. */
int sfs_sidecar_save(int dirfd, const char *fname, int tmpdir, const struct sfs_sidecar *sc);

/* Validate the fields of sc as the parser would; 0, -EINVAL or -EFBIG (a size past the
 * largest disk) with err naming the key. */
int sfs_sidecar_validate(const struct sfs_sidecar *sc, const char *fname,
			 char *err, size_t errlen);

/* A sidecar being made key by key, from options ("-o sector=4kn", "create -p thin"), with
 * the key table and the rules the parser applies to a file. */
#define SFS_HAVE_SIZE 1u
#define SFS_HAVE_SECTOR 2u
#define SFS_HAVE_LSS 4u
#define SFS_HAVE_PSS 8u
#define SFS_HAVE_PROV 16u
#define SFS_HAVE_BLOCK 32u
#define SFS_HAVE_OFFLOAD 64u
#define SFS_HAVE_PROFILE 128u
#define SFS_HAVE_WRITE_CACHE 256u
#define SFS_HAVE_WRITE_CACHE_SIZE 512u
#define SFS_HAVE_AWU 1024u
#define SFS_HAVE_AWB 2048u
#define SFS_HAVE_RMW_POWER_SAFE 4096u
#define SFS_HAVE_POWER_CUT_POLICY 8192u
#define SFS_HAVE_LATENCY_SPIKE 16384u
#define SFS_HAVE_FAIL_KEYS (SFS_HAVE_WRITE_CACHE | SFS_HAVE_WRITE_CACHE_SIZE | SFS_HAVE_AWU | SFS_HAVE_AWB | \
			    SFS_HAVE_RMW_POWER_SAFE | SFS_HAVE_POWER_CUT_POLICY | SFS_HAVE_LATENCY_SPIKE)
/* the keys that give an image a failure state at open (the spike is the drive model's) */
#define SFS_HAVE_FAIL_STATE_KEYS (SFS_HAVE_FAIL_KEYS & ~SFS_HAVE_LATENCY_SPIKE)

struct sfs_sidecar_draft {
	struct sfs_sidecar sc;
	uint64_t lss, pss;      /* 64-bit until checked */
	unsigned have;          /* SFS_HAVE_* of the keys set */
};

/* Start a draft from *from, or from the defaults when from is NULL. */
void sfs_sidecar_draft_init(struct sfs_sidecar_draft *d, const struct sfs_sidecar *from);

/* Set key (a sidecar key: size, sector, logical_sector_size, physical_sector_size,
 * provisioning, block_size, zero_offload, or a failure key but latency_spike) from its text
 * as an option gives it (sizes with K/M/G/T, true/false).  0; -ENOENT for an unknown key;
 * -EINVAL/-ERANGE for a bad value, err saying "KEY=VALUE: REASON". */
int sfs_sidecar_draft_set(struct sfs_sidecar_draft *d, const char *key, const char *text, char *err,
			  size_t errlen);

/* Which of the rules between keys the draft breaks: sector with explicit sizes, or one
 * explicit size without the other. */
enum sfs_key_clash { SFS_CLASH_NONE, SFS_CLASH_SECTOR_AND_SIZES, SFS_CLASH_SIZES_APART };
enum sfs_key_clash sfs_sidecar_draft_clash(const struct sfs_sidecar_draft *d);

/* Check the draft as a sidecar file is checked (size required when need_size, the key rules,
 * the geometry) and give the sidecar in *out.  0 or -EINVAL, err naming fname and the key. */
int sfs_sidecar_draft_done(const struct sfs_sidecar_draft *d, bool need_size, const char *fname,
			   struct sfs_sidecar *out, char *err, size_t errlen);

/* The failure model's keys of sc, the defaults filled in for its sector format (failkeys.h's
 * sfs_wc_config_default), into *c, and the cut's policy (seed 0) into *cut. */
void sfs_sidecar_fail_config(const struct sfs_sidecar *sc, struct sfs_wc_config *c, struct sfs_wc_cut *cut);

/* Set the format key ("sector", "provisioning", "block_size") of sc from its text value, as a
 * sidecar or -o option would say it; sc unchanged on error.  0, -ENOENT for another key,
 * -EINVAL for a bad value or a combination the rules refuse. */
int sfs_sidecar_set(struct sfs_sidecar *sc, const char *key, const char *value);

/* What a sidecar says that differs from the geometry and provisioning an image records (its
 * map header), a bit each; the recorded ones win (the daemon refuses another sector format and
 * keeps the rest, sectorfs-img check reports each).  0 when they agree. */
enum sfs_sidecar_diff {
	SFS_DIFF_SECTOR = 1u << 0,    /* logical or physical sector size */
	SFS_DIFF_BLOCK = 1u << 1,     /* block_size */
	SFS_DIFF_PROV = 1u << 2,      /* provisioning */
	SFS_DIFF_SMALLER = 1u << 3,   /* size below the recorded one (images never shrink) */
	SFS_DIFF_LARGER = 1u << 4,    /* size above it (the image grows when next opened) */
};

unsigned sfs_sidecar_diff(const struct sfs_sidecar *sc, const struct sfs_geom *rec, enum sfs_prov rec_prov);

#endif
