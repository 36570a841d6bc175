/* SPDX-License-Identifier: MIT */
/*
 * test_wcache.c - the volatile write cache (core/fail/wcache.c) and its undo log
 * (core/fail/undolog.c), on a disk in memory (wc_fixture.h) and a log in a
 * temporary state directory.
 *
 * Proves: a volatile write saves its range's old contents in the log (the entry holds exactly them); a flush
 * drops what was written before its mark and nothing after, and empties
 * the file; more than write_cache_size unflushed destages the oldest
 * writes first (destaged_bytes); a write larger than the cache, a FUA
 * write and a discard are durable (no saved data), and not even logged
 * when nothing is cached; a backing read that fails fails the write and
 * logs nothing; a log left by a crash is loaded whole and a torn last
 * entry, or one whose range is not whole sectors, is not counted; keep
 * syncs the backing and empties the log; a log whose header is damaged,
 * a FIFO and a symlink are refused naming the file; the log stays within about twice the cache under destaging, and
 * what it holds after compaction still reads back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fixtures/tmpstore.h"
#include "fail/undolog.h"
#include "fixtures/wc_fixture.h"
#include "fail/wcache.h"

#define LOG "d.undo"
#define DISK (1u << 20)

static struct sfs_wc_config cfg(uint32_t lss, uint32_t pss, uint64_t size)
{
	struct sfs_wc_config c;

	sfs_wc_config_default(&c, lss, pss);
	c.mode = SFS_WC_VOLATILE;
	c.size = size;
	return c;
}

/* The cache most tests use: 512n, 1 MiB. */
static struct sfs_wc_config dflt;

static void setup(void)
{
	wc_setup("wcache", DISK);
	dflt = cfg(512, 512, 1 << 20);
}

TestSuite(wcache, .init = setup, .fini = wc_teardown, .timeout = 60);

static struct sfs_wc *open_wc(const struct sfs_wc_config *c)
{
	struct sfs_wc_backing b = md_backing(&md);
	struct sfs_wc *wc = NULL;
	char err[256] = "";

	cr_assert_eq(sfs_wc_open(c, &b, ts.statefd, LOG, &wc, err, sizeof(err)), 0, "open: %s", err);
	return wc;
}

/* The error of an open of the log that must fail (its message in err); no
 * cache is made. */
static int open_refused(char *err, size_t errlen)
{
	struct sfs_wc_backing b = md_backing(&md);
	struct sfs_wc *wc = NULL;
	int rc = sfs_wc_open(&dflt, &b, ts.statefd, LOG, &wc, err, errlen);

	cr_expect_null(wc);
	if (wc)
		sfs_wc_close(wc);
	return rc;
}

/* A write of value v through the cache onto the disk. */
static void wr(struct sfs_wc *wc, uint64_t off, uint64_t len, int v, unsigned flags)
{
	cr_assert_eq(sfs_wc_write(wc, off, len, flags), 0, "write %llu+%llu", (unsigned long long)off,
		     (unsigned long long)len);
	memset(md.data + off, v, len);
}

static struct sfs_wc_state state(struct sfs_wc *wc)
{
	struct sfs_wc_state st;

	sfs_wc_state(wc, &st);
	return st;
}

/* Expects the cache to hold writes unflushed writes of bytes bytes. */
static void expect_cached(struct sfs_wc *wc, uint64_t writes, uint64_t bytes)
{
	struct sfs_wc_state st = state(wc);

	cr_expect_eq(st.writes, writes, "%llu writes cached, want %llu", (unsigned long long)st.writes,
		     (unsigned long long)writes);
	cr_expect_eq(st.cached_bytes, bytes, "%llu bytes cached, want %llu", (unsigned long long)st.cached_bytes,
		     (unsigned long long)bytes);
}

