/* SPDX-License-Identifier: MIT */
/*
 * mountpath.c - what a path in a mount names (see mountpath.h).
 *
 * Only the path's text is looked at: the root, the .stats directory and
 * the files in it, or an image name one level below the root.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mountpath.h"
#include "contract/names.h"

/* NAME (n bytes of p) into name, or SFS_MPATH_LONG when it does not fit. */
static enum sfs_mpath with_name(enum sfs_mpath k, const char *p, size_t n, char *name, size_t len)
{
	if (n >= len)
		return SFS_MPATH_LONG;
	snprintf(name, len, "%.*s", (int)n, p);
	return k;
}

/* p: what follows "/.stats/". */
static enum sfs_mpath stats_file(const char *p, char *name, size_t len)
{
	size_t n;

	if (strchr(p, '/'))
		return SFS_MPATH_NONE;
	if (strcmp(p, SFS_STATS_METRICS) == 0)
		return SFS_MPATH_METRICS;
	n = sfs_sidecar_image_len(p);
	if (n)
		return with_name(SFS_MPATH_STATS_JSON, p, n, name, len);
	return with_name(SFS_MPATH_STATS_TEXT, p, strlen(p), name, len);
}

enum sfs_mpath sfs_mpath_classify(const char *path, bool stats, char *name, size_t len)
{
	const size_t sl = sizeof(SFS_STATS_DIR) - 1;
	const char *p;

	if (path[0] != '/')
		return SFS_MPATH_NONE;
	p = path + 1;
	if (*p == '\0')
		return SFS_MPATH_ROOT;
	if (strncmp(p, SFS_STATS_DIR, sl) == 0 && (p[sl] == '\0' || p[sl] == '/')) {
		if (!stats)
			return SFS_MPATH_NONE;
		return p[sl] == '\0' ? SFS_MPATH_STATSDIR : stats_file(p + sl + 1, name, len);
	}
	if (strchr(p, '/'))
		return SFS_MPATH_NONE;
	return with_name(SFS_MPATH_IMAGE, p, strlen(p), name, len);
}

int sfs_mpath_not_found(enum sfs_mpath k)
{
	return k == SFS_MPATH_LONG ? -ENAMETOOLONG : -ENOENT;
}
