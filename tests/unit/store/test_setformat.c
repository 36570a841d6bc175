/* SPDX-License-Identifier: MIT */
/*
 * test_setformat.c - the format of an image just created (setxattr
 * user.sectorfs.sector, .provisioning, .block_size: sfs_store_set_format)
 * is set all or nothing.
 *
 * Proves:
 *   - the fifth format since the image's files were opened is refused
 *     with EBUSY (the maps replaced are kept until close) before any file
 *     changes: the sidecar still says the fourth, the map is in place,
 *     the image is served under its name (lookup, stat) and its creator
 *     writes on; after close and a new open it has the fourth format and
 *     its data (the fifth used to be saved in the sidecar with the map
 *     deleted: the image left the mount while its creator held it and
 *     came back in the refused format);
 *   - a failure after each step before the commit (the step hook) returns
 *     the error with nothing changed, in memory and on disk, no temporary
 *     file left; after the commit the format stands;
 *   - a crash after each step (a forked child) leaves, after the next
 *     open, the image served in the old format or the new one and no
 *     temporary file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "image/image.h"
#include "util/step_test.h"
#include "store/store.h"
#include "fixtures/tmpstore.h"

static struct tmpstore ts;
static struct logcap cap;
static struct sfs_store_opts opts;

static void setup(void)
{
	tmpstore_make(&ts, "setformat", false);
	logcap_init(&cap);
	tmpstore_opts(&opts, &cap, "test_setformat");
	opts.defaults.lss = opts.defaults.pss = 512;
}

static void teardown(void)
{
	sfs_step_hook = NULL;
	tmpstore_destroy(&ts);
}

TestSuite(setformat, .init = setup, .fini = teardown, .timeout = 60);

static struct sfs_store *open_store(void)
{
	struct sfs_store *s = NULL;
	char err[1024] = "";

	cr_assert_eq(sfs_store_open(ts.path, &opts, &s, err, sizeof(err)), 0, "open: %s", err);
	return s;
}

static struct sfs_sidecar load_sidecar(const char *name)
{
	struct sfs_sidecar sc;
	char fname[300], err[512] = "";

	snprintf(fname, sizeof(fname), "%s.json", name);
	cr_assert_eq(sfs_sidecar_load(ts.fd, fname, &sc, err, sizeof(err)), 0, "%s", err);
	return sc;
}

/* The logical sector size STORE/.sectorfs/NAME.map records, 0 when there is no map. */
static uint32_t map_lss(const char *name)
{
	int sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char mapname[300];
	struct sfs_map *m = NULL;
	uint32_t lss = 0;

	cr_assert_geq(sfd, 0);
	snprintf(mapname, sizeof(mapname), "%s.map", name);
	if (sfs_map_open(sfd, mapname, SFS_MAP_RDONLY, NULL, &m, NULL, 0) == 0) {
		lss = sfs_map_info(m)->geom.lss;
		sfs_map_close(m);
	}
	close(sfd);
	return lss;
}

static int tmp_files(void)
{
	int sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n;

	cr_assert_geq(sfd, 0);
	n = count_tmp(sfd);
	close(sfd);
	return n;
}

/* The image is served as "x", is im, and shows size 0 and logical sector lss. */
static void expect_served(struct sfs_store *s, struct sfs_image *im, uint32_t lss, const char *when)
{
	struct sfs_image *got = NULL;
	struct stat st;
	char err[512] = "";

	cr_expect_eq(sfs_store_lookup(s, "x", &got, err, sizeof(err)), 0, "%s: lookup: %s", when, err);
	if (got) {
		cr_expect_eq(got, im, "%s: another image under the name", when);
		sfs_store_put(s, got);
	}
	cr_expect_eq(sfs_store_stat(s, "x", &st), 0, "%s: stat", when);
	cr_expect_eq(sfs_image_geom(im).lss, lss, "%s: in memory", when);
	cr_expect_eq(load_sidecar("x").lss, lss, "%s: sidecar", when);
	cr_expect_eq(map_lss("x"), lss, "%s: map", when);
}

static const char *const formats[] = { "4kn", "512e", "512n", "4kn", "512e" };
static const uint32_t lss_of[] = { 4096, 512, 512, 4096, 512 };