/* Opens the log with config c, expects n entries loaded from it, closes it. */
static void expect_loaded(const struct sfs_wc_config *c, uint64_t n, const char *what)
{
	struct sfs_wc *wc = open_wc(c);

	cr_expect_eq(state(wc).loaded, n, "%s: %llu entries loaded, want %llu", what,
		     (unsigned long long)state(wc).loaded, (unsigned long long)n);
	sfs_wc_close(wc);
}

/* Writes byte x at off in the log, behind the cache's back. */
static void poke_log(off_t off, unsigned char x)
{
	int fd = openat(ts.statefd, LOG, O_RDWR);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, &x, 1, off), 1);
	close(fd);
}

static off_t log_size(void)
{
	struct stat st;

	cr_assert_eq(fstatat(ts.statefd, LOG, &st, 0), 0);
	return st.st_size;
}

/* ---- the keys ---- */

/* ---- writes, flushes, destaging ---- */

Test(wcache, a_write_saves_the_old_contents)
{
	struct sfs_wc *wc = open_wc(&dflt);
	struct sfs_undo_hdr h;
	struct sfs_undo_rec r = { .kind = SFS_UNDO_WRITE, .seq = 1, .off = 4096, .len = 1024,
				  .at = SFS_UNDO_HDR_LEN + SFS_UNDO_HEAD_LEN + 4096 };
	unsigned char buf[1024];
	int fd;

	wr(wc, 4096, 4096, 0x11, 0);
	wr(wc, 4096, 1024, 0x22, 0);
	expect_cached(wc, 2, 5120);
	cr_expect_eq(log_size(), SFS_UNDO_HDR_LEN + 2 * SFS_UNDO_HEAD_LEN + 4096 + 1024);
	/* the second entry holds what the first wrote */
	fd = openat(ts.statefd, LOG, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(sfs_undo_read_hdr(fd, &h), 0);
	cr_expect_eq(h.g.lss, 512);
	cr_assert_eq(sfs_undo_read(fd, &r, 4096, buf, sizeof(buf)), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0x11, "byte %zu", i);
	cr_expect_eq(sfs_undo_read(fd, &r, 4096 + 512, buf, 1024), -EINVAL, "past the entry's range");
	close(fd);
	sfs_wc_close(wc);
}

Test(wcache, flush_drops_what_came_before_its_mark)
{
	struct sfs_wc *wc = open_wc(&dflt);
	uint64_t mark;

	wr(wc, 0, 4096, 1, 0);
	wr(wc, 8192, 4096, 2, 0);
	mark = sfs_wc_flush_mark(wc);
	wr(wc, 16384, 512, 3, 0);     /* during the flush: not covered by it */
	cr_assert_eq(sfs_wc_flushed(wc, mark), 0);
	expect_cached(wc, 1, 512);
	cr_expect_eq(state(wc).destaged_bytes, 0, "a flush is not destaging");
	cr_assert_eq(sfs_wc_flushed(wc, sfs_wc_flush_mark(wc)), 0);
	cr_expect_eq(state(wc).entries, 0);
	cr_expect_eq(log_size(), SFS_UNDO_HDR_LEN, "an empty log is cut back to its header");
	sfs_wc_close(wc);
}

Test(wcache, destages_the_oldest_past_the_size)
{
	struct sfs_wc_config c = cfg(512, 4096, 8192);
	struct sfs_wc *wc = open_wc(&c);

	wr(wc, 0, 4096, 1, 0);
	wr(wc, 4096, 4096, 2, 0);
	cr_expect_eq(state(wc).destaged_bytes, 0);
	wr(wc, 8192, 4096, 3, 0);
	cr_expect_eq(state(wc).destaged_bytes, 4096);
	expect_cached(wc, 2, 8192);
	wr(wc, 12288, 8192, 4, 0);   /* exactly the cache: both others go */
	cr_expect_eq(state(wc).destaged_bytes, 12288);
	cr_expect_eq(state(wc).writes, 1);
	sfs_wc_close(wc);
}

Test(wcache, durable_writes_save_nothing)
{
	struct sfs_wc_config c = cfg(512, 4096, 8192);
	struct sfs_wc *wc = open_wc(&c);

	wr(wc, 0, 4096, 1, SFS_WC_FUA);
	wr(wc, 0, 4096, 1, SFS_WC_ZERO);
	wr(wc, 0, 16384, 1, 0);        /* larger than the cache */
	cr_expect_eq(state(wc).entries, 0, "nothing cached: durable writes are not even logged");
	cr_expect_eq(md.reads, 0, "and read nothing");
	cr_expect_eq(state(wc).next_seq, 3, "but are numbered");
	wr(wc, 0, 512, 2, 0);
	wr(wc, 0, 4096, 3, SFS_WC_FUA);
	wr(wc, 4096, 16384, 4, 0);
	cr_expect_eq(state(wc).entries, 3);
	expect_cached(wc, 1, 512);
	cr_expect_eq(md.reads, 1, "only the volatile write read its old contents");
	cr_expect_eq(log_size(), SFS_UNDO_HDR_LEN + 3 * SFS_UNDO_HEAD_LEN + 512);
	sfs_wc_close(wc);
}

Test(wcache, a_failed_read_fails_the_write)
{
	struct sfs_wc *wc = open_wc(&dflt);

	md.fail_read = 1;
	cr_expect_eq(sfs_wc_write(wc, 0, 512, 0), -EIO);
	cr_expect_eq(state(wc).entries, 0);
	md.fail_read = 0;
	wr(wc, 0, 512, 1, 0);
	cr_expect_eq(state(wc).entries, 1);
	cr_expect_eq(log_size(), SFS_UNDO_HDR_LEN + SFS_UNDO_HEAD_LEN + 512, "the failed one left nothing");
	sfs_wc_close(wc);
}

/* ---- what a crash leaves ---- */

Test(wcache, a_crash_log_is_loaded_and_kept)
{
	struct sfs_wc *wc = open_wc(&dflt);

	wr(wc, 0, 4096, 1, 0);
	wr(wc, 4096, 512, 2, 0);
	wr(wc, 0, 512, 3, SFS_WC_FUA);
	wr(wc, 8192, 1024, 4, 0);
	sfs_wc_close(wc);                       /* as a crash leaves it: nothing settled */
	wc = open_wc(&dflt);
	cr_expect_eq(state(wc).loaded, 4);
	expect_cached(wc, 3, 4096 + 512 + 1024);
	cr_assert_eq(sfs_wc_keep(wc), 0);
	cr_expect_eq(md.syncs, 1, "keeping syncs the backing");
	cr_expect_eq(state(wc).entries, 0);
	cr_expect_eq(state(wc).loaded, 0);
	cr_expect_eq(log_size(), SFS_UNDO_HDR_LEN);
	sfs_wc_close(wc);
	expect_loaded(&dflt, 0, "kept once, not again");
}

Test(wcache, a_torn_last_entry_is_not_counted)
{
	struct sfs_wc *wc = open_wc(&dflt);
	off_t full;

	wr(wc, 0, 4096, 1, 0);
	wr(wc, 4096, 4096, 2, 0);
	sfs_wc_close(wc);
	full = log_size();
	for (off_t cut = full - 1; cut > full - 4096 - (off_t)SFS_UNDO_HEAD_LEN; cut -= 997) {
		int fd = openat(ts.statefd, LOG, O_RDWR);
		char what[64];

		cr_assert_eq(ftruncate(fd, cut), 0);
		close(fd);
		snprintf(what, sizeof(what), "log cut at %lld of %lld", (long long)cut, (long long)full);
		expect_loaded(&dflt, 1, what);
	}
	/* a flipped byte in the first entry's data ends the log before it */
	poke_log(SFS_UNDO_HDR_LEN + SFS_UNDO_HEAD_LEN + 100, 0x5a);
	expect_loaded(&dflt, 0, "a flipped byte");
}

Test(wcache, a_damaged_header_is_refused)
{
	struct sfs_wc *wc = open_wc(&dflt);
	char err[256] = "";

	wr(wc, 0, 512, 1, 0);
	sfs_wc_close(wc);
	poke_log(40, 'X');
	cr_expect_eq(open_refused(err, sizeof(err)), -EUCLEAN);
	cr_expect_str_eq(err, LOG ": not an undo log (its header is damaged)");
}

Test(wcache, a_fifo_or_symlink_is_refused)
{
	char err[256] = "";

	cr_assert_eq(mkfifoat(ts.statefd, LOG, 0600), 0);
	cr_expect_eq(open_refused(err, sizeof(err)), -EPERM);
	cr_expect_str_eq(err, LOG ": not a regular file of one link");
	cr_assert_eq(unlinkat(ts.statefd, LOG, 0), 0);
	cr_assert_eq(symlinkat("/etc/passwd", ts.statefd, LOG), 0);
	cr_expect_eq(open_refused(err, sizeof(err)), -EPERM);
}

/* ---- the log's size ---- */

Test(wcache, the_log_stays_bounded)
{
	struct sfs_wc_config c = cfg(512, 512, 64 << 10);
	struct sfs_wc *wc = open_wc(&c);
	struct sfs_undo_hdr h;
	struct sfs_undo_rec r;
	unsigned char buf[4096];
	off_t max = 0;
	int fd;

	/* 4096 writes of 4 KiB, never flushed: 16 MiB through a 64 KiB cache */
	for (int i = 0; i < 4096; i++) {
		wr(wc, (uint64_t)(i % 200) * 4096, 4096, i & 0xff, 0);
		if (log_size() > max)
			max = log_size();
	}
	cr_expect_leq(max, 2 * (1 << 20) + 2 * (64 << 10), "the log grew to %lld", (long long)max);
	cr_expect_eq(state(wc).writes, 16);
	sfs_wc_close(wc);
	/* what it holds is whole: the newest entry saved what write 4094 left at its place */
	wc = open_wc(&c);
	cr_expect_eq(state(wc).loaded, 16);
	sfs_wc_close(wc);
	fd = openat(ts.statefd, LOG, O_RDONLY);
	cr_assert_eq(sfs_undo_read_hdr(fd, &h), 0);
	r = (struct sfs_undo_rec){ .kind = SFS_UNDO_WRITE, .seq = 4095, .off = (4095 % 200) * 4096ull, .len = 4096,
				   .at = h.live + 15 * (SFS_UNDO_HEAD_LEN + 4096) };
	cr_assert_eq(sfs_undo_read(fd, &r, r.off, buf, sizeof(buf)), 0);
	cr_expect_eq(buf[0], (4095 - 200) & 0xff, "the old contents of the last write: write %d's", 4095 - 200);
	close(fd);
}

/* An entry whose range is not whole logical sectors is no entry of this log, even with a good
 * checksum: the log ends before it. */
Test(wcache, a_misaligned_entry_ends_the_log)
{
	struct sfs_wc *wc = open_wc(&dflt);
	struct sfs_undo_hdr h;
	struct sfs_undo_rec r;
	char data[1024];
	int fd;

	wr(wc, 0, 512, 1, 0);
	sfs_wc_close(wc);
	fd = openat(ts.statefd, LOG, O_RDWR);
	cr_assert_eq(sfs_undo_read_hdr(fd, &h), 0);
	memset(data, 7, sizeof(data));
	r = (struct sfs_undo_rec){ .kind = SFS_UNDO_WRITE, .seq = 1, .off = 100, .len = 1000,
				   .at = SFS_UNDO_HDR_LEN + SFS_UNDO_HEAD_LEN + 512 };
	cr_assert_eq(sfs_undo_append(fd, h.gen, &r, data), 0);
	close(fd);
	expect_loaded(&dflt, 1, "the aligned entry only");
}
