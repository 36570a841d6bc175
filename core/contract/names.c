/* SPDX-License-Identifier: MIT */
/*
 * names.c - what makes a string an image name (names.h): the rule the
 * mount, the store, the intent records and the tools all check names by.
 */
#include <errno.h>
#include <string.h>

#include "names.h"

int sfs_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SFS_NAME_MAX || name[0] == '.' || strchr(name, '/'))
		return -EINVAL;
	if (sfs_sidecar_image_len(name))   /* NAME.json: a sidecar */
		return -EINVAL;
	return 0;
}
