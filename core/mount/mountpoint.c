/* SPDX-License-Identifier: MIT */
/*
 * mountpoint.c - is a directory fit to mount a store on (see mountpoint.h)?
 *
 * A mount point is recognised by statx's STATX_ATTR_MOUNT_ROOT where the
 * kernel reports it (Linux 5.8 and later), else by a device number that
 * differs from its parent's (which misses a bind mount of a directory of
 * the same filesystem, the one case the old test cannot see).  What is
 * mounted there is looked up in /proc/self/mountinfo for the message:
 * the last entry for the path is the one on top.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/log.h"
#include "mountpoint.h"

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

bool sfs_mount_lookup(const char *path, char *fstype, char *source, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok, *mnt = NULL, *type = NULL, *src = NULL;
		int field = 0;
		bool after_dash = false;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
			if (field == 4)
				mnt = tok;
			else if (!after_dash && field > 5 && strcmp(tok, "-") == 0)
				after_dash = true;
			else if (after_dash && !type)
				type = tok;
			else if (after_dash && !src)
				src = tok;
		}
		if (!mnt || !type)
			continue;
		unescape(mnt);
		if (strcmp(mnt, path) != 0)
			continue;
		if (src)
			unescape(src);
		snprintf(fstype, len, "%s", type);
		snprintf(source, len, "%s", src ? src : "");
		found = true;                   /* the last one listed is the one on top */
	}
	free(line);
	fclose(f);
	return found;
}

/* Is path (a directory, stx its statx) the root of a mount?  -errno when the parent cannot be
 * looked at. */
static int is_mount_root(const char *path, const struct statx *stx)
{
	char parent[PATH_MAX];
	struct stat up;

	if (stx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		return (stx->stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	if (snprintf(parent, sizeof(parent), "%s/..", path) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	if (stat(parent, &up) < 0)
		return -errno;
	return up.st_dev != makedev(stx->stx_dev_major, stx->stx_dev_minor) ||
	       up.st_ino == stx->stx_ino;
}

int sfs_mountpoint_check(const char *path, char *err, size_t errlen)
{
	char resolved[PATH_MAX], what[2 * PATH_MAX + 8] = "";
	struct statx stx;
	struct dirent *de;
	DIR *d;
	int rc;

	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, STATX_TYPE | STATX_INO, &stx) < 0)
		return sfs_err(err, errlen, -errno, "%s: bad mount point: %s", path, strerror(errno));
	if (!S_ISDIR(stx.stx_mode))
		return sfs_err(err, errlen, -ENOTDIR, "%s: bad mount point: not a directory", path);
	rc = is_mount_root(path, &stx);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: bad mount point: cannot look at its parent: %s", path,
			       strerror(-rc));
	if (rc) {
		char type[PATH_MAX], src[PATH_MAX];

		if (realpath(path, resolved) && sfs_mount_lookup(resolved, type, src, sizeof(src)))
			snprintf(what, sizeof(what), " (%s %s)", type, src);
		return sfs_err(err, errlen, -EBUSY, "%s: already a mount point%s, which a mount would hide",
			       path, what);
	}
	d = opendir(path);
	if (!d)
		return sfs_err(err, errlen, -errno, "%s: bad mount point: cannot read it: %s", path, strerror(errno));
	errno = 0;
	while ((de = readdir(d))) {
		size_t more = 0;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(what, sizeof(what), "%s", de->d_name);
		while ((de = readdir(d)) && more < 1000)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				more++;
		closedir(d);
		if (more)
			return sfs_err(err, errlen, -ENOTEMPTY, "%s: mount point is not empty (it holds '%s' and "
				       "%s%zu more), which a mount would hide", path, what, more >= 1000 ? "over " : "",
				       more);
		return sfs_err(err, errlen, -ENOTEMPTY, "%s: mount point is not empty (it holds '%s'), which a "
			       "mount would hide", path, what);
	}
	rc = errno ? -errno : 0;
	closedir(d);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: bad mount point: cannot read it: %s", path, strerror(-rc));
	return 0;
}
