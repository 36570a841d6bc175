/* SPDX-License-Identifier: MIT */
/*
 * test_store_fail.c - an image's failure state files (NAME.disk,
 * NAME.undo) across the store's rename and unlink (core/store/namespace.c,
 * recover.c, scan.c).
 *
 * Proves:
 *   - a rename moves NAME.disk and NAME.undo with the map; the renamed
 *     image's state works under its new name (a cut, a heal saved there),
 *     and nothing is written under the old name again;
 *   - a rename onto an image with failure state files replaces them: the
 *     image renamed over it, which had none, does not inherit the
 *     replaced one's bad sectors or power state;
 *   - an unlink removes them; a new image of the same name starts with no
 *     failure state, even when the unlinked one is still held open and
 *     writes to its bad sectors afterwards;
 *   - an image removed behind the daemon's back (backing file and
 *     sidecar) takes them along;
 *   - a cut of an image whose descriptors the cache closed opens them
 *     again to roll its unflushed write back;
 *   - a rename (onto a free name, onto an image with failure state
 *     files) and an unlink failed or crashed after each of their steps
 *     leave, after the next open, the power and bad sectors of every
 *     name as before or as after, and no state file under a name that
 *     is not served.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "image/image_test.h"
#include "util/step_test.h"
#include "store/store.h"
#include "fixtures/store_fixture.h"

#define GOOD "{\"size\": \"1M\", \"sector\": \"512e\", \"block_size\": \"64K\"}"
#define VOLATILE "{\"size\": \"1M\", \"sector\": \"512e\", \"block_size\": \"64K\", \"write_cache\": \"volatile\"}"

static void setup(void)
{
	store_setup("storefail", false, "pid 1, unit test");
	opts.stats = true;
}

TestSuite(storefail, .init = setup, .fini = store_teardown, .timeout = 30);

static int attr(struct sfs_image *im, const char *key, const char *v)
{
	char err[512] = "";

	return sfs_image_fail_attr_set(im, key, v, strlen(v), err, sizeof(err));
}

static char *attr_get(struct sfs_image *im, const char *key)
{
	char *v = NULL;
	size_t n;

	cr_assert_eq(sfs_image_fail_attr_get(im, key, &v, &n), 0);
	return v;
}

static void expect_attr(struct sfs_image *im, const char *key, const char *want)
{
	char *v = attr_get(im, key);

	cr_expect_str_eq(v, want, "%s of %s", key, sfs_image_name(im));
	free(v);
}

static int read4k(struct sfs_image *im, uint64_t off, int v)
{
	unsigned char buf[4096];
	ssize_t n = sfs_image_read(im, buf, sizeof(buf), off);

	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != v)
			return 1;
	return 0;
}

Test(storefail, rename_moves_the_state)
{
	struct sfs_store *s;
	struct sfs_image *im;

	im = sidecar_get("a", VOLATILE, &s);
	put_bytes(im, 0, 1);
	cr_assert_eq(attr(im, "bad_sectors", "+100"), 0);
	cr_assert(state_exists("a.disk") && state_exists("a.undo"));
	cr_assert_eq(sfs_store_rename(s, "a", "b", false), 0);
	cr_expect(!state_exists("a.disk") && !state_exists("a.undo"), "left under the old name");
	cr_expect(state_exists("b.disk") && state_exists("b.undo"));
	put_bytes(im, 8192, 2);                      /* into the log under its new name */
	cr_assert_eq(attr(im, "bad_sectors", "+200"), 0);
	cr_assert_eq(attr(im, "power", "off"), 0);
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(read4k(im, 0, 0), 0, "the write before the rename was not rolled back");
	cr_expect_eq(read4k(im, 8192, 0), 0, "the write after the rename was not rolled back");
	cr_expect(!state_exists("a.disk") && !state_exists("a.undo"), "written under the old name after the rename");
	put_close(s, im);
	im = open_get("b", &s);
	expect_attr(im, "bad_sectors", "100-100\n200-200");
	put_close(s, im);
}

