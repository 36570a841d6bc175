/* SPDX-License-Identifier: MIT */
/*
 * xattrval.h - the user.sectorfs.* extended attributes of an image.
 *
 * Every image in a mount carries its format as attributes for scripts:
 *
 *   user.sectorfs.logical_sector_size    "512", "4096", ...
 *   user.sectorfs.physical_sector_size   "512", "4096", ...
 *   user.sectorfs.sector                 "512n", "512e" or "4kn" (absent for another pair)
 *   user.sectorfs.provisioning           "thin", "zeroedthick" or "eagerzeroedthick"
 *   user.sectorfs.block_size             the allocation unit in bytes
 *
 * sector, provisioning and block_size can be set on an image that holds
 * nothing yet (the store checks that); the sector sizes are read-only.
 * Values are plain text without a newline or NUL.
 *
 * Beside them, the failure attributes (image.h, doc/failures.md):
 * power, power_seed, power_cut_policy, bad_sectors and the read-only
 * atomic_write_unit, named and listed here, rendered by the image.
 */
#ifndef SFS_XATTRVAL_H
#define SFS_XATTRVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "contract/sidecar.h"

/* A buffer for any value of ours, NUL included, but the failure attributes' (bad_sectors can
 * be longer: up to SFS_XATTR_LIST_MAX, the most the kernel passes). */
#define SFS_XATTR_VALUE_MAX 64
#define SFS_XATTR_LIST_MAX 65536

/* The key of an attribute name after SFS_XATTR_PREFIX ("sector" for "user.sectorfs.sector"), or
 * NULL when name does not start with the prefix. */
const char *sfs_xattr_key(const char *name);

/* The value of attribute name for an image of sidecar sc, into buf (len bytes, NUL-terminated):
 * its length without the NUL, -ENODATA when the image has no such attribute, or -ERANGE when
 * it does not fit. */
int sfs_xattr_value(const struct sfs_sidecar *sc, const char *name, char *buf, size_t len);

/* The names of every image's attributes, each NUL-terminated, as listxattr gives them; their
 * total length (NULs included) into *len. */
const char *sfs_xattr_names(size_t *len);

/* Is key (after the prefix) a failure attribute: power, power_seed, power_cut_policy,
 * bad_sectors, atomic_write_unit?  *writable says whether it may be set (all but
 * atomic_write_unit).  Their values are the image's (sfs_image_fail_attr_get), not
 * sfs_xattr_value's. */
bool sfs_xattr_failure(const char *key, bool *writable);

/* Can the attribute of this key (after the prefix) be set: sector, provisioning, block_size? */
bool sfs_xattr_settable(const char *key);

/* A value given to setxattr (size bytes, not NUL-terminated) as a string in out (len bytes),
 * cut at its first newline ("echo" adds one): 0, or -EINVAL when size >= len. */
int sfs_xattr_parse(const char *value, size_t size, char *out, size_t len);

#endif
