/* SPDX-License-Identifier: MIT */
/*
 * test_steps.c - every multi-file operation of the store cut at every step.
 *
 * Create, grow, rename (onto a free name and onto an image), unlink, and
 * the tools' make (a raw file copied in, eagerzeroedthick zeroed) and
 * inflate call sfs_step() between their steps (core/util/step.h).  For each operation
 * and each step n this test
 *   - fails the operation after step n (the hook returns -EIO): the call
 *     returns -EIO and the store is as before the operation, or as after
 *     it when step n is past the operation's commit point, both at once
 *     and after the store is opened again;
 *   - stops the operation after step n in a forked child that then exits
 *     at once, as a crash would: the next open of the store leaves the
 *     name as before or as after (which one is fixed by the step), logs
 *     what it repaired (the plan of that recovery, which sectorfs-img
 *     check shows before it, holds nothing it cannot do), and leaves the
 *     store clean: no temporary file, no
 *     intent record, every sidecar saying its map's size, every backing
 *     file at least that long, a failed grow's extension and reservation
 *     given back.
 * Grows, makes and inflates run for each provisioning mode (inflate for
 * those it converts).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "map/map.h"
#include "image/image.h"
#include "store/recover.h"
#include "contract/sidecar.h"
#include "util/step_test.h"
#include "store/store.h"
#include "fixtures/store_fixture.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define SIZE MiB
#define GROWN (2 * MiB)

static void setup(void)
{
	store_setup("steps", false, "test_steps");
}

TestSuite(steps, .init = setup, .fini = store_teardown, .timeout = 60);

/* ---- the hook ---- */

enum mode { FAIL, CRASH };
static const char *hook_op;
static int hook_n;
static enum mode hook_mode;

static int hook(const char *op, int n)
{
	if (strcmp(op, hook_op) != 0 || n != hook_n)
		return 0;
	if (hook_mode == CRASH)
		_exit(0);
	return -EIO;
}

/* ---- the store ---- */

static const char *prov_json(enum sfs_prov p)
{
	return p == SFS_PROV_THIN ? "thin" : p == SFS_PROV_ZEROEDTHICK ? "zeroedthick" : "eagerzeroedthick";
}

/* Images a (0x61) and b (0x62), 1 MiB 4kn with 64K blocks, written at 0 and 512K, flushed. */
static void make_images(enum sfs_prov prov)
{
	char json[256];
	struct sfs_store *s;

	snprintf(json, sizeof(json), "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\", "
		 "\"provisioning\": \"%s\"}", prov_json(prov));
	tmp_write_sidecar(ts.fd, "a", json);
	tmp_write_sidecar(ts.fd, "b", json);
	s = open_store();
	for (int i = 0; i < 2; i++) {
		struct sfs_image *im = get(s, i ? "b" : "a");

		put_bytes(im, 0, 0x61 + i);
		put_bytes(im, 512 * KiB, 0x61 + i);
		cr_assert_eq(sfs_image_flush(im), 0);
		sfs_store_put(s, im);
	}
	cr_assert_eq(sfs_store_close(s), 0);
}

struct names {
	char buf[256];
};

static int collect(void *ctx, const char *name)
{
	struct names *n = ctx;

	snprintf(n->buf + strlen(n->buf), sizeof(n->buf) - strlen(n->buf), "%s%s", n->buf[0] ? " " : "", name);
	return 0;
}

static void expect_listing(struct sfs_store *s, const char *want, const char *what)
{
	struct names n = { "" };

	sfs_store_rescan(s);
	cr_assert_eq(sfs_store_list(s, collect, &n), 0);
	cr_expect_str_eq(n.buf, want, "%s: listing '%s', expected '%s'", what, n.buf, want);
}

