/* SPDX-License-Identifier: MIT */
/*
 * ref.c - STORE/NAME arguments and the store they name: split and
 * checked once (img_ref_parse), the store directory looked for, and the
 * question every changing command asks first: does a daemon serve it?
 * The answer is the holder of the store lock (sfs_store_holder), which
 * also names the daemon in the refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int img_ref_parse(const char *arg, struct img_ref *ref)
{
	const char *slash = strrchr(arg, '/');
	const char *name = slash ? slash + 1 : arg;
	size_t slen = slash ? (size_t)(slash - arg) : 0;

	memset(ref, 0, sizeof(*ref));
	if (strlen(arg) >= sizeof(ref->path) || slen >= sizeof(ref->store)) {
		tool_error("%.60s...: path too long", arg);
		return -1;
	}
	snprintf(ref->path, sizeof(ref->path), "%s", arg);
	if (!slash)
		snprintf(ref->store, sizeof(ref->store), ".");
	else if (slen == 0)
		snprintf(ref->store, sizeof(ref->store), "/");
	else
		snprintf(ref->store, sizeof(ref->store), "%.*s", (int)slen, arg);
	if (!*name) {
		tool_error("%s: expected STORE/NAME, the image NAME in the store directory STORE", arg);
		return -1;
	}
	if (sfs_name_valid(name) < 0) {
		tool_error("%s: invalid image name '%s': a name must not start with '.', end in "
			   "'.json' or be longer than %d characters", arg, name, SFS_NAME_MAX);
		return -1;
	}
	snprintf(ref->name, sizeof(ref->name), "%s", name);
	return 0;
}

int img_store_exists(const char *store)
{
	struct stat st;

	if (stat(store, &st) < 0) {
		tool_error("%s: cannot open store: %s", store, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		tool_error("%s: cannot open store: not a directory", store);
		return -1;
	}
	return 0;
}

bool img_served(const char *store, char *holder, size_t len)
{
	return sfs_store_holder(store, holder, len) == 0;
}

int img_refuse_store_if_served(const char *store)
{
	char holder[512];

	if (!img_served(store, holder, sizeof(holder)))
		return 0;
	tool_error("%s: store is served by sectorfs (%s); unmount it first", store,
		   holder[0] ? holder : "holder unknown");
	return -1;
}

int img_refuse_if_served(const struct img_ref *ref)
{
	return img_refuse_store_if_served(ref->store);
}
