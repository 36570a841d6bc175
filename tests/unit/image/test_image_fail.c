/* SPDX-License-Identifier: MIT */
/*
 * test_image_fail.c - an image's failures through the image's own calls
 * (core/image/io.c, failures.c, open.c): the hooks in the data path, the
 * state made at open or on the first attribute, and what an image
 * without one keeps as before.
 *
 * Proves:
 *   - without a failure key or file, an image has no failure state after
 *     writes, flushes and a close, writes no NAME.disk or NAME.undo, and
 *     its attributes read the defaults;
 *   - write_cache volatile: a cut rolls an unflushed write back and keeps
 *     a flushed one, through the allocation map (a block first written by
 *     a lost write reads zeros), a FUA write (sfs_image_fua_next) followed
 *     by sfs_image_sync survives a cut without making the writes before it
 *     durable, and every request fails with EIO until power on;
 *   - cut-after-flushes and cut-after-writes fire from the image's flush
 *     and writes; a discard after a lost write keeps the lost write
 *     overwritten;
 *   - a bad sector planted by attribute fails a read with EIO, is listed
 *     in the refused I/Os as a media error (EIO) with the requester, and a
 *     write heals it; the list survives a close and an open;
 *   - a state made by the first attribute on an image that had none works
 *     at once (power off refuses the next request);
 *   - an image closed with writes in its volatile cache keeps them, and
 *     one whose daemon died (no close) keeps them at the next open, which
 *     says how many;
 *   - a stats reset zeroes the failure counters; a damaged NAME.disk
 *     refuses the image, naming the file.
 */
#include <sys/wait.h>

#include "fixtures/image_fixture.h"

#include "fail/fail.h"
#include "stats/recent.h"

#define SZ (4 * MiB)
#define BSZ (1 * MiB)

static struct sfs_sidecar sc_keys(const char *extra)
{
	char json[512], err[512] = "";
	struct sfs_sidecar sc;

	snprintf(json, sizeof(json), "{\"size\": \"4M\", \"sector\": \"512e\", \"block_size\": \"1M\"%s%s}",
		 extra[0] ? ", " : "", extra);
	cr_assert_eq(sfs_sidecar_parse(json, strlen(json), "disk.json", &sc, err, sizeof(err)), 0, "%s", err);
	return sc;
}

static struct sfs_image *open_keys(const char *extra)
{
	struct sfs_sidecar sc = sc_keys(extra);

	return open_as(NAME, &sc, true);
}

static int attr(struct sfs_image *im, const char *key, const char *v)
{
	char err[512] = "";
	int rc = sfs_image_fail_attr_set(im, key, v, strlen(v), err, sizeof(err));

	if (rc < 0)
		cr_log_info("%s=%s: %s", key, v, err);
	return rc;
}

static char *attr_get(struct sfs_image *im, const char *key)
{
	char *v = NULL;
	size_t n;

	cr_assert_eq(sfs_image_fail_attr_get(im, key, &v, &n), 0, "%s", key);
	return v;
}

static void expect_attr(struct sfs_image *im, const char *key, const char *want)
{
	char *v = attr_get(im, key);

	cr_expect_str_eq(v, want, "%s", key);
	free(v);
}

static void wr_fill(struct sfs_image *im, uint64_t off, size_t len, int v)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	memset(buf, v, len);
	cr_assert_eq(sfs_image_write(im, buf, len, off), (ssize_t)len, "write at %llu", (unsigned long long)off);
	free(buf);
}

/* Is every byte of [off, off+len) v?  The read's error, else 0 (1 when a byte differs). */
static int rd_is(struct sfs_image *im, uint64_t off, size_t len, int v)
{
	unsigned char *buf = malloc(len);
	ssize_t n;
	int rc = 0;

	cr_assert_not_null(buf);
	n = sfs_image_read(im, buf, len, off);
	if (n < 0)
		rc = (int)n;
	for (size_t i = 0; rc == 0 && i < len; i++)
		if (buf[i] != v)
			rc = 1;
	free(buf);
	return rc;
}