static void expect_image(struct sfs_store *s, const char *name, uint64_t size, int v, const char *what)
{
	struct sfs_image *im = NULL;

	cr_assert_eq(sfs_store_get(s, name, &im), 0, "%s: get %s", what, name);
	cr_expect_eq(sfs_image_geom(im).size, size, "%s: %s is %llu bytes, expected %llu", what, name,
		     (unsigned long long)sfs_image_geom(im).size, (unsigned long long)size);
	if (v >= 0) {
		expect_bytes(im, 0, v, what);
		expect_bytes(im, 512 * KiB, v, what);
		expect_bytes(im, 64 * KiB, 0, what);
		if (size > SIZE)
			expect_bytes(im, SIZE + 64 * KiB, 0, what);
	}
	sfs_store_put(s, im);
}

static bool state_has_suffix(const char *suffix, char *found, size_t len)
{
	int fd = openat(ts.fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool hit = false;

	cr_assert_not_null(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name), k = strlen(suffix);

		if ((n >= k && strcmp(de->d_name + n - k, suffix) == 0) || strncmp(de->d_name, ".tmp.", 5) == 0 ||
		    strcmp(de->d_name, "rename") == 0) {
			snprintf(found, len, "%s", de->d_name);
			hit = true;
		}
	}
	closedir(d);
	return hit;
}

/* The store on disk, not open: no leftovers, each sidecar says its map's size, backing files
 * long enough (and no longer: a failed grow gives its extension back). */
static void expect_clean(const char *names, const char *what)
{
	char found[300], copy[256], *save = NULL;
	int sfd = openat(ts.fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert_geq(sfd, 0);
	cr_expect(!state_has_suffix(".grow", found, sizeof(found)), "%s: %s left", what, found);
	cr_expect(!state_has_suffix(".unlink", found, sizeof(found)), "%s: %s left", what, found);
	cr_expect(!state_has_suffix(".create", found, sizeof(found)), "%s: %s left", what, found);
	cr_expect(!state_has_suffix(".inflate", found, sizeof(found)), "%s: %s left", what, found);
	cr_expect(!state_has_suffix(".rename", found, sizeof(found)), "%s: %s left", what, found);
	cr_expect_eq(count_tmp(ts.fd), 0, "%s: temporary file in the store", what);
	snprintf(copy, sizeof(copy), "%s", names);
	for (char *n = strtok_r(copy, " ", &save); n; n = strtok_r(NULL, " ", &save)) {
		char mapname[64], err[512] = "";
		struct sfs_sidecar sc;
		struct sfs_map *m;
		struct stat st;

		snprintf(mapname, sizeof(mapname), "%s.json", n);
		cr_assert_eq(sfs_sidecar_load(ts.fd, mapname, &sc, err, sizeof(err)), 0, "%s: %s", what, err);
		snprintf(mapname, sizeof(mapname), "%s.map", n);
		cr_assert_eq(sfs_map_open(sfd, mapname, SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), 0, "%s: %s", what, err);
		cr_expect_eq(sfs_map_info(m)->geom.size, sc.size, "%s: %s: map says %llu, sidecar %llu", what, n,
			     (unsigned long long)sfs_map_info(m)->geom.size, (unsigned long long)sc.size);
		st = tmp_stat(ts.fd, n);
		cr_expect_eq((uint64_t)st.st_size, sc.size, "%s: %s: backing file %lld bytes, disk %llu", what, n,
			     (long long)st.st_size, (unsigned long long)sc.size);
		if (sfs_map_info(m)->prov != SFS_PROV_THIN)
			cr_expect_leq((uint64_t)st.st_blocks * 512, sc.size + 64 * KiB,
				      "%s: %s: %llu bytes reserved for a %llu-byte disk", what, n,
				      (unsigned long long)st.st_blocks * 512, (unsigned long long)sc.size);
		sfs_map_close(m);
	}
	/* and the files of the names that are gone went with them */
	for (const char *n = "a\0b\0c\0"; *n; n += 2) {
		char f[16];

		if (strstr(names, n))
			continue;
		snprintf(f, sizeof(f), "%s.map", n);
		cr_expect(!tmp_exists(ts.fd, n), "%s: backing file %s left", what, n);
		cr_expect(!tmp_exists(sfd, f), "%s: map %s left", what, f);
		snprintf(f, sizeof(f), "%s.json", n);
		cr_expect(!tmp_exists(ts.fd, f), "%s: sidecar %s left", what, f);
	}
	close(sfd);
}

/* ---- the operations ---- */

struct op {
	const char *name;
	int steps;
	int commit_fail;      /* first step whose failure leaves the "after" state */
	int commit_crash;     /* first step whose crash leaves the "after" state */
	int (*run)(struct sfs_store *s);
	const char *before, *after;   /* listings */
	void (*expect)(struct sfs_store *s, bool after, const char *what);
};

static int run_create(struct sfs_store *s)
{
	struct sfs_image *im;
	int rc = sfs_store_create(s, "c", &im);

	if (rc == 0)
		sfs_store_put(s, im);
	return rc;
}

static void expect_create(struct sfs_store *s, bool after, const char *what)
{
	expect_image(s, "a", SIZE, 0x61, what);
	if (after)
		expect_image(s, "c", 0, -1, what);
	else
		cr_expect(!tmp_exists(ts.fd, "c") && !tmp_exists(ts.fd, "c.json"), "%s: files of c left", what);
}

static int run_grow(struct sfs_store *s)
{
	struct sfs_image *im = get(s, "a");
	int rc = sfs_store_resize(s, im, GROWN);

	sfs_store_put(s, im);
	return rc;
}

static void expect_grow(struct sfs_store *s, bool after, const char *what)
{
	expect_image(s, "a", after ? GROWN : SIZE, 0x61, what);
	expect_image(s, "b", SIZE, 0x62, what);
}

static int run_rename_free(struct sfs_store *s)
{
	return sfs_store_rename(s, "a", "c", false);
}

static void expect_rename_free(struct sfs_store *s, bool after, const char *what)
{
	expect_image(s, after ? "c" : "a", SIZE, 0x61, what);
	expect_image(s, "b", SIZE, 0x62, what);
}

static int run_rename_replace(struct sfs_store *s)
{
	return sfs_store_rename(s, "a", "b", false);
}

static void expect_rename_replace(struct sfs_store *s, bool after, const char *what)
{
	if (!after)
		expect_image(s, "a", SIZE, 0x61, what);
	expect_image(s, "b", SIZE, after ? 0x61 : 0x62, what);
}

static int run_unlink(struct sfs_store *s)
{
	return sfs_store_unlink(s, "a");
}

static void expect_unlink(struct sfs_store *s, bool after, const char *what)
{
	struct sfs_image *im;

	if (after)
		cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT, "%s: a still there", what);
	else
		expect_image(s, "a", SIZE, 0x61, what);
	expect_image(s, "b", SIZE, 0x62, what);
}

