/* SPDX-License-Identifier: MIT */
/*
 * test_renamerec.c - each rename's intent record is its own
 * (.sectorfs/FROM.rename, core/store/namespace.c, recover.c), so a
 * record left keeps out only the images it names.
 *
 * Each crash is real: the rename runs in a forked child whose step hook
 * (core/util/step_test.h) exits at the step named, as a power cut would.
 * Proves:
 *   - a rename writes FROM.rename (never the one name "rename" of older
 *     versions), also for a name of 200 bytes, and for images named
 *     "rename" or "x.rename", which no other file's name takes;
 *   - a record of an older version under "rename" (with or without the
 *     identities) is still read and applied by identity at the start,
 *     beside a FROM.rename of this version: both renames are finished;
 *   - a record the start cannot apply (a FIFO, a directory or a symbolic
 *     link under a record's name, the older one's too, or a rename whose two names both hold files of the
 *     user's since, under either name) keeps out of service and out of
 *     every rename only the names it holds: the other images are served
 *     and renamed;
 *   - a rename stopped by an error after its moves leaves its record, and
 *     until the next start refuses the renames of its two names, no
 *     other;
 *   - a record whose file name names another image than it holds is
 *     damaged: dropped, nothing moved.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "image/image.h"
#include "util/step_test.h"
#include "store/intent.h"
#include "store/recover.h"
#include "store/store.h"
#include "fixtures/store_fixture.h"

#define KiB 1024ull
#define DISK "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}"
#define USER "the user's own file, made after the crash\n"

static void setup(void)
{
	store_setup("renamerec", true, "test_renamerec");
}

TestSuite(renamerec, .init = setup, .fini = store_teardown, .timeout = 30);

/* ---- helpers ---- */

/* Image name holding byte v at 0 (its first byte when v is 0), served; or not served (v < 0). */
static void expect_image(struct sfs_store *s, const char *name, int v)
{
	unsigned char buf[4096];
	struct sfs_image *im = NULL;
	int rc = sfs_store_get(s, name, &im);

	if (v < 0) {
		cr_expect_neq(rc, 0, "%s is served (log: %s)", name, cap.buf);
		if (rc == 0)
			sfs_store_put(s, im);
		return;
	}
	cr_assert_eq(rc, 0, "%s is not served (log: %s)", name, cap.buf);
	cr_assert_eq(sfs_image_pin(im), 0);
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	sfs_image_unpin(im);
	cr_expect_eq(buf[0], v ? v : name[0], "%s holds another image's data", name);
	sfs_store_put(s, im);
}

static const char *rename_from, *rename_to;

static int rename_it(struct sfs_store *s)
{
	return sfs_store_rename(s, rename_from, rename_to, false);
}

/* The rename of from to to, in a child that dies after its step n, as a power cut would. */
static void crash_rename(const char *from, const char *to, int n)
{
	rename_from = from;
	rename_to = to;
	crash_during("rename", n, rename_it);
}

static void move_state(const char *from, const char *to)
{
	cr_assert_eq(renameat(ts.statefd, from, ts.statefd, to), 0, "%s: %s", from, strerror(errno));
}

/* ---- one record per rename ---- */