Test(storefail, rename_over_replaces_the_state)
{
	struct sfs_store *s;
	struct sfs_image *a, *b;

	tmp_write_sidecar(ts.fd, "a", GOOD);
	b = sidecar_get("b", VOLATILE, &s);
	put_bytes(b, 0, 1);
	cr_assert_eq(attr(b, "bad_sectors", "+8"), 0);
	cr_assert_eq(attr(b, "power", "off"), 0);
	sfs_store_put(s, b);
	cr_assert(state_exists("b.disk") && state_exists("b.undo"));
	cr_assert_eq(sfs_store_rename(s, "a", "b", false), 0);
	a = get(s, "b");
	expect_attr(a, "power", "on");
	expect_attr(a, "bad_sectors", "");
	cr_expect_eq(read4k(a, 4096, 0), 0, "the image renamed over b reads");
	put_close(s, a);
	a = open_get("b", &s);
	expect_attr(a, "power", "on");
	expect_attr(a, "bad_sectors", "");
	cr_expect(!sfs_image_has_failures(a) || !state_exists("b.undo"), "the replaced image's log stays");
	put_close(s, a);
}

Test(storefail, unlink_removes_the_state)
{
	struct sfs_store *s;
	struct sfs_image *old, *im;

	old = sidecar_get("a", VOLATILE, &s);
	put_bytes(old, 0, 1);
	cr_assert_eq(attr(old, "bad_sectors", "+16-23"), 0);
	cr_assert_eq(sfs_store_unlink(s, "a"), 0);
	cr_expect(!state_exists("a.disk") && !state_exists("a.undo"));
	cr_assert_eq(sfs_store_create(s, "a", &im), 0);
	cr_assert_eq(sfs_store_resize(s, im, 1 << 20), 0);
	/* the unlinked image, still open, heals its bad sectors: nothing is saved for it */
	put_bytes(old, 8192, 2);
	cr_expect(!state_exists("a.disk"), "the unlinked image wrote the new one's state");
	cr_expect(!sfs_image_has_failures(im));
	expect_attr(im, "bad_sectors", "");
	sfs_store_put(s, im);
	put_close(s, old);
	cr_expect(!state_exists("a.disk") && !state_exists("a.undo"));
}

Test(storefail, backing_removed_behind_our_back)
{
	struct sfs_store *s;
	struct sfs_image *im;

	im = sidecar_get("a", GOOD, &s);
	cr_assert_eq(attr(im, "bad_sectors", "+1"), 0);
	sfs_store_put(s, im);
	cr_assert(state_exists("a.disk"));
	cr_assert_eq(unlinkat(ts.fd, "a", 0), 0);
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT);
	cr_expect(!state_exists("a.disk"), "the failure state of a removed image stays");
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(storefail, cut_of_an_image_the_cache_closed)
{
	struct sfs_store *s;
	struct sfs_image *a, *b;

	opts.fd_budget = 3;                      /* one image's descriptors at a time */
	tmp_write_sidecar(ts.fd, "a", VOLATILE);
	tmp_write_sidecar(ts.fd, "b", VOLATILE);
	a = open_get("a", &s);
	cr_assert_eq(sfs_image_pin(a), 0);
	put_bytes(a, 0, 1);
	cr_assert_eq(sfs_image_flush(a), 0);
	put_bytes(a, 0, 2);                          /* unflushed */
	sfs_image_unpin(a);
	b = get(s, "b");
	cr_assert_eq(sfs_image_pin(b), 0);       /* a's descriptors go */
	put_bytes(b, 0, 3);
	sfs_image_unpin(b);
	cr_expect(!sfs_image_resident(a), "a was not evicted: the test tests nothing");
	cr_assert_eq(attr(a, "power", "off"), 0, "the cut of an evicted image");
	cr_assert_eq(attr(a, "power", "on"), 0);
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_expect_eq(read4k(a, 0, 1), 0, "the unflushed write was not rolled back");
	sfs_image_unpin(a);
	sfs_store_put(s, a);
	put_close(s, b);
}

/* ---- a crash or a failure at each step of a rename or an unlink (as test_steps.c) ---- */

static const char *hook_op;
static int hook_n;
static bool hook_crash;
static bool settled;        /* the store was opened again: what a failure left is put right */

static int hook(const char *op, int n)
{
	if (strcmp(op, hook_op) != 0 || n != hook_n)
		return 0;
	if (hook_crash)
		_exit(0);
	return -EIO;
}