Test(image, no_keys_no_state)
{
	struct sfs_sidecar sc = sc_keys("");
	struct sfs_image *im = open_as(NAME, &sc, true);

	wr_fill(im, 0, 4096, 1);
	cr_assert_eq(sfs_image_flush(im), 0);
	wr_fill(im, 8192, 4096, 2);
	cr_expect(!sfs_image_has_failures(im));
	expect_attr(im, "power", "on");
	expect_attr(im, "power_seed", "0");
	expect_attr(im, "power_cut_policy", "lose-all");
	expect_attr(im, "bad_sectors", "");
	expect_attr(im, "atomic_write_unit", "4096");
	cr_expect(!tmp_exists(ts.statefd, NAME ".disk"));
	cr_expect(!tmp_exists(ts.statefd, NAME ".undo"));
	cr_assert_eq(sfs_image_close(im), 0);
	cr_expect(!tmp_exists(ts.statefd, NAME ".disk"));
	cr_expect(!tmp_exists(ts.statefd, NAME ".undo"));
	im = open_as(NAME, &sc, true);
	cr_expect(!sfs_image_has_failures(im));
	sfs_image_close(im);
}

Test(image, volatile_cut_rolls_back_through_the_map)
{
	struct sfs_image *im = open_keys("\"write_cache\": \"volatile\"");

	cr_assert(sfs_image_has_failures(im));
	wr_fill(im, 0, 4096, 1);
	cr_assert_eq(sfs_image_flush(im), 0);
	wr_fill(im, 0, 4096, 2);            /* overwrites the flushed one: lost */
	wr_fill(im, 2 * BSZ, 8192, 3);      /* first write of block 2: lost */
	cr_assert_eq(attr(im, "power", "off"), 0);
	expect_attr(im, "power", "off");
	cr_expect_eq(rd_is(im, 0, 4096, 1), -EIO, "a read with the power off");
	cr_expect_eq(sfs_image_write(im, "x", 0, 0), 0);
	cr_expect_eq(sfs_image_flush(im), -EIO);
	cr_expect_eq(sfs_image_discard(im, 0, 4096), -EIO);
	cr_expect_eq(sfs_image_allocate(im, 0, 4096), -EIO);
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 0, 4096, 1), 0, "the flushed write is back");
	cr_expect_eq(rd_is(im, 2 * BSZ, 8192, 0), 0, "the lost first write reads zeros");
	cr_assert_eq(sfs_image_close(im), 0);
}

Test(image, fua_write_survives_alone)
{
	struct sfs_image *im = open_keys("\"write_cache\": \"volatile\"");

	wr_fill(im, 0, 4096, 1);            /* unflushed */
	sfs_image_fua_next(true);
	wr_fill(im, 4096, 4096, 2);
	sfs_image_fua_next(false);
	cr_assert_eq(sfs_image_sync(im), 0);
	cr_assert_eq(attr(im, "power", "off"), 0);
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 0, 4096, 0), 0, "the write before the FUA one was made durable");
	cr_expect_eq(rd_is(im, 4096, 4096, 2), 0, "the FUA write was lost");
	sfs_image_close(im);
}

Test(image, triggers_fire_from_flush_and_writes)
{
	struct sfs_image *im = open_keys("\"write_cache\": \"volatile\"");
	unsigned char b[4096];

	memset(b, 9, sizeof(b));
	cr_assert_eq(attr(im, "power", "cut-after-flushes:2"), 0);
	wr_fill(im, 0, 4096, 1);
	cr_assert_eq(sfs_image_flush(im), 0);
	wr_fill(im, 4096, 4096, 2);
	cr_assert_eq(sfs_image_flush(im), 0, "the flush that fires the cut succeeds");
	expect_attr(im, "power", "off");
	cr_expect_eq(sfs_image_write(im, b, 4096, 8192), -EIO);
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 4096, 4096, 2), 0);

	cr_assert_eq(attr(im, "power", "cut-after-writes:2"), 0);
	wr_fill(im, 8192, 4096, 3);
	cr_assert_eq(sfs_image_discard(im, 8192, 4096), 0);   /* not a write: not counted */
	wr_fill(im, 16384, 4096, 4);
	expect_attr(im, "power", "off");
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 8192, 4096, 0), 0, "the discard after the lost write stays");
	cr_expect_eq(rd_is(im, 16384, 4096, 0), 0, "the second write is lost");
	sfs_image_close(im);
}