/* A growing image c (created, not yet closed) that wrote 64 KiB, its capacity 1 MiB ahead:
 * its creator closes it, which gives the room back (sfs_trim). */
static int run_trim(struct sfs_store *s)
{
	unsigned char buf[64 * KiB];
	struct sfs_image *im;
	int rc;

	cr_assert_eq(sfs_store_create(s, "c", &im), 0);
	sfs_image_set_growing(im, true);
	memset(buf, 0x63, sizeof(buf));
	cr_assert_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), 0, true), (ssize_t)sizeof(buf));
	cr_assert_eq(sfs_image_capacity(im), MiB, "capacity %llu", (unsigned long long)sfs_image_capacity(im));
	cr_assert_eq(sfs_image_flush(im), 0);
	rc = sfs_store_settle(s, im, true);
	sfs_store_put(s, im);
	return rc;
}

static void expect_trim(struct sfs_store *s, bool after, const char *what)
{
	struct sfs_image *im = NULL;

	cr_assert_eq(sfs_store_get(s, "c", &im), 0, "%s: get c", what);
	/* once its creator is gone it is a disk of fixed size: what it showed, or its capacity */
	cr_expect_eq(sfs_image_geom(im).size, after ? 64 * KiB : MiB, "%s: c is %llu bytes", what,
		     (unsigned long long)sfs_image_geom(im).size);
	expect_bytes(im, 0, 0x63, what);
	if (!after)
		expect_bytes(im, 512 * KiB, 0, what);
	sfs_store_put(s, im);
}