/* a: a 512e image with bad sectors 5-6 and a volatile cache; b: the power off, bad 9. */
static void make_pair(void)
{
	struct sfs_store *s;
	struct sfs_image *im;

	tmp_write_sidecar(ts.fd, "a", VOLATILE);
	tmp_write_sidecar(ts.fd, "b", GOOD);
	im = open_get("a", &s);
	put_bytes(im, 0, 1);
	cr_assert_eq(attr(im, "bad_sectors", "+5-6"), 0);
	sfs_store_put(s, im);
	im = get(s, "b");
	cr_assert_eq(attr(im, "bad_sectors", "+9"), 0);
	cr_assert_eq(attr(im, "power", "off"), 0);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

static void expect_state(struct sfs_store *s, const char *name, const char *power, const char *bad,
			 const char *what)
{
	struct sfs_image *im = NULL;
	char *v;

	cr_assert_eq(sfs_store_get(s, name, &im), 0, "%s: get %s", what, name);
	v = attr_get(im, "power");
	cr_expect_str_eq(v, power, "%s: power of %s", what, name);
	free(v);
	v = attr_get(im, "bad_sectors");
	cr_expect_str_eq(v, bad, "%s: bad_sectors of %s", what, name);
	free(v);
	sfs_store_put(s, im);
}

struct stepcase {
	const char *op;
	int steps;
	int commit_fail, commit_crash; /* the first step whose failure, or crash, leaves it made */
	int (*run)(struct sfs_store *s);
	void (*expect)(struct sfs_store *s, bool after, const char *what);
};

static int run_rename_free(struct sfs_store *s) { return sfs_store_rename(s, "a", "c", false); }
static int run_rename_over(struct sfs_store *s) { return sfs_store_rename(s, "a", "b", false); }
static int run_unlink(struct sfs_store *s) { return sfs_store_unlink(s, "a"); }

static void expect_rename_free(struct sfs_store *s, bool after, const char *what)
{
	expect_state(s, after ? "c" : "a", "on", "5-6", what);
	expect_state(s, "b", "off", "9-9", what);
	cr_expect(!settled || !state_exists(after ? "a.disk" : "c.disk"), "%s: a state file under the name not served",
		  what);
	cr_expect(!settled || !state_exists(after ? "a.undo" : "c.undo"), "%s: a log under the name not served", what);
}

static void expect_rename_over(struct sfs_store *s, bool after, const char *what)
{
	if (after) {
		expect_state(s, "b", "on", "5-6", what);
		cr_expect(!settled || (!state_exists("a.disk") && !state_exists("a.undo")), "%s: a's files left", what);
	} else {
		expect_state(s, "a", "on", "5-6", what);
		expect_state(s, "b", "off", "9-9", what);
	}
}

static void expect_unlink(struct sfs_store *s, bool after, const char *what)
{
	struct sfs_image *im;

	if (after) {
		cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT, "%s: a still there", what);
		cr_expect(!settled || (!state_exists("a.disk") && !state_exists("a.undo")), "%s: a's state files left",
			  what);
	} else {
		expect_state(s, "a", "on", "5-6", what);
	}
	expect_state(s, "b", "off", "9-9", what);
}

Test(storefail, every_step_of_rename_and_unlink)
{
	static const struct stepcase cases[] = {
		{ "rename", 2, 2, 1, run_rename_free, expect_rename_free },
		{ "rename", 2, 2, 1, run_rename_over, expect_rename_over },
		{ "unlink", 3, 2, 2, run_unlink, expect_unlink },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct stepcase *c = &cases[i];

		for (int n = 1; n <= c->steps; n++) {
			for (int crash = 0; crash < 2; crash++) {
				bool after = n >= (crash ? c->commit_crash : c->commit_fail);
				char what[96];
				struct sfs_store *s;

				snprintf(what, sizeof(what), "case %zu, %s %s after step %d", i, c->op,
					 crash ? "crashing" : "failing", n);
				make_pair();
				hook_op = c->op;
				hook_n = n;
				hook_crash = crash;
				if (crash) {
					crash_at_step(c->run, hook, what);
				} else {
					s = fail_at_step(c->run, hook, what);
					settled = false;   /* an unlink past its commit leaves its files to the next start */
					c->expect(s, after, what);
					cr_assert_eq(sfs_store_close(s), 0);
				}
				sfs_step_hook = NULL;
				settled = true;
				s = open_store();
				c->expect(s, after, what);
				cr_assert_eq(sfs_store_close(s), 0);
				tmp_rm_below(ts.fd);
			}
		}
	}
}