Test(renamerec, a_rename_writes_a_record_named_for_its_image)
{
	struct sfs_store *s;

	make_lettered("a", DISK);
	crash_rename("a", "b", 1);
	cr_expect(state_exists("a.rename"), "no record a.rename");
	cr_expect(!state_exists("rename"), "the record has the one name of older versions");
	s = open_store();
	expect_image(s, "b", 'a');
	expect_image(s, "a", -1);
	cr_expect(!state_exists("a.rename"), "the record is left");
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(renamerec, a_name_of_200_bytes_and_names_like_a_record_s)
{
	char lng[SFS_NAME_MAX + 1], rec[SFS_FILE_NAME_LEN], names[512];
	struct sfs_store *s;

	memset(lng, 'l', SFS_NAME_MAX);
	lng[SFS_NAME_MAX] = '\0';
	snprintf(names, sizeof(names), "%s rename x.rename x", lng);
	make_lettered(names, DISK);
	snprintf(rec, sizeof(rec), "%s.rename", lng);
	crash_rename(lng, "m", 1);
	cr_expect(state_exists(rec), "no record for the long name");
	crash_rename("rename", "r2", 1);
	cr_expect(state_exists("rename.rename") && !state_exists("rename"), "the image \"rename\"'s record");
	crash_rename("x.rename", "y", 1);
	cr_expect(state_exists("x.rename.rename"), "the image \"x.rename\"'s record");
	s = open_store();
	expect_image(s, "m", 'l');
	expect_image(s, "r2", 'r');
	expect_image(s, "y", 'x');
	expect_image(s, "x", 'x');
	expect_image(s, lng, -1);
	expect_image(s, "rename", -1);
	expect_image(s, "x.rename", -1);
	cr_expect(!state_exists(rec) && !state_exists("rename.rename") && !state_exists("x.rename.rename"));
	cr_expect(tmp_exists(ts.fd, "x") && tmp_exists(ts.fd, "x.json") && state_exists("x.map"), "x was moved");
	cr_assert_eq(sfs_store_close(s), 0);
}

/* ---- records of older versions ---- */

Test(renamerec, a_record_of_an_older_version_is_read_beside_this_one_s)
{
	struct sfs_store *s;

	make_lettered("a c", DISK);
	crash_rename("a", "b", 1);
	move_state("a.rename", ".kept");        /* out of sight of the next start, which would apply it */
	crash_rename("c", "d", 1);
	move_state(".kept", "rename");          /* what an older version wrote, identities and all */
	cr_assert(state_exists("rename") && state_exists("c.rename"));
	s = open_store();
	expect_image(s, "b", 'a');
	expect_image(s, "d", 'c');
	expect_image(s, "a", -1);
	expect_image(s, "c", -1);
	cr_expect(!state_exists("rename") && !state_exists("c.rename"), "a record is left");
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(renamerec, a_record_of_an_older_version_never_moves_onto_a_file_of_the_user_s)
{
	struct sfs_store *s;
	char buf[256];

	make_lettered("a", DISK);
	crash_rename("a", "b", 1);
	move_state("a.rename", "rename");
	tmp_write_file(ts.fd, "b", USER, strlen(USER));
	s = open_store();
	expect_image(s, "a", 'a');                 /* rolled back: the image stays a */
	cr_expect_eq(tmp_read_file(ts.fd, "b", buf, sizeof(buf)), (ssize_t)strlen(USER), "b was changed");
	cr_expect(!state_exists("rename"));
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(renamerec, the_record_of_an_older_version_names_the_images_pending)
{
	char buf[512];

	make_lettered("a", DISK);
	crash_rename("a", "b", 1);
	move_state("a.rename", "rename");
	cr_expect_eq(sfs_recover_pending(ts.statefd, "a", buf, sizeof(buf)), 1);
	cr_expect_eq(sfs_recover_pending(ts.statefd, "b", buf, sizeof(buf)), 1);
	cr_expect(strstr(buf, "an interrupted rename of a to b (.sectorfs/rename)"), "%s", buf);
	cr_expect_eq(sfs_recover_pending(ts.statefd, "c", buf, sizeof(buf)), 0);
	cr_expect(sfs_recover_renames_left(ts.statefd));
}

/* ---- a record left ---- */

/* A rename of a to b that can neither be finished nor rolled back: map and backing file moved
 * to b, then the user's files put under a and b.json; its record under rec. */
static void leave_a_to_b(const char *rec)
{
	crash_rename("a", "b", 1);
	if (strcmp(rec, "a.rename") != 0)
		move_state("a.rename", rec);
	move_state("a.map", "b.map");
	cr_assert_eq(renameat(ts.fd, "a", ts.fd, "b"), 0);
	tmp_write_file(ts.fd, "a", USER, strlen(USER));
	tmp_write_file(ts.fd, "b.json", USER, strlen(USER));
}

static void expect_only_its_names_out(const char *rec)
{
	char buf[256];
	struct sfs_store *s;

	make_lettered("a c d", DISK);
	leave_a_to_b(rec);
	s = open_store();
	cr_expect(state_exists(rec), "the record was dropped");
	expect_image(s, "a", -1);
	expect_image(s, "b", -1);
	expect_image(s, "c", 'c');
	cr_expect_eq(sfs_store_rename(s, "c", "e", false), 0, "a rename no record names (log: %s)", cap.buf);
	expect_image(s, "e", 'c');
	cr_expect_neq(sfs_store_rename(s, "d", "a", false), 0, "onto a name the record holds");
	cr_expect_neq(sfs_store_rename(s, "d", "b", false), 0, "onto a name the record holds");
	expect_image(s, "d", 'd');
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect_eq(tmp_read_file(ts.fd, "a", buf, sizeof(buf)), (ssize_t)strlen(USER), "a was changed");
	cr_expect_eq(tmp_read_file(ts.fd, "b.json", buf, sizeof(buf)), (ssize_t)strlen(USER), "b.json changed");
	/* the user moves the file away: the next start finishes the rename */
	cr_assert_eq(unlinkat(ts.fd, "b.json", 0), 0);
	s = open_store();
	expect_image(s, "b", 'a');
	cr_expect(!state_exists(rec));
	cr_expect_eq(tmp_read_file(ts.fd, "a", buf, sizeof(buf)), (ssize_t)strlen(USER), "a was changed");
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(renamerec, a_record_left_keeps_only_its_names_out)
{
	expect_only_its_names_out("a.rename");
}

Test(renamerec, a_record_of_an_older_version_left_keeps_only_its_names_out)
{
	expect_only_its_names_out("rename");
}

Test(renamerec, a_fifo_a_directory_or_a_link_as_a_record_keeps_only_its_image_out, .timeout = 10)
{
	struct sfs_store *s;

	make_lettered("a c g h", DISK);
	cr_assert_eq(mkfifoat(ts.statefd, "a.rename", 0600), 0);
	cr_assert_eq(mkfifoat(ts.statefd, "x.rename", 0600), 0);   /* x: no image yet */
	cr_assert_eq(mkfifoat(ts.statefd, "rename", 0600), 0);     /* the older versions' name */
	cr_assert_eq(mkdirat(ts.statefd, "g.rename", 0700), 0);
	tmp_write_file(ts.fd, "h-to-z", "h\0z\0", 4);              /* a record, but not in .sectorfs */
	cr_assert_eq(symlinkat("../h-to-z", ts.statefd, "h.rename"), 0);
	s = open_store();
	expect_image(s, "a", -1);
	expect_image(s, "g", -1);
	expect_image(s, "h", -1);
	expect_image(s, "z", -1);
	cr_expect_eq(sfs_store_rename(s, "c", "d", false), 0, "log: %s", cap.buf);
	expect_image(s, "d", 'c');
	cr_expect_neq(sfs_store_rename(s, "d", "x", false), 0, "onto the name of a record left");
	expect_image(s, "d", 'c');
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect(state_exists("a.rename") && state_exists("x.rename") && state_exists("rename") &&
		  state_exists("g.rename") && state_exists("h.rename"), "a FIFO, directory or link was removed as a "
		  "damaged record");
	cr_expect(tmp_exists(ts.fd, "h") && tmp_exists(ts.fd, "h.json"), "h was moved through the link");
}

static int fail_at_2(const char *op, int n)
{
	return strcmp(op, "rename") == 0 && n == 2 ? -EIO : 0;
}

Test(renamerec, a_rename_that_fails_after_its_moves_holds_only_its_names)
{
	struct sfs_store *s;

	make_lettered("a c", DISK);
	s = open_store();
	sfs_step_hook = fail_at_2;
	cr_expect_eq(sfs_store_rename(s, "a", "b", false), -EIO);
	sfs_step_hook = NULL;
	cr_assert(state_exists("a.rename"), "the record was not left");
	expect_image(s, "b", 'a');
	cr_expect_eq(sfs_store_rename(s, "b", "e", false), -EBUSY, "the record's TO renamed");
	cr_expect_neq(sfs_store_rename(s, "c", "a", false), 0, "onto the record's FROM");
	cr_expect_eq(sfs_store_rename(s, "c", "f", false), 0, "a rename no record names (log: %s)", cap.buf);
	cr_assert_eq(sfs_store_close(s), 0);
	s = open_store();
	expect_image(s, "b", 'a');
	expect_image(s, "f", 'c');
	cr_expect(!state_exists("a.rename"));
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(renamerec, a_record_that_names_another_image_is_dropped)
{
	struct sfs_intent out;
	struct sfs_store *s;

	make_lettered("a", DISK);
	tmp_write_file(ts.statefd, "b.rename", "a\0c\0", 4);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_RENAME, "b.rename", &out), -EUCLEAN);
	s = open_store();
	cr_expect(!state_exists("b.rename"), "the record is left");
	expect_image(s, "a", 'a');
	expect_image(s, "c", -1);
	cr_assert_eq(sfs_store_close(s), 0);
}