Test(setformat, the_fifth_format_is_refused_before_any_file_changes)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im = NULL;
	static char buf[4096];

	cr_assert_eq(sfs_store_create(s, "x", &im), 0);
	sfs_image_set_growing(im, true);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(sfs_store_set_format(s, im, "sector", formats[i]), 0, "format %d", i + 1);
		expect_served(s, im, lss_of[i], formats[i]);
	}
	cr_expect_eq(sfs_store_set_format(s, im, "sector", formats[4]), -EBUSY);
	expect_served(s, im, 4096, "after the refused fifth");
	cr_expect_eq(tmp_files(), 0, "a temporary file left");
	memset(buf, 0x3c, sizeof(buf));
	cr_expect_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), 0, true), (ssize_t)sizeof(buf),
		     "the creator cannot write after the refusal");
	cr_assert_eq(sfs_store_settle(s, im, true), 0);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);

	s = open_store();
	cr_assert_eq(sfs_store_get(s, "x", &im), 0, "not served after a close and an open");
	cr_expect_eq(sfs_image_geom(im).lss, 4096, "the fourth format, not the refused fifth");
	cr_expect_eq(sfs_image_geom(im).size, sizeof(buf));
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(sfs_image_pin(im), 0);
	cr_expect_eq(sfs_image_read(im, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	sfs_image_unpin(im);
	cr_expect_eq(buf[0], 0x3c);
	cr_expect_eq(buf[sizeof(buf) - 1], 0x3c);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

/* ---- each step ---- */

static int fail_at, crash_at;

static int hook(const char *op, int n)
{
	if (strcmp(op, "format") != 0)
		return 0;
	if (n == crash_at)
		_exit(0);
	return n == fail_at ? -EIO : 0;
}

#define STEPS 3
#define COMMIT 2      /* the sidecar is saved after step 2: failures after it are past the commit */

Test(setformat, a_failure_at_each_step_changes_nothing_or_everything)
{
	for (int n = 1; n <= STEPS; n++) {
		struct sfs_store *s = open_store();
		struct sfs_image *im = NULL;
		char name[8];
		int rc;

		snprintf(name, sizeof(name), "f%d", n);
		cr_assert_eq(sfs_store_create(s, name, &im), 0);
		sfs_image_set_growing(im, true);
		fail_at = n;
		crash_at = 0;
		sfs_step_hook = hook;
		rc = sfs_store_set_format(s, im, "sector", "4kn");
		sfs_step_hook = NULL;
		cr_expect_eq(rc, n <= COMMIT ? -EIO : 0, "step %d", n);
		cr_expect_eq(sfs_image_geom(im).lss, n <= COMMIT ? 512 : 4096, "step %d: in memory", n);
		cr_expect_eq(load_sidecar(name).lss, n <= COMMIT ? 512 : 4096, "step %d: sidecar", n);
		if (n <= COMMIT) {
			cr_expect_eq(map_lss(name), 512, "step %d: the old map is not back", n);
			cr_expect_eq(tmp_files(), 0, "step %d: a temporary file left", n);
		}
		/* and it can be set then */
		cr_expect_eq(sfs_store_set_format(s, im, "sector", "512e"), 0, "step %d", n);
		cr_expect_eq(map_lss(name), 512, "step %d", n);
		cr_expect_eq(load_sidecar(name).pss, 4096, "step %d", n);
		cr_assert_eq(sfs_store_settle(s, im, true), 0);
		sfs_store_put(s, im);
		cr_assert_eq(sfs_store_close(s), 0);
		s = open_store();
		cr_expect_eq(sfs_store_get(s, name, &im), 0, "step %d: not served after an open", n);
		if (im) {
			cr_expect_eq(sfs_image_geom(im).pss, 4096, "step %d", n);
			sfs_store_put(s, im);
		}
		cr_assert_eq(sfs_store_close(s), 0);
	}
}

Test(setformat, a_crash_at_each_step_leaves_one_format_or_the_other)
{
	for (int n = 1; n <= STEPS; n++) {
		struct sfs_store *s = open_store();
		struct sfs_image *im = NULL;
		char name[8], err[512] = "";
		int status;
		pid_t pid;

		snprintf(name, sizeof(name), "c%d", n);
		cr_assert_eq(sfs_store_create(s, name, &im), 0);
		sfs_store_put(s, im);
		cr_assert_eq(sfs_store_close(s), 0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			s = open_store();
			if (sfs_store_get(s, name, &im) < 0)
				_exit(2);
			sfs_image_set_growing(im, true);
			fail_at = 0;
			crash_at = n;
			sfs_step_hook = hook;
			sfs_store_set_format(s, im, "sector", "4kn");
			_exit(3);            /* the hook did not stop it: a step is missing */
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "step %d: not cut there (%d)", n,
			  WEXITSTATUS(status));
		s = open_store();
		im = NULL;
		cr_expect_eq(sfs_store_lookup(s, name, &im, err, sizeof(err)), 0, "step %d: %s", n, err);
		if (im) {
			uint32_t lss = sfs_image_geom(im).lss;

			cr_expect(lss == (n <= COMMIT ? 512 : 4096), "step %d: logical sector %u", n, lss);
			cr_expect_eq(load_sidecar(name).lss, lss, "step %d", n);
			sfs_store_put(s, im);
		}
		cr_assert_eq(sfs_store_close(s), 0);
		cr_expect_eq(tmp_files(), 0, "step %d: a temporary file left after an open and a close", n);
		cr_expect_eq(map_lss(name), n <= COMMIT ? 512 : 4096, "step %d: its map", n);
	}
}
