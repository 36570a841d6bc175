/* SPDX-License-Identifier: MIT */
/*
 * xattrval.c - the user.sectorfs.* extended attributes of an image (see
 * xattrval.h): their names, their values rendered from the sidecar, and
 * which of them may be set; the failure attributes' names too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "contract/names.h"
#include "xattrval.h"

static const char names[] =
	SFS_XATTR_PREFIX "logical_sector_size\0" SFS_XATTR_PREFIX "physical_sector_size\0"
	SFS_XATTR_PREFIX "provisioning\0" SFS_XATTR_PREFIX "block_size\0" SFS_XATTR_PREFIX "sector\0"
	SFS_XATTR_PREFIX "atomic_write_unit\0" SFS_XATTR_PREFIX "power\0" SFS_XATTR_PREFIX "power_seed\0"
	SFS_XATTR_PREFIX "power_cut_policy\0" SFS_XATTR_PREFIX "bad_sectors";

const char *sfs_xattr_key(const char *name)
{
	const size_t n = sizeof(SFS_XATTR_PREFIX) - 1;

	return strncmp(name, SFS_XATTR_PREFIX, n) == 0 ? name + n : NULL;
}

/* The value of key for sc into buf: snprintf's length, or -ENODATA when the image has none. */
static int render(const struct sfs_sidecar *sc, const char *key, char *buf, size_t len)
{
	const char *sector = sfs_sector_name(sc->lss, sc->pss);

	if (strcmp(key, "logical_sector_size") == 0)
		return snprintf(buf, len, "%u", sc->lss);
	if (strcmp(key, "physical_sector_size") == 0)
		return snprintf(buf, len, "%u", sc->pss);
	if (strcmp(key, "provisioning") == 0)
		return snprintf(buf, len, "%s", sfs_prov_name(sc->prov));
	if (strcmp(key, "sector") == 0 && sector)
		return snprintf(buf, len, "%s", sector);
	if (strcmp(key, "block_size") == 0)
		return snprintf(buf, len, "%llu", (unsigned long long)sc->block_size);
	return -ENODATA;
}

int sfs_xattr_value(const struct sfs_sidecar *sc, const char *name, char *buf, size_t len)
{
	const char *key = sfs_xattr_key(name);
	int n;

	if (!key)
		return -ENODATA;
	n = render(sc, key, buf, len);
	return n >= 0 && (size_t)n >= len ? -ERANGE : n;
}

const char *sfs_xattr_names(size_t *len)
{
	*len = sizeof(names);
	return names;
}

bool sfs_xattr_failure(const char *key, bool *writable)
{
	static const char *const keys[] = { "power", "power_seed", "power_cut_policy", "bad_sectors" };

	*writable = true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return true;
	*writable = false;
	return strcmp(key, "atomic_write_unit") == 0;
}

bool sfs_xattr_settable(const char *key)
{
	return strcmp(key, "sector") == 0 || strcmp(key, "provisioning") == 0 || strcmp(key, "block_size") == 0;
}

int sfs_xattr_parse(const char *value, size_t size, char *out, size_t len)
{
	if (size >= len)
		return -EINVAL;
	memcpy(out, value, size);
	out[size] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}
