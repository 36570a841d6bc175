/* SPDX-License-Identifier: MIT */
/*
 * test_mountpoint.c - unit tests of core/mount/mountpoint.c: which directories
 * a store may be mounted on.
 *
 * An empty directory passes; one holding a file, or a hidden file, or many
 * files, is -ENOTEMPTY naming an entry; a regular file is -ENOTDIR; a
 * missing path is -ENOENT ("bad mount point"); a mount point ("/", /proc)
 * is -EBUSY naming what is mounted there, empty or not.  Every message
 * names the path.  The octal escapes of mountinfo fields are undone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "mount/mountpoint.h"
#include "fixtures/tmpstore.h"

TMPSTORE_SUITE(mountpoint, "mnt", false, 30);

/* Check path and expect want, with every needle (up to 2, NULL for none) in the message. */
static void expect(const char *path, int want, const char *n1, const char *n2)
{
	char err[4096] = "";
	int rc = sfs_mountpoint_check(path, err, sizeof(err));

	cr_expect_eq(rc, want, "%s: got %d (%s), expected %d", path, rc, err, want);
	if (want == 0)
		return;
	cr_expect(strstr(err, path), "'%s' does not name %s", err, path);
	cr_expect(!n1 || strstr(err, n1), "'%s' does not say '%s'", err, n1);
	cr_expect(!n2 || strstr(err, n2), "'%s' does not say '%s'", err, n2);
}

Test(mountpoint, empty_directory_passes)
{
	expect(ts.path, 0, NULL, NULL);
}

Test(mountpoint, a_file_in_it_is_refused)
{
	tmp_write_file(ts.fd, "note", "x", 1);
	expect(ts.path, -ENOTEMPTY, "not empty", "'note'");
}

Test(mountpoint, a_hidden_file_counts)
{
	tmp_write_file(ts.fd, ".hidden", "x", 1);
	expect(ts.path, -ENOTEMPTY, "not empty", "'.hidden'");
}

Test(mountpoint, many_files_are_counted)
{
	char name[32];

	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		tmp_write_file(ts.fd, name, "x", 1);
	}
	expect(ts.path, -ENOTEMPTY, "and 4 more", NULL);
}

Test(mountpoint, an_empty_subdirectory_counts)
{
	cr_assert_eq(mkdirat(ts.fd, "sub", 0755), 0);
	expect(ts.path, -ENOTEMPTY, "'sub'", NULL);
}

Test(mountpoint, a_regular_file_is_not_a_directory)
{
	char path[200];

	tmp_write_file(ts.fd, "plain", "x", 1);
	snprintf(path, sizeof(path), "%s/plain", ts.path);
	expect(path, -ENOTDIR, "not a directory", NULL);
}

Test(mountpoint, a_missing_path_is_a_bad_mount_point)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/missing", ts.path);
	expect(path, -ENOENT, "bad mount point", "No such file");
}

Test(mountpoint, a_subdirectory_of_the_same_filesystem_is_no_mount_point)
{
	char path[200];

	cr_assert_eq(mkdirat(ts.fd, "sub", 0755), 0);
	snprintf(path, sizeof(path), "%s/sub", ts.path);
	expect(path, 0, NULL, NULL);
}

Test(mountpoint, root_is_a_mount_point)
{
	expect("/", -EBUSY, "already a mount point", NULL);
}

Test(mountpoint, proc_is_a_mount_point_named_by_its_type)
{
	struct statfs sf;

	if (statfs("/proc/self", &sf) < 0 || sf.f_type != 0x9fa0)
		cr_skip_test("no procfs at /proc");
	expect("/proc", -EBUSY, "already a mount point", "(proc ");
}

Test(mountpoint, mountinfo_escapes_are_undone)
{
	static const char *const cases[][2] = {
		{ "/mnt/a\\040b", "/mnt/a b" },
		{ "tab\\011nl\\012bs\\134", "tab\tnl\nbs\\" },
		{ "plain", "plain" },
		{ "short\\04", "short\\04" },          /* not three octal digits: kept */
		{ "big\\400", "big\\400" },            /* past \377: kept */
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char s[64];

		snprintf(s, sizeof(s), "%s", cases[i][0]);
		sfs_mountinfo_unescape(s);
		cr_expect_str_eq(s, cases[i][1], "'%s'", cases[i][0]);
	}
}
