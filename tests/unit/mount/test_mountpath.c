/* SPDX-License-Identifier: MIT */
/*
 * test_mountpath.c - unit tests of core/mount/mountpath.c: what a path in a
 * mount names.
 *
 * The root, an image one level down, the .stats directory and its text,
 * JSON and metrics files, with and without stats; deeper paths and
 * /.stats without stats name nothing; a name too long for the buffer is
 * SFS_MPATH_LONG (ENAMETOOLONG) at the image's length, not the file's.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "mount/mountpath.h"
#include "contract/names.h"

struct mcase {
	const char *path;
	enum sfs_mpath stats, nostats;   /* with and without the .stats directory */
	const char *name;                /* the image named, NULL for none */
};

static const struct mcase cases[] = {
	{ "/", SFS_MPATH_ROOT, SFS_MPATH_ROOT, NULL },
	{ "/disk.img", SFS_MPATH_IMAGE, SFS_MPATH_IMAGE, "disk.img" },
	{ "/disk.json", SFS_MPATH_IMAGE, SFS_MPATH_IMAGE, "disk.json" },
	{ "/metrics", SFS_MPATH_IMAGE, SFS_MPATH_IMAGE, "metrics" },
	{ "/.statsx", SFS_MPATH_IMAGE, SFS_MPATH_IMAGE, ".statsx" },
	{ "/.stat", SFS_MPATH_IMAGE, SFS_MPATH_IMAGE, ".stat" },
	{ "/.stats", SFS_MPATH_STATSDIR, SFS_MPATH_NONE, NULL },
	{ "/.stats/disk", SFS_MPATH_STATS_TEXT, SFS_MPATH_NONE, "disk" },
	{ "/.stats/disk.json", SFS_MPATH_STATS_JSON, SFS_MPATH_NONE, "disk" },
	{ "/.stats/a.json.json", SFS_MPATH_STATS_JSON, SFS_MPATH_NONE, "a.json" },
	{ "/.stats/.json", SFS_MPATH_STATS_TEXT, SFS_MPATH_NONE, ".json" },
	{ "/.stats/metrics", SFS_MPATH_METRICS, SFS_MPATH_NONE, NULL },
	{ "/.stats/metrics.json", SFS_MPATH_STATS_JSON, SFS_MPATH_NONE, "metrics" },
	{ "/.stats/x/y", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "/.stats/metrics/x", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "/a/b", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "//a", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "/.statsx/y", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "relative", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
	{ "", SFS_MPATH_NONE, SFS_MPATH_NONE, NULL },
};

static void check(const struct mcase *c, bool stats)
{
	enum sfs_mpath want = stats ? c->stats : c->nostats;
	char name[SFS_NAME_MAX + 1] = "untouched";
	enum sfs_mpath k = sfs_mpath_classify(c->path, stats, name, sizeof(name));
	bool named = want == SFS_MPATH_IMAGE || want == SFS_MPATH_STATS_TEXT || want == SFS_MPATH_STATS_JSON;

	cr_expect_eq(k, want, "'%s' (stats %d): kind %d, not %d", c->path, stats, k, want);
	if (named)
		cr_expect_str_eq(name, c->name, "'%s' (stats %d) names '%s'", c->path, stats, name);
	else
		cr_expect_str_eq(name, "untouched", "'%s' (stats %d) wrote a name", c->path, stats);
}

Test(mountpath, every_kind_with_and_without_stats)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check(&cases[i], true);
		check(&cases[i], false);
	}
}

/* prefix, n bytes "n", suffix, into buf. */
static const char *path_of(char *buf, const char *prefix, size_t n, const char *suffix)
{
	size_t p = strlen(prefix);

	memcpy(buf, prefix, p);
	memset(buf + p, 'n', n);
	strcpy(buf + p + n, suffix);
	return buf;
}

Test(mountpath, a_name_the_buffer_cannot_hold_is_long)
{
	char path[512], name[SFS_NAME_MAX + 1];

	/* SFS_NAME_MAX bytes fit, one more does not: as an image, a text and a JSON stats file */
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/", SFS_NAME_MAX, ""), true, name, sizeof(name)),
		     SFS_MPATH_IMAGE);
	cr_expect_eq(strlen(name), SFS_NAME_MAX);
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/", SFS_NAME_MAX + 1, ""), true, name, sizeof(name)),
		     SFS_MPATH_LONG);
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/.stats/", SFS_NAME_MAX, ""), true, name, sizeof(name)),
		     SFS_MPATH_STATS_TEXT);
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/.stats/", SFS_NAME_MAX + 1, ""), true, name,
					sizeof(name)), SFS_MPATH_LONG);
	/* NAME.json: the image's name counts, not the file's */
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/.stats/", SFS_NAME_MAX, ".json"), true, name,
					sizeof(name)), SFS_MPATH_STATS_JSON);
	cr_expect_eq(strlen(name), SFS_NAME_MAX);
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/.stats/", SFS_NAME_MAX + 1, ".json"), true, name,
					sizeof(name)), SFS_MPATH_LONG);
	/* without stats, a long name below .stats is nothing, not long */
	cr_expect_eq(sfs_mpath_classify(path_of(path, "/.stats/", SFS_NAME_MAX + 1, ""), false, name,
					sizeof(name)), SFS_MPATH_NONE);
	/* a small buffer: the limit is the caller's */
	cr_expect_eq(sfs_mpath_classify("/abc", true, name, 4), SFS_MPATH_IMAGE);
	cr_expect_str_eq(name, "abc");
	cr_expect_eq(sfs_mpath_classify("/abcd", true, name, 4), SFS_MPATH_LONG);
}

Test(mountpath, not_found_errno)
{
	cr_expect_eq(sfs_mpath_not_found(SFS_MPATH_NONE), -ENOENT);
	cr_expect_eq(sfs_mpath_not_found(SFS_MPATH_LONG), -ENAMETOOLONG);
}