Test(image, bad_sector_read_is_a_media_error_and_a_write_heals)
{
	struct sfs_sidecar sc = sc_keys("");
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_stats_recent *rec = malloc(sizeof(*rec));
	struct sfs_fail_status st;
	struct sfs_fail_cutinfo last;

	cr_assert_not_null(rec);
	wr_fill(im, 0, 8192, 5);
	cr_assert(!sfs_image_has_failures(im));
	cr_assert_eq(attr(im, "bad_sectors", "+9"), 0);
	cr_assert(sfs_image_has_failures(im));
	expect_attr(im, "bad_sectors", "9-9");
	sfs_requester_set(getpid());
	cr_expect_eq(rd_is(im, 4096, 512, 5), 0, "the sector before it reads");
	cr_expect_eq(rd_is(im, 4096, 1024, 5), -EIO);
	sfs_image_stats_recent(im, rec);
	cr_assert_eq(rec->nrefused, 1);
	cr_expect_eq(rec->refused[0].err, EIO);
	cr_expect_eq(rec->refused[0].op, SFS_OP_READ);
	cr_expect_eq(rec->refused[0].off, 4096);
	cr_expect_eq(rec->refused[0].pid, getpid());
	cr_assert_eq(sfs_image_fail_status(im, &st, &last), 0);
	cr_expect_eq(st.cnt.media_errors, 1);
	cr_expect_eq(st.cnt.bad_sectors, 1);
	sfs_wc_report_free(&last.rep);
	cr_assert_eq(sfs_image_close(im), 0);
	cr_expect(tmp_exists(ts.statefd, NAME ".disk"));

	im = open_as(NAME, &sc, true);
	cr_assert(sfs_image_has_failures(im), "the list is found at open");
	cr_expect_eq(rd_is(im, 9 * 512, 512, 5), -EIO);
	wr_fill(im, 9 * 512, 512, 6);
	cr_expect_eq(rd_is(im, 9 * 512, 512, 6), 0, "the write healed it");
	expect_attr(im, "bad_sectors", "");
	cr_assert_eq(sfs_image_stats_command(im, "reset", 5), 0);
	cr_assert_eq(sfs_image_fail_status(im, &st, &last), 0);
	cr_expect_eq(st.cnt.media_errors, 0, "a reset zeroes the failure counters");
	sfs_wc_report_free(&last.rep);
	sfs_image_close(im);
	cr_expect(!tmp_exists(ts.statefd, NAME ".disk"), "a healed disk that is on has no file");
	free(rec);
}

Test(image, state_made_late_refuses_at_once)
{
	struct sfs_sidecar sc = sc_keys("");
	struct sfs_image *im = open_as(NAME, &sc, true);

	wr_fill(im, 0, 4096, 1);
	cr_assert_eq(attr(im, "power", "off"), 0);
	cr_expect_eq(rd_is(im, 0, 4096, 1), -EIO);
	cr_expect_eq(attr(im, "atomic_write_unit", "512"), -EPERM);
	cr_expect_eq(attr(im, "power", "sideways"), -EINVAL);
	sfs_image_close(im);
	im = open_as(NAME, &sc, true);
	expect_attr(im, "power", "off");
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 0, 4096, 1), 0, "a cut without a cache loses nothing");
	sfs_image_close(im);
}