/* The mode of the images of the cut running now. */
static enum sfs_prov cur_prov;

/* The mode image name has: its map's, and the one it is served with. */
static void expect_prov(struct sfs_store *s, const char *name, enum sfs_prov prov, const char *what)
{
	struct sfs_image *im = get(s, name);
	const struct sfs_map_info *mi = sfs_map_info(sfs_image_map(im));

	cr_expect_eq(mi->prov, prov, "%s: %s's map says mode %d, expected %d", what, name, mi->prov, prov);
	cr_expect_eq(sfs_image_sidecar(im).prov, prov, "%s: %s served as mode %d, expected %d", what, name,
		     sfs_image_sidecar(im).prov, prov);
	if (prov == SFS_PROV_EAGERZEROEDTHICK)
		cr_expect(mi->flags & SFS_MAP_F_ZEROED, "%s: %s not recorded zeroed", what, name);
	sfs_store_put(s, im);
}

/* Image c (1 MiB 4kn, cur_prov) made from a raw file holding 0x63 at 0 and 512K. */
static int run_make(struct sfs_store *s)
{
	struct sfs_sidecar sc;
	unsigned char buf[4096];
	char err[512] = "";
	int fd = memfd_create("raw", 0), rc;

	cr_assert_geq(fd, 0);
	memset(buf, 0x63, sizeof(buf));
	cr_assert_eq(ftruncate(fd, SIZE), 0);
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 512 * KiB), (ssize_t)sizeof(buf));
	sfs_sidecar_defaults(&sc);
	sc.size = SIZE;
	sc.lss = sc.pss = 4096;
	sc.block_size = 64 * KiB;
	sc.prov = cur_prov;
	rc = sfs_store_make_image(s, "c", &sc, fd, NULL, err, sizeof(err));
	close(fd);
	return rc;
}

static void expect_make(struct sfs_store *s, bool after, const char *what)
{
	expect_image(s, "a", SIZE, 0x61, what);
	if (after) {
		expect_image(s, "c", SIZE, 0x63, what);
		expect_prov(s, "c", cur_prov, what);
	} else {
		cr_expect(!tmp_exists(ts.fd, "c") && !tmp_exists(ts.fd, "c.json"), "%s: files of c left", what);
	}
}

static int run_inflate(struct sfs_store *s)
{
	struct sfs_image *im = get(s, "a");
	char err[512] = "";
	int rc = sfs_store_inflate(s, im, NULL, err, sizeof(err));

	sfs_store_put(s, im);
	return rc;
}

static void expect_inflate(struct sfs_store *s, bool after, const char *what)
{
	expect_image(s, "a", SIZE, 0x61, what);
	expect_image(s, "b", SIZE, 0x62, what);
	expect_prov(s, "a", after ? SFS_PROV_EAGERZEROEDTHICK : cur_prov, what);
	expect_prov(s, "b", cur_prov, what);
}

static const struct op ops[] = {
	{ "trim", 3, 2, 2, run_trim, "a b c", "a b c", expect_trim },
	{ "create", 2, 99, 1, run_create, "a b", "a b c", expect_create },
	{ "grow", 4, 4, 4, run_grow, "a b", "a b", expect_grow },
	{ "rename", 2, 2, 1, run_rename_free, "a b", "b c", expect_rename_free },
	{ "rename", 2, 2, 1, run_rename_replace, "a b", "b", expect_rename_replace },
	{ "unlink", 3, 2, 2, run_unlink, "a b", "b", expect_unlink },
	{ "make", 5, 99, 5, run_make, "a b", "a b c", expect_make },
	{ "inflate", 4, 3, 3, run_inflate, "a b", "a b", expect_inflate },
};

