/* SPDX-License-Identifier: MIT */
/*
 * xattr.c - the user.sectorfs.* attributes of an image: its format for
 * scripts (core/mount/xattrval.h renders the values), setting the format
 * of an image just created, before it holds anything (the store checks
 * that), and its failures (power, power_seed, power_cut_policy,
 * bad_sectors, atomic_write_unit: core/image/image.h, doc/failures.md),
 * whose values can be longer than the format's and whose refusals are
 * logged with the reason.  Other attributes: none on read (ls -l asks
 * every file for security.selinux and system.posix_acl_access), ENOTSUP
 * on write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops_impl.h"
#include "mount/xattrval.h"

struct xattr_req {
	const char *name;
	char *value;
	size_t size;
};

/* A failure attribute's value into r (the whole value, or its size when r->size is 0). */
static int get_failure(struct sfs_image *im, const char *key, const struct xattr_req *r)
{
	char *v = NULL;
	size_t n = 0;
	int rc = sfs_image_fail_attr_get(im, key, &v, &n);

	if (rc == 0 && n > SFS_XATTR_LIST_MAX)
		rc = -E2BIG;               /* more than the kernel passes: a list of many ranges */
	else if (rc == 0 && r->size && n > r->size)
		rc = -ERANGE;
	else if (rc == 0 && r->size)
		memcpy(r->value, v, n);
	free(v);
	return rc < 0 ? rc : (int)n;
}

static int do_getxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_req *r = arg;
	struct sfs_sidecar sc;
	char v[SFS_XATTR_VALUE_MAX];
	const char *key = sfs_xattr_key(r->name);
	bool w;
	int n;

	if (!im)
		return -ENODATA;
	if (sfs_xattr_failure(key, &w))
		return get_failure(im, key, r);
	sc = sfs_image_sidecar(im);
	n = sfs_xattr_value(&sc, r->name, v, sizeof(v));
	if (n < 0 || r->size == 0)
		return n;
	if ((size_t)n > r->size)
		return -ERANGE;
	memcpy(r->value, v, (size_t)n);
	return n;
}

int sfs_getxattr(const char *path, const char *name, char *value, size_t size)
{
	struct xattr_req r = { name, value, size };

	/* ls -l asks every file for security.selinux and system.posix_acl_access: none here */
	if (!sfs_xattr_key(name))
		return -ENODATA;
	return sfs_with_image(path, NULL, do_getxattr, &r);
}

static int do_listxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_req *r = arg;
	size_t len;
	const char *names = sfs_xattr_names(&len);

	if (!im)
		return 0;
	if (r->size == 0)
		return (int)len;
	if (r->size < len)
		return -ERANGE;
	memcpy(r->value, names, len);
	return (int)len;
}

int sfs_listxattr(const char *path, char *list, size_t size)
{
	struct xattr_req r = { NULL, list, size };

	return sfs_with_image(path, NULL, do_listxattr, &r);
}

struct xattr_set {
	const char *key;      /* after the prefix */
	char value[SFS_XATTR_VALUE_MAX];
	const char *raw;      /* a failure attribute's value as given */
	size_t rawlen;
};

static int do_setxattr(struct sfs_fs *fs, struct sfs_image *im, const void *arg)
{
	const struct xattr_set *x = arg;
	char err[512] = "";
	int rc;

	if (!im)
		return -EPERM;
	if (!x->raw)
		return sfs_store_set_format(fs->store, im, x->key, x->value);
	rc = sfs_image_fail_attr_set(im, x->key, x->raw, x->rawlen, err, sizeof(err));
	if (rc < 0 && err[0])
		sfs_logf(fs->log, SFS_LOG_WARN, "%s: " SFS_XATTR_PREFIX "%s refused: %s", sfs_image_name(im), x->key,
			 err);
	return rc;
}

/* The format of an image just created, before it holds anything: user.sectorfs.sector,
 * .provisioning and .block_size (the geometry xattrs stay read-only). */
int sfs_setxattr(const char *path, const char *name, const char *value, size_t size, int flags)
{
	struct xattr_set x = { 0 };
	bool writable;

	x.key = sfs_xattr_key(name);
	if (!x.key)
		return -ENOTSUP;
	if (sfs_xattr_failure(x.key, &writable)) {
		if (!writable)
			return -EPERM;
		x.raw = value;
		x.rawlen = size;
		return sfs_with_image(path, NULL, do_setxattr, &x);
	}
	if (!sfs_xattr_settable(x.key))
		return -EPERM;
	if (sfs_xattr_parse(value, size, x.value, sizeof(x.value)) < 0)
		return -EINVAL;
	return sfs_with_image(path, NULL, do_setxattr, &x);
}

int sfs_removexattr(const char *path, const char *name)
{
	return sfs_xattr_key(name) ? -EPERM : -ENOTSUP;
}
