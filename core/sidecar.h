/* SPDX-License-Identifier: MIT */
/*
 * sidecar.h - the JSON sidecar NAME.json that declares a disk image.
 *
 * Keys (see sectorfs.json(5)): size (required), sector | logical_sector_size
 * + physical_sector_size, provisioning, block_size, zero_offload.  Every
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

#include "geometry.h"

/* Largest sidecar file read; anything bigger is refused unread. */
#define SFS_SIDECAR_MAX_BYTES 65536

struct sfs_sidecar {
	uint64_t size;          /* bytes, multiple of lss */
	uint32_t lss;           /* logical sector size */
	uint32_t pss;           /* physical sector size, >= lss */
	enum sfs_prov prov;
	uint64_t block_size;    /* allocation/zeroing unit, >= pss, <= 64M */
	bool zero_offload;
};

/* Fill sc with the defaults of the contract (512n, thin, 1M, offload on, size 0). */
void sfs_sidecar_defaults(struct sfs_sidecar *sc);

/* Parse JSON text; fname is only used in messages.  0 or -EINVAL/-ERANGE with err filled. */
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

/* Validate the fields of sc as the parser would; 0 or -EINVAL with err naming the key. */
int sfs_sidecar_validate(const struct sfs_sidecar *sc, const char *fname,
			 char *err, size_t errlen);

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