Test(image, close_and_crash_keep_the_cache)
{
	struct sfs_sidecar sc = sc_keys("\"write_cache\": \"volatile\"");
	struct sfs_image *im = open_as(NAME, &sc, true);
	struct sfs_fail_status st;
	struct sfs_fail_cutinfo last;
	pid_t pid;
	int status;

	wr_fill(im, 0, 4096, 1);
	cr_assert_eq(sfs_image_close(im), 0);
	cr_expect(!tmp_exists(ts.statefd, NAME ".undo"), "a clean close removes the log");
	im = open_as(NAME, &sc, true);
	cr_expect_eq(rd_is(im, 0, 4096, 1), 0);
	sfs_image_close(im);

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {                     /* a daemon that dies with three writes unflushed */
		im = open_as(NAME, &sc, true);
		wr_fill(im, 4096, 4096, 2);
		wr_fill(im, 8192, 4096, 3);
		wr_fill(im, 0, 4096, 4);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(tmp_exists(ts.statefd, NAME ".undo"));
	logcap_clear(&cap);
	im = open_as(NAME, &sc, true);
	cr_assert_eq(sfs_image_fail_status(im, &st, &last), 0);
	cr_expect_eq(st.cnt.kept_at_start, 3);
	sfs_wc_report_free(&last.rep);
	cr_expect_eq(logcap_lines(&cap, "3 unflushed writes", "all are kept", NULL), 1, "%s", cap.buf);
	cr_assert_eq(attr(im, "power", "off"), 0);     /* nothing in the cache now: nothing lost */
	cr_assert_eq(attr(im, "power", "on"), 0);
	cr_expect_eq(rd_is(im, 0, 4096, 4), 0);
	cr_expect_eq(rd_is(im, 4096, 4096, 2), 0);
	cr_expect_eq(rd_is(im, 8192, 4096, 3), 0);
	sfs_image_close(im);
}

Test(image, damaged_disk_state_refuses_the_image)
{
	struct sfs_sidecar sc = sc_keys("");
	struct sfs_image *im = NULL;
	char err[512] = "";

	im = open_as(NAME, &sc, true);
	sfs_image_close(im);
	tmp_write_file(ts.statefd, NAME ".disk", "sectorfs-disk 1\npower sideways\n", 31);
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, SFS_IMAGE_STATS, &lg, &im, err, sizeof(err)),
		     -EUCLEAN);
	cr_expect_not_null(strstr(err, NAME ".disk"), "%s", err);
}

Test(image, new_image_drops_stale_state)
{
	struct sfs_sidecar sc = sc_keys("");
	struct sfs_image *im;

	tmp_write_file(ts.statefd, NAME ".disk", "left by another image", 21);
	im = open_as(NAME, &sc, true);       /* no backing file yet: a new image */
	cr_expect(!sfs_image_has_failures(im));
	cr_expect(!tmp_exists(ts.statefd, NAME ".disk"));
	sfs_image_close(im);
}

Test(image, planted_state_files_refuse_without_hanging, .timeout = 10)
{
	struct sfs_sidecar sc = sc_keys("\"write_cache\": \"volatile\"");
	struct sfs_image *im = NULL;
	char err[512] = "";

	cr_assert_eq(mkdirat(ts.statefd, NAME ".disk", 0700), 0);
	cr_expect_lt(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, SFS_IMAGE_STATS, &lg, &im, err, sizeof(err)), 0,
		     "a new image over a directory named " NAME ".disk");
	cr_expect_not_null(strstr(err, ".sectorfs/" NAME ".disk, left by another image"), "%s", err);
	cr_assert_eq(unlinkat(ts.statefd, NAME ".disk", AT_REMOVEDIR), 0);
	im = open_as(NAME, &sc, true);
	sfs_image_close(im);
	cr_assert_eq(mkfifoat(ts.statefd, NAME ".disk", 0600), 0);
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, SFS_IMAGE_STATS, &lg, &im, err, sizeof(err)), -EPERM,
		     "a FIFO as " NAME ".disk");
	cr_expect_not_null(strstr(err, NAME ".disk"), "%s", err);
	cr_assert_eq(unlinkat(ts.statefd, NAME ".disk", 0), 0);
	cr_assert_eq(symlinkat("/etc/passwd", ts.statefd, NAME ".undo"), 0);
	cr_expect_eq(sfs_image_open(ts.fd, ts.statefd, NAME, &sc, SFS_IMAGE_STATS, &lg, &im, err, sizeof(err)), -EPERM,
		     "a symbolic link as " NAME ".undo");
	cr_expect_not_null(strstr(err, NAME ".undo"), "%s", err);
}