static void no_blocked(void *ctx, const struct sfs_recover_item *p)
{
	cr_expect_neq(p->verdict, SFS_RECOVER_BLOCKED, "%s: the start could not do %s: %s", (const char *)ctx,
		      p->file, p->what);
}

/* The plan of the next start's recovery (what sectorfs-img check shows before it) has nothing
 * that start cannot do. */
static void expect_plan_applicable(const char *what)
{
	int sfd = openat(ts.fd, ".sectorfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (sfd < 0)
		return;
	cr_expect_eq(sfs_recover_plan(ts.fd, sfd, no_blocked, (void *)what), 0, "%s: plan", what);
	close(sfd);
}

static void cut(const struct op *op, int n, enum mode mode, enum sfs_prov prov)
{
	char what[128];
	struct sfs_store *s;
	bool after = n >= (mode == FAIL ? op->commit_fail : op->commit_crash);

	snprintf(what, sizeof(what), "%s (%s) %s after step %d", op->name, op->before == op->after ? "" :
		 op->after, mode == FAIL ? "failing" : "crashing", n);
	make_images(prov);
	cur_prov = prov;
	logcap_clear(&cap);
	hook_op = op->name;
	hook_n = n;
	hook_mode = mode;
	if (mode == FAIL) {
		s = fail_at_step(op->run, hook, what);
		expect_listing(s, after ? op->after : op->before, what);
		op->expect(s, after, what);
		cr_assert_eq(sfs_store_close(s), 0);
	} else {
		crash_at_step(op->run, hook, what);
	}
	/* what check shows before it: every item one the start can do */
	expect_plan_applicable(what);
	/* the next open puts right what a crash or a failure left */
	s = open_store();
	expect_listing(s, after ? op->after : op->before, what);
	op->expect(s, after, what);
	cr_assert_eq(sfs_store_close(s), 0);
	expect_clean(after ? op->after : op->before, what);
	tmp_rm_below(ts.fd);
}

ParameterizedTestParameters(steps, every_step)
{
	static enum sfs_prov provs[] = { SFS_PROV_THIN, SFS_PROV_ZEROEDTHICK, SFS_PROV_EAGERZEROEDTHICK };

	return cr_make_param_array(enum sfs_prov, provs, 3);
}

ParameterizedTest(enum sfs_prov *prov, steps, every_step)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* the namespace operations do not depend on the mode: once is enough */
		if (*prov != SFS_PROV_THIN && strcmp(ops[i].name, "grow") != 0 && strcmp(ops[i].name, "trim") != 0 &&
		    strcmp(ops[i].name, "make") != 0 && strcmp(ops[i].name, "inflate") != 0)
			continue;
		/* an eagerzeroedthick image is inflated already: no step */
		if (*prov == SFS_PROV_EAGERZEROEDTHICK && strcmp(ops[i].name, "inflate") == 0)
			continue;
		for (int n = 1; n <= ops[i].steps; n++) {
			cut(&ops[i], n, FAIL, *prov);
			cut(&ops[i], n, CRASH, *prov);
		}
	}
}

/* A crash leaves a line in the log for each repair, naming the image. */
Test(steps, repairs_are_logged)
{
	pid_t pid;
	int status;
	struct sfs_store *s;

	make_images(SFS_PROV_ZEROEDTHICK);
	hook_op = "grow";
	hook_n = 3;
	hook_mode = CRASH;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		s = open_store();
		sfs_step_hook = hook;
		run_grow(s);
		_exit(3);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	logcap_clear(&cap);
	s = open_store();
	cr_expect_eq(logcap_lines(&cap, "a: undid an interrupted grow from 1048576 to 2097152", NULL, NULL), 1,
		     "%s", cap.buf);
	cr_assert_eq(sfs_store_close(s), 0);
	logcap_clear(&cap);
	s = open_store();
	cr_expect_eq(cap.count, 0, "a second open has nothing to repair: %s", cap.buf);
	cr_assert_eq(sfs_store_close(s), 0);
}
