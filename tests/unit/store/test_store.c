/* SPDX-License-Identifier: MIT */
/*
 * test_store.c - unit tests of core/store/store.c: a directory of disk images.
 *
 * Opening a store with good and bad sidecars (each bad one logged once,
 * naming file, key and reason, the others served), the lock (a second
 * open is -EBUSY naming the holder, sfs_store_holder, set_holder, release
 * at close), create (sidecar with the store defaults, -EEXIST, invalid
 * names), get/put, unlink (files gone, an open reference still works, the
 * name reusable without old data), rename (files moved, replace,
 * noreplace, the journal), an interrupted rename finished at open, resize
 * rewriting the sidecar (and only the sidecar of the image's current name:
 * not for an unlinked or replaced image still held open), a damaged map
 * refused with a message, sorted listing, rescan, every map made durable
 * by the close, the tally
 * of served and refused images.  Messages
 * are captured with the log sink of tmpstore.h (store_fixture.h).  Each test gets its own
 * mkdtemp store, removed by the fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "store/store.h"
#include "fixtures/store_fixture.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define HOLDER "pid 4242, mounted at /mnt/unit-test"
#define GOOD "{\"size\": \"1M\", \"sector\": \"512e\", \"block_size\": \"64K\"}"

static void setup(void)
{
	store_setup("store", false, HOLDER);
	opts.defaults.prov = SFS_PROV_ZEROEDTHICK;
	opts.defaults.block_size = 128 * KiB;
	opts.defaults.zero_offload = false;
	opts.stats = true;
}

TestSuite(store, .init = setup, .fini = store_teardown, .timeout = 30);

/* ---- helpers ---- */

struct names {
	char buf[4096];
	unsigned calls;
	unsigned stop_at;     /* return 7 from this call (1-based); 0 = never */
};

static int collect(void *ctx, const char *name)
{
	struct names *n = ctx;

	n->calls++;
	snprintf(n->buf + strlen(n->buf), sizeof(n->buf) - strlen(n->buf), "%s%s", n->buf[0] ? " " : "", name);
	return n->calls == n->stop_at ? 7 : 0;
}

/* The store's names, sorted, joined by spaces. */
static const char *listing(struct sfs_store *s)
{
	static struct names n;

	memset(&n, 0, sizeof(n));
	cr_assert_eq(sfs_store_list(s, collect, &n), 0);
	return n.buf;
}

/* A store with image NAME (GOOD sidecar) holding byte v at 0 and 512K, closed again. */
static void make_image(const char *name, int v)
{
	struct sfs_store *s;
	struct sfs_image *im;

	tmp_write_sidecar(ts.fd, name, GOOD);
	s = open_store();
	im = get(s, name);
	put_bytes(im, 0, v);
	put_bytes(im, 512 * KiB, v);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

/* make_image(name, v), then the store opened into *s: the image got from it. */
static struct sfs_image *made(const char *name, int v, struct sfs_store **s)
{
	make_image(name, v);
	return open_get(name, s);
}

/* Expect the image name of s to hold what make_image(name, v) wrote (got and put back). */
static void expect_image(struct sfs_store *s, const char *name, int v)
{
	struct sfs_image *im = get(s, name);

	expect_bytes(im, 0, v, name);
	expect_bytes(im, 512 * KiB, v, name);
	sfs_store_put(s, im);
}

/* Expect the store, closed, to list names (sorted, joined by spaces) and its image name to
 * hold what make_image(name, v) wrote; close it again. */
static void expect_reopened(const char *names, const char *name, int v)
{
	struct sfs_store *s = open_store();

	cr_expect_str_eq(listing(s), names);
	expect_image(s, name, v);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- names ---- */

Test(store, name_valid)
{
	char longest[SFS_NAME_MAX + 1], toolong[SFS_NAME_MAX + 2];

	memset(longest, 'a', SFS_NAME_MAX);
	longest[SFS_NAME_MAX] = '\0';
	memset(toolong, 'a', SFS_NAME_MAX + 1);
	toolong[SFS_NAME_MAX + 1] = '\0';
	cr_expect_eq(sfs_name_valid("disk"), 0);
	cr_expect_eq(sfs_name_valid("disk.img"), 0);
	cr_expect_eq(sfs_name_valid("disk.json.bak"), 0);
	cr_expect_eq(sfs_name_valid("json"), 0);
	cr_expect_eq(sfs_name_valid(longest), 0);
	cr_expect_eq(sfs_name_valid(""), -EINVAL);
	cr_expect_eq(sfs_name_valid("."), -EINVAL);
	cr_expect_eq(sfs_name_valid(".."), -EINVAL);
	cr_expect_eq(sfs_name_valid("/"), -EINVAL);
	cr_expect_eq(sfs_name_valid("a/b"), -EINVAL);
	cr_expect_eq(sfs_name_valid(".hidden"), -EINVAL);
	cr_expect_eq(sfs_name_valid("x.json"), -EINVAL);
	cr_expect_eq(sfs_name_valid(".json"), -EINVAL);
	cr_expect_eq(sfs_name_valid(toolong), -EINVAL);
}

/* ---- open, sidecars ---- */

Test(store, open_empty_store)
{
	struct sfs_store *s = open_store();
	char buf[512];

	cr_expect(tmp_exists(ts.fd, SFS_STATE_DIR));
	cr_expect(state_exists("lock"));
	cr_expect_str_eq(listing(s), "");
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, HOLDER);
	cr_expect_geq(sfs_store_fd(s), 0);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, open_missing_directory)
{
	struct sfs_store *s = NULL;
	char err[512] = "", path[200];

	snprintf(path, sizeof(path), "%s/nope", ts.path);
	cr_expect_eq(sfs_store_open(path, &opts, &s, err, sizeof(err)), -ENOENT);
	cr_expect_null(s);
	cr_expect(strstr(err, path), "'%s' should name the directory", err);
}

Test(store, good_and_bad_sidecars)
{
	struct sfs_store_tally t;
	struct sfs_store *s;
	struct sfs_image *im = NULL;

	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_sidecar(ts.fd, "b", "{\"size\": 1000}");
	tmp_write_sidecar(ts.fd, "c", "{\"size\": \"1M\", \"colour\": \"blue\"}");
	tmp_write_sidecar(ts.fd, "d", "{\"size\": \"2M\", \"sector\": \"4kn\"}");
	tmp_write_sidecar(ts.fd, "e", "{\"size\": ");
	s = open_store();
	cr_expect_str_eq(listing(s), "a d", "bad sidecars are left out, the rest served");
	cr_expect_eq(logcap_lines(&cap, "b.json", "'size'", "multiple"), 1, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "c.json", "'colour'", "unknown key"), 1, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "e.json", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(logcap_level_lines(&cap, SFS_LOG_ERR), 3, "one error per bad sidecar: %s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "a.json", NULL, NULL) + logcap_lines(&cap, "d.json", NULL, NULL), 0);
	sfs_store_tally(s, &t);
	cr_expect_eq(t.served, 2);
	cr_expect_eq(t.refused, 3);

	/* looked at again: not logged again */
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(sfs_store_get(s, "b", &im), -ENOENT);
	cr_expect_null(im);
	cr_expect_eq(logcap_level_lines(&cap, SFS_LOG_ERR), 3, "each bad sidecar logged once: %s", cap.buf);

	/* fixed: served at the next rescan */
	tmp_write_sidecar(ts.fd, "b", "{\"size\": 1024}");
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_str_eq(listing(s), "a b d");
	im = get(s, "b");
	cr_expect_eq(sfs_image_geom(im).size, 1024);
	sfs_store_put(s, im);
	sfs_store_tally(s, &t);
	cr_expect_eq(t.served, 3);
	cr_expect_eq(t.refused, 2, "c and e still refused");
	/* a refused sidecar taken away is no longer counted */
	cr_assert_eq(unlinkat(ts.fd, "e.json", 0), 0);
	sfs_store_tally(s, &t);
	cr_expect_eq(t.refused, 1);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, bad_sidecar_changed_is_reported_again)
{
	struct sfs_store *s;

	tmp_write_sidecar(ts.fd, "b", "{\"size\": 1000}");
	s = open_store();
	cr_expect_eq(logcap_lines(&cap, "b.json", NULL, NULL), 1, "%s", cap.buf);
	tmp_write_sidecar(ts.fd, "b", "{\"size\": \"1M\", \"sector\": \"8kn\"}");
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(logcap_lines(&cap, "b.json", "'sector'", NULL), 1, "the new problem is reported: %s", cap.buf);
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(logcap_lines(&cap, "b.json", NULL, NULL), 2, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, too_long_name_logged_once)
{
	char name[SFS_NAME_MAX + 2];
	struct sfs_store *s;

	memset(name, 'n', SFS_NAME_MAX + 1);
	name[SFS_NAME_MAX + 1] = '\0';
	tmp_write_sidecar(ts.fd, name, GOOD);
	tmp_write_sidecar(ts.fd, "a", GOOD);
	s = open_store();
	cr_expect_str_eq(listing(s), "a");
	cr_expect_eq(logcap_lines(&cap, "too long", NULL, NULL), 1, "%s", cap.buf);
	/* the daemon rescans on every readdir: the same problem must not be logged each time */
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_eq(logcap_lines(&cap, "too long", NULL, NULL), 1,
		     "a bad sidecar is logged once, not at every rescan: %u lines", cap.count);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, ignores_what_is_not_a_sidecar)
{
	struct sfs_store *s;

	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_file(ts.fd, "raw", "xxxx", 4);               /* no sidecar: not an image */
	tmp_write_file(ts.fd, ".json", GOOD, strlen(GOOD));
	tmp_write_file(ts.fd, ".hidden.json", GOOD, strlen(GOOD));
	tmp_write_file(ts.fd, "x.json.bak", GOOD, strlen(GOOD));
	s = open_store();
	cr_expect_str_eq(listing(s), "a");
	cr_expect_eq(logcap_level_lines(&cap, SFS_LOG_ERR), 0, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, changed_sector_size_is_refused_and_data_kept)
{
	struct sfs_store *s;

	make_image("s", 0x42);
	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_sidecar(ts.fd, "s", "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}");
	s = open_store();
	cr_expect_str_eq(listing(s), "a");
	cr_expect_eq(logcap_lines(&cap, "s.json", "'sector'", NULL), 1, "%s", cap.buf);
	tmp_write_sidecar(ts.fd, "s", GOOD);
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_str_eq(listing(s), "a s");
	expect_image(s, "s", 0x42);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, corrupted_map_is_refused_with_a_message)
{
	struct sfs_store *s;
	unsigned char b;
	int fd;

	make_image("m", 0x4d);
	tmp_write_sidecar(ts.fd, "a", GOOD);
	fd = state_fd();
	{
		int mfd = openat(fd, "m.map", O_RDWR | O_CLOEXEC);

		cr_assert_geq(mfd, 0);
		cr_assert_eq(pread(mfd, &b, 1, 20), 1);      /* a byte of the disk size in the header */
		b ^= 0x40;
		cr_assert_eq(pwrite(mfd, &b, 1, 20), 1);
		close(mfd);
	}
	s = open_store();
	cr_expect_str_eq(listing(s), "a", "an image with a damaged map is not served");
	cr_expect_eq(logcap_lines(&cap, "m.map", "checksum", NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
	/* without its map the image is imported from the backing file: the data is kept */
	cr_assert_eq(unlinkat(fd, "m.map", 0), 0);
	close(fd);
	expect_reopened("a m", "m", 0x4d);
}

/* ---- the lock ---- */

Test(store, second_open_is_ebusy_naming_the_holder)
{
	struct sfs_store *s = open_store(), *s2 = NULL;
	char err[1024] = "";

	cr_expect_eq(sfs_store_open(ts.path, &opts, &s2, err, sizeof(err)), -EBUSY);
	cr_expect_null(s2);
	cr_expect(strstr(err, HOLDER), "'%s' should name the holder", err);
	cr_expect(strstr(err, ts.path), "'%s' should name the store", err);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, failed_open_leaves_the_holder_intact)
{
	struct sfs_store *s = open_store(), *s2 = NULL;
	char err[1024] = "", buf[512] = "";

	cr_expect_eq(sfs_store_open(ts.path, &opts, &s2, err, sizeof(err)), -EBUSY);
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, HOLDER, "the refused opener must not erase the holder's description");
	err[0] = '\0';
	cr_expect_eq(sfs_store_open(ts.path, &opts, &s2, err, sizeof(err)), -EBUSY);
	cr_expect(strstr(err, HOLDER), "a third opener must still be told the holder: '%s'", err);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, holder)
{
	struct sfs_store *s;
	char buf[512] = "", small[8];

	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), -ENOENT, "never served");
	s = open_store();
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, HOLDER);
	cr_expect_eq(sfs_store_holder(ts.path, small, sizeof(small)), 0);
	cr_expect_str_eq(small, "pid 424", "truncated to the buffer");
	cr_expect_eq(sfs_store_set_holder(s, "pid 7, daemonised"), 0);
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "pid 7, daemonised");
	cr_expect_eq(sfs_store_close(s), 0);
	cr_expect_eq(sfs_store_holder(ts.path, buf, sizeof(buf)), -ENOENT, "released at close");
	/* and a new daemon can take it */
	s = open_store();
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- create ---- */

Test(store, create)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im = NULL, *im2 = NULL;
	struct sfs_sidecar sc;

	cr_assert_eq(sfs_store_create(s, "new", &im), 0);
	cr_assert_not_null(im);
	cr_expect(tmp_exists(ts.fd, "new"));
	cr_expect_eq(tmp_stat(ts.fd, "new").st_size, 0);
	cr_expect(state_exists("new.map"));
	sc = load_sidecar("new");
	cr_expect_eq(sc.size, 0);
	cr_expect_eq(sc.lss, 4096);
	cr_expect_eq(sc.pss, 4096);
	cr_expect_eq(sc.prov, SFS_PROV_ZEROEDTHICK);
	cr_expect_eq(sc.block_size, 128 * KiB);
	cr_expect_eq(sc.zero_offload, false);
	cr_expect_str_eq(listing(s), "new");
	cr_expect_eq(sfs_image_geom(im).lss, 4096);
	cr_expect_eq(sfs_store_create(s, "new", &im2), -EEXIST);
	cr_expect_null(im2);
	/* the caller's reference and a lookup's are the same image */
	im2 = get(s, "new");
	cr_expect_eq(im2, im);
	sfs_store_put(s, im2);
	put_close(s, im);

	s = open_store();
	cr_expect_str_eq(listing(s), "new");
	im = get(s, "new");
	cr_expect_eq(sfs_image_geom(im).size, 0);
	cr_expect_eq(sfs_image_geom(im).lss, 4096);
	put_close(s, im);
}

Test(store, create_refuses_taken_names)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;

	tmp_write_file(ts.fd, "raw", "xxxx", 4);
	tmp_write_sidecar(ts.fd, "bad", "{\"size\": 1000}");
	s = open_store();
	cr_expect_eq(sfs_store_create(s, "raw", &im), -EEXIST, "a file without sidecar is not overwritten");
	cr_expect_eq(sfs_store_create(s, "bad", &im), -EEXIST, "a declared (if broken) image is not replaced");
	cr_expect_null(im);
	cr_expect_eq(tmp_stat(ts.fd, "raw").st_size, 4);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, create_refuses_invalid_names)
{
	static const char *const bad[] = { "", ".", "..", ".hidden", "a/b", "x.json", "/abs" };
	char toolong[SFS_NAME_MAX + 2], longest[SFS_NAME_MAX + 1];
	struct sfs_store *s = open_store();
	struct sfs_image *im = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(sfs_store_create(s, bad[i], &im), -EINVAL, "'%s'", bad[i]);
	memset(toolong, 'x', SFS_NAME_MAX + 1);
	toolong[SFS_NAME_MAX + 1] = '\0';
	cr_expect_eq(sfs_store_create(s, toolong, &im), -EINVAL);
	cr_expect_null(im);
	cr_expect_str_eq(listing(s), "");
	cr_expect(!tmp_exists(ts.fd, "x.json"));
	cr_expect(!tmp_exists(ts.fd, ".hidden"));

	memset(longest, 'y', SFS_NAME_MAX);
	longest[SFS_NAME_MAX] = '\0';
	cr_expect_eq(sfs_store_create(s, longest, &im), 0, "the longest valid name works");
	if (im)
		sfs_store_put(s, im);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- get / put ---- */

Test(store, get_and_put)
{
	struct sfs_store *s;
	struct sfs_image *a1, *a2, *im = NULL;

	a1 = sidecar_get("a", GOOD, &s);
	a2 = get(s, "a");
	cr_expect_eq(a1, a2, "one image per name");
	cr_expect_str_eq(sfs_image_name(a1), "a");
	cr_expect_eq(sfs_store_get(s, "nope", &im), -ENOENT);
	cr_expect_eq(sfs_store_get(s, "../a", &im), -ENOENT);
	cr_expect_null(im);
	sfs_store_put(s, a1);
	sfs_store_put(s, a2);
	/* a sidecar added after open is found by a lookup */
	tmp_write_sidecar(ts.fd, "late", GOOD);
	im = get(s, "late");
	cr_expect_eq(sfs_image_geom(im).size, MiB);
	sfs_store_put(s, im);
	cr_expect_str_eq(listing(s), "a late");
	cr_expect_eq(sfs_store_close(s), 0);
}

/* A lookup says why an image is not served, whole: the errno of what failed and a message
 * naming the file and the reason; sfs_store_get, the namespace's view, says it is not there. */
Test(store, lookup_says_why)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;
	char err[512];

	tmp_write_sidecar(ts.fd, "bad", "{\"size\": \"1M\", \"sektor\": \"4kn\"}");
	tmp_write_sidecar(ts.fd, "odd", "{\"size\": 1000, \"sector\": \"4kn\"}");
	s = open_store();
	cr_expect_eq(sfs_store_lookup(s, "bad", &im, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "bad.json") && strstr(err, "sektor"), "names file and key: %s", err);
	cr_expect_eq(sfs_store_lookup(s, "odd", &im, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "odd.json") && strstr(err, "size"), "names file and key: %s", err);
	cr_expect_eq(sfs_store_lookup(s, "nope", &im, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "nope.json"), "names the missing sidecar: %s", err);
	cr_expect_eq(sfs_store_get(s, "bad", &im), -ENOENT);
	cr_expect_null(im);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- unlink ---- */

Test(store, unlink)
{
	struct sfs_store *s;
	struct sfs_image *im, *im2 = NULL;

	make_image("a", 0x11);
	tmp_write_sidecar(ts.fd, "b", GOOD);
	im = open_get("a", &s);
	cr_expect_eq(sfs_store_unlink(s, "a"), 0);
	cr_expect(!tmp_exists(ts.fd, "a"));
	cr_expect(!tmp_exists(ts.fd, "a.json"));
	cr_expect(!state_exists("a.map"));
	cr_expect_str_eq(listing(s), "b");
	cr_expect_eq(sfs_store_get(s, "a", &im2), -ENOENT);
	cr_expect_eq(sfs_store_unlink(s, "a"), -ENOENT);
	cr_expect_eq(sfs_store_unlink(s, "nope"), -ENOENT);

	/* the open reference still works, as an unlinked file does */
	expect_bytes(im, 0, 0x11, "");
	put_bytes(im, 4096, 0x22);
	expect_bytes(im, 4096, 0x22, "");
	cr_expect_eq(sfs_image_flush(im), 0);
	sfs_store_put(s, im);

	/* the name is free again, and the new image has none of the old data */
	cr_assert_eq(sfs_store_create(s, "a", &im2), 0);
	cr_expect_eq(sfs_store_resize(s, im2, MiB), 0);
	sfs_store_put(s, im2);
	im2 = get(s, "a");
	expect_bytes(im2, 0, 0, "");
	put_close(s, im2);
}

Test(store, unlink_unreferenced)
{
	struct sfs_store *s;

	make_image("a", 0x11);
	s = open_store();
	cr_expect_eq(sfs_store_unlink(s, "a"), 0);
	cr_expect(!tmp_exists(ts.fd, "a"));
	cr_expect_str_eq(listing(s), "");
	cr_expect_eq(sfs_store_close(s), 0);
	s = open_store();
	cr_expect_str_eq(listing(s), "");
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- rename ---- */

Test(store, rename)
{
	struct sfs_store *s;
	struct sfs_image *held, *im, *none = NULL;

	held = made("a", 0x33, &s);
	cr_expect_eq(sfs_store_rename(s, "a", "b", false), 0);
	cr_expect(!tmp_exists(ts.fd, "a") && !tmp_exists(ts.fd, "a.json") && !state_exists("a.map"));
	cr_expect(tmp_exists(ts.fd, "b") && tmp_exists(ts.fd, "b.json") && state_exists("b.map"));
	cr_expect(!state_exists("a.rename") && !state_exists("rename"), "the journal is gone after the rename");
	cr_expect_str_eq(listing(s), "b");
	cr_expect_eq(sfs_store_get(s, "a", &none), -ENOENT);
	im = get(s, "b");
	cr_expect_eq(im, held, "the same image under its new name");
	cr_expect_str_eq(sfs_image_name(held), "b");
	expect_bytes(im, 0, 0x33, "");
	put_bytes(held, 8192, 0x34);
	sfs_store_put(s, im);
	sfs_store_put(s, held);
	cr_expect_eq(sfs_store_rename(s, "b", "b", false), 0, "to itself: nothing to do");
	cr_expect_eq(sfs_store_close(s), 0);

	s = open_store();
	cr_expect_str_eq(listing(s), "b");
	im = get(s, "b");
	expect_bytes(im, 0, 0x33, "");
	expect_bytes(im, 8192, 0x34, "");
	expect_bytes(im, 512 * KiB, 0x33, "");
	put_close(s, im);
}

Test(store, rename_replaces_the_target)
{
	struct sfs_store *s;
	struct sfs_image *old_b, *im;

	make_image("a", 0xaa);
	old_b = made("b", 0xbb, &s);
	cr_expect_eq(sfs_store_rename(s, "a", "b", false), 0);
	cr_expect_str_eq(listing(s), "b");
	cr_expect(!tmp_exists(ts.fd, "a") && !tmp_exists(ts.fd, "a.json") && !state_exists("a.map"));
	im = get(s, "b");
	cr_expect_neq(im, old_b);
	expect_bytes(im, 0, 0xaa, "");
	sfs_store_put(s, im);
	/* the replaced image stays usable for who holds it */
	expect_bytes(old_b, 0, 0xbb, "");
	put_close(s, old_b);

	expect_reopened("b", "b", 0xaa);
}

Test(store, rename_noreplace)
{
	struct sfs_store *s;

	make_image("a", 0xaa);
	make_image("b", 0xbb);
	tmp_write_file(ts.fd, "raw", "xxxx", 4);
	s = open_store();
	cr_expect_eq(sfs_store_rename(s, "a", "b", true), -EEXIST);
	cr_expect_eq(sfs_store_rename(s, "a", "raw", true), -EEXIST, "a file without sidecar counts");
	cr_expect_eq(tmp_stat(ts.fd, "raw").st_size, 4);
	cr_expect_str_eq(listing(s), "a b");
	expect_image(s, "a", 0xaa);
	expect_image(s, "b", 0xbb);
	cr_expect(!state_exists("a.rename"));
	/* and with noreplace to a free name it just renames */
	cr_expect_eq(sfs_store_rename(s, "a", "c", true), 0);
	cr_expect_str_eq(listing(s), "b c");
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, rename_errors)
{
	struct sfs_store *s;

	make_image("a", 0xaa);
	s = open_store();
	cr_expect_eq(sfs_store_rename(s, "nope", "x", false), -ENOENT);
	cr_expect_eq(sfs_store_rename(s, "a", "x.json", false), -EINVAL);
	cr_expect_eq(sfs_store_rename(s, "a", ".x", false), -EINVAL);
	cr_expect_eq(sfs_store_rename(s, "a", "d/x", false), -EINVAL);
	cr_expect_eq(sfs_store_rename(s, "a", "", false), -EINVAL);
	cr_expect_str_eq(listing(s), "a");
	cr_expect(tmp_exists(ts.fd, "a.json"));
	cr_expect_eq(sfs_store_close(s), 0);
}

static void write_journal(const char *from, const char *to)
{
	char buf[512];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s%c%s", from, '\0', to) + 1;
	int fd = state_fd();

	tmp_write_file(fd, "rename", buf, n);
	close(fd);
}

static void move_state(const char *from, const char *to)
{
	int fd = state_fd();

	cr_assert_eq(renameat(fd, from, fd, to), 0, "%s", strerror(errno));
	close(fd);
}

static void expect_renamed_to_new(void)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im;

	cr_expect_str_eq(listing(s), "new");
	cr_expect(!state_exists("rename"), "the journal is removed once replayed");
	cr_expect(!tmp_exists(ts.fd, "old") && !tmp_exists(ts.fd, "old.json") && !state_exists("old.map"));
	cr_expect(tmp_exists(ts.fd, "new") && tmp_exists(ts.fd, "new.json") && state_exists("new.map"));
	cr_expect_eq(logcap_lines(&cap, "rename", "old", "new"), 1, "%s", cap.buf);
	im = get(s, "new");
	expect_bytes(im, 0, 0x5e, "");
	expect_bytes(im, 512 * KiB, 0x5e, "");
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), 2, "the map moved with the data");
	put_close(s, im);
}

Test(store, interrupted_rename_after_the_map)
{
	make_image("old", 0x5e);
	write_journal("old", "new");
	move_state("old.map", "new.map");
	expect_renamed_to_new();
}

Test(store, interrupted_rename_before_anything_moved)
{
	make_image("old", 0x5e);
	write_journal("old", "new");
	expect_renamed_to_new();
}

Test(store, interrupted_rename_before_the_sidecar)
{
	make_image("old", 0x5e);
	write_journal("old", "new");
	move_state("old.map", "new.map");
	cr_assert_eq(renameat(ts.fd, "old", ts.fd, "new"), 0);
	expect_renamed_to_new();
}

Test(store, garbage_journal_is_dropped)
{
	struct sfs_store *s;
	int fd;

	make_image("a", 0x61);
	fd = state_fd();
	tmp_write_file(fd, "rename", "a\0../../etc\0", 12);
	close(fd);
	s = open_store();
	cr_expect(!state_exists("rename"));
	cr_expect_str_eq(listing(s), "a");
	expect_image(s, "a", 0x61);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- resize ---- */

Test(store, resize_rewrites_the_sidecar)
{
	struct sfs_store *s;
	struct sfs_image *im;
	struct sfs_sidecar sc;

	im = made("a", 0x71, &s);
	cr_expect_eq(sfs_store_resize(s, im, 3 * MiB), 0);
	cr_expect_eq(sfs_image_geom(im).size, 3 * MiB);
	sc = load_sidecar("a");
	cr_expect_eq(sc.size, 3 * MiB);
	cr_expect_eq(sc.lss, 512);
	cr_expect_eq(sc.pss, 4096);
	cr_expect_eq(sc.block_size, 64 * KiB);
	put_bytes(im, 2 * MiB, 0x72);
	cr_expect_eq(sfs_store_resize(s, im, 2 * MiB), -EINVAL, "shrinking is refused");
	cr_expect_eq(sfs_store_resize(s, im, 3 * MiB + 100), -EINVAL);
	cr_expect_eq(load_sidecar("a").size, 3 * MiB, "a refused resize leaves the sidecar alone");
	put_close(s, im);

	im = open_get("a", &s);
	cr_expect_eq(sfs_image_geom(im).size, 3 * MiB);
	expect_bytes(im, 0, 0x71, "");
	expect_bytes(im, 2 * MiB, 0x72, "");
	put_close(s, im);
}

Test(store, resize_after_rename_writes_the_new_sidecar)
{
	struct sfs_store *s;
	struct sfs_image *im;

	im = made("a", 0x71, &s);
	cr_expect_eq(sfs_store_rename(s, "a", "b", false), 0);
	cr_expect_eq(sfs_store_resize(s, im, 2 * MiB), 0);
	cr_expect_eq(load_sidecar("b").size, 2 * MiB);
	cr_expect(!tmp_exists(ts.fd, "a.json"), "no sidecar for the old name");
	put_close(s, im);
}

Test(store, resize_of_an_unlinked_image_does_not_bring_it_back)
{
	/* ftruncate on a file still open after unlink reaches sfs_store_resize through the handle */
	struct sfs_store *s;
	struct sfs_image *im;

	im = made("a", 0x71, &s);
	cr_assert_eq(sfs_store_unlink(s, "a"), 0);
	sfs_store_resize(s, im, 2 * MiB);
	cr_expect(!tmp_exists(ts.fd, "a.json"), "resizing an unlinked image must not write a sidecar for it");
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_str_eq(listing(s), "", "the unlinked image must stay gone");
	put_close(s, im);
}

Test(store, resize_of_a_replaced_image_leaves_the_new_sidecar_alone)
{
	struct sfs_store *s;
	struct sfs_image *old_b, *im;
	struct sfs_sidecar sc;

	make_image("a", 0xaa);                                   /* 512e, 1M */
	tmp_write_sidecar(ts.fd, "b", "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}");
	old_b = open_get("b", &s);
	cr_assert_eq(sfs_store_rename(s, "a", "b", false), 0);
	sfs_store_resize(s, old_b, 2 * MiB);                     /* the replaced image, still open */
	sc = load_sidecar("b");
	cr_expect_eq(sc.lss, 512, "b.json must still describe the image now called b (512e), not the replaced one");
	cr_expect_eq(sc.size, MiB);
	put_close(s, old_b);
	s = open_store();
	cr_expect_str_eq(listing(s), "b", "b must still be served after a restart: %s", cap.buf);
	if (sfs_store_get(s, "b", &im) == 0) {
		expect_bytes(im, 0, 0xaa, "");
		sfs_store_put(s, im);
	}
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- list, rescan, flush ---- */

Test(store, list_is_sorted)
{
	static const char *const names[] = { "zeta", "alpha", "Mid", "beta2", "beta10", "_x", "a" };
	struct sfs_store *s;
	struct names n;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		tmp_write_sidecar(ts.fd, names[i], GOOD);
	s = open_store();
	cr_expect_str_eq(listing(s), "Mid _x a alpha beta10 beta2 zeta");
	memset(&n, 0, sizeof(n));
	n.stop_at = 2;
	cr_expect_eq(sfs_store_list(s, collect, &n), 7, "the callback's result stops the walk");
	cr_expect_eq(n.calls, 2);
	cr_expect_str_eq(n.buf, "Mid _x");
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, rescan_picks_up_new_sidecars)
{
	struct sfs_store *s;

	tmp_write_sidecar(ts.fd, "b", GOOD);
	s = open_store();
	cr_expect_str_eq(listing(s), "b");
	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_sidecar(ts.fd, "c", "{\"size\": \"2M\", \"provisioning\": \"eagerzeroedthick\"}");
	cr_expect_str_eq(listing(s), "b", "not before a rescan");
	cr_expect_eq(sfs_store_rescan(s), 0);
	cr_expect_str_eq(listing(s), "a b c");
	cr_expect(tmp_exists(ts.fd, "a") && tmp_exists(ts.fd, "c"), "declared images are created");
	cr_expect_eq(tmp_stat(ts.fd, "c").st_size, 2 * MiB);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, close_makes_every_map_durable)
{
	struct sfs_store *s;
	struct sfs_image *im;
	struct sfs_map *m;
	int fd;

	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_sidecar(ts.fd, "b", GOOD);
	im = open_get("a", &s);
	put_bytes(im, 3 * 64 * KiB, 1);
	sfs_store_put(s, im);
	im = get(s, "b");
	put_bytes(im, 5 * 64 * KiB, 1);
	sfs_store_put(s, im);
	/* every image flushed, through the public API: the store's close */
	cr_expect_eq(sfs_store_close(s), 0);
	fd = state_fd();
	m = tmp_map_open_ro(fd, "a.map");
	cr_expect(sfs_map_test(m, 3));
	sfs_map_close(m);
	m = tmp_map_open_ro(fd, "b.map");
	cr_expect(sfs_map_test(m, 5));
	sfs_map_close(m);
	close(fd);
}

Test(store, close_flushes)
{
	struct sfs_store *s;
	struct sfs_image *im;

	im = sidecar_get("a", GOOD, &s);
	put_bytes(im, 64 * KiB, 0x7e);
	put_close(s, im);
	im = open_get("a", &s);
	expect_bytes(im, 64 * KiB, 0x7e, "");
	cr_expect(sfs_map_test(sfs_image_map(im), 1));
	put_close(s, im);
}

Test(store, lazy_open_loads_only_what_is_asked_for)
{
	struct sfs_store_opts lazy = opts;
	struct sfs_store *s = NULL;
	struct sfs_image *im;
	char err[1024] = "";

	tmp_write_sidecar(ts.fd, "a", GOOD);
	tmp_write_sidecar(ts.fd, "b", GOOD);
	lazy.lazy = true;
	cr_assert_eq(sfs_store_open(ts.path, &lazy, &s, err, sizeof(err)), 0, "open: %s", err);
	cr_expect_str_eq(listing(s), "", "a lazy open loads nothing");
	cr_expect(!tmp_exists(ts.fd, "a") && !tmp_exists(ts.fd, "b"), "and creates no backing file");
	cr_assert_eq(sfs_store_get(s, "b", &im), 0);
	cr_expect(tmp_exists(ts.fd, "b") && !tmp_exists(ts.fd, "a"), "only the image asked for is made");
	cr_expect_str_eq(listing(s), "b");
	put_close(s, im);
}

/* ---- growing ---- */

Test(store, sidecar_larger_than_image_grows_it)
{
	struct sfs_store *s;
	struct sfs_image *im;

	make_image("a", 0x61);
	tmp_write_sidecar(ts.fd, "a", "{\"size\": \"2M\", \"sector\": \"512e\", \"block_size\": \"64K\"}");
	im = open_get("a", &s);
	cr_expect_eq(sfs_image_geom(im).size, 2 * MiB);
	cr_expect_eq(sfs_map_nblocks(sfs_image_map(im)), 32);
	expect_bytes(im, 0, 0x61, "");
	expect_bytes(im, 512 * KiB, 0x61, "");
	expect_bytes(im, MiB + 4096, 0, "");
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect(!state_exists("a.grow"));
	cr_expect_eq(tmp_stat(ts.fd, "a").st_size, (off_t)(2 * MiB));
}

/* ---- files that are not a served image's own ---- */

static void expect_file(const char *name, const char *want)
{
	char buf[256];

	cr_expect_eq(tmp_read_file(ts.fd, name, buf, sizeof(buf)), (ssize_t)strlen(want), "%s", name);
	cr_expect_str_eq(buf, want, "%s was changed", name);
}

Test(store, rename_never_replaces_a_users_file_or_a_refused_image)
{
	struct sfs_store *s;

	make_image("a", 0x61);
	tmp_write_file(ts.fd, "notes", "notes\n", 6);
	tmp_write_file(ts.fd, "bad", "1 MiB of data, say", 18);
	tmp_write_sidecar(ts.fd, "bad", "{\"size\": \"1M\", \"sector\": \"512x\"}");
	tmp_write_sidecar(ts.fd, "lonely", "{\"size\": \"1M\", \"sector\": \"512x\"}");
	s = open_store();
	logcap_clear(&cap);
	cr_expect_eq(sfs_store_rename(s, "a", "notes", false), -EEXIST);
	cr_expect_eq(sfs_store_rename(s, "a", "bad", false), -EEXIST);
	cr_expect_eq(sfs_store_rename(s, "a", "lonely", false), -EEXIST);
	cr_expect_eq(sfs_store_rename(s, "a", "notes", true), -EEXIST);
	cr_expect_eq(logcap_lines(&cap, "notes: cannot rename onto it", "not a served image", NULL), 2, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "bad: cannot rename onto it", "bad.json", NULL), 1, "%s", cap.buf);
	expect_file("notes", "notes\n");
	expect_file("bad", "1 MiB of data, say");
	expect_file("bad.json", "{\"size\": \"1M\", \"sector\": \"512x\"}");
	expect_file("lonely.json", "{\"size\": \"1M\", \"sector\": \"512x\"}");
	cr_expect(!tmp_exists(ts.fd, "notes.json"));
	cr_expect_str_eq(listing(s), "a");
	expect_image(s, "a", 0x61);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, create_onto_a_users_file_says_why)
{
	struct sfs_store *s;
	struct sfs_image *im = NULL;

	tmp_write_file(ts.fd, "raw", "xxxx", 4);
	s = open_store();
	cr_expect_eq(sfs_store_create(s, "raw", &im), -EEXIST);
	cr_expect_eq(logcap_lines(&cap, "raw: cannot create it", "a file put there by hand", NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, leftovers_of_a_crash_are_removed_and_logged)
{
	struct sfs_store *s;
	char name[64];
	int fd;

	make_image("a", 0x61);
	make_image("b.json.tmp.77", 0x62);    /* an image may be named like an old temporary file */
	fd = state_fd();
	tmp_write_file(fd, ".tmp.123.1", "x", 1);
	tmp_write_file(fd, "a.map.tmp.4242", "x", 1);
	tmp_write_file(fd, "a.map.new", "x", 1);
	close(fd);
	tmp_write_file(ts.fd, "a.json.tmp.4242", GOOD, strlen(GOOD));          /* an old sidecar temp */
	tmp_write_file(ts.fd, "z.json.tmp.5", "not json", 8);                  /* not a sidecar: a user's */
	snprintf(name, sizeof(name), "notes.json.tmp.1");
	tmp_write_file(ts.fd, name, GOOD, strlen(GOOD));
	logcap_clear(&cap);
	s = open_store();
	cr_expect(!state_exists(".tmp.123.1") && !state_exists("a.map.tmp.4242") && !state_exists("a.map.new"));
	cr_expect(!tmp_exists(ts.fd, "a.json.tmp.4242") && !tmp_exists(ts.fd, name));
	cr_expect(tmp_exists(ts.fd, "z.json.tmp.5"), "a file that is no sidecar is the user's");
	cr_expect(tmp_exists(ts.fd, "b.json.tmp.77") && tmp_exists(ts.fd, "b.json.tmp.77.json"),
		  "an image named like a temporary file is kept");
	cr_expect_eq(logcap_lines(&cap, "removed", NULL, NULL), 5, "one line per repair: %s", cap.buf);
	cr_expect_str_eq(listing(s), "a b.json.tmp.77");
	cr_expect_eq(sfs_store_close(s), 0);
	logcap_clear(&cap);
	s = open_store();
	cr_expect_eq(logcap_lines(&cap, "removed", NULL, NULL), 0, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, interrupted_unlink_is_finished_or_undone)
{
	struct sfs_store *s;
	struct stat st;
	char rec[64];
	int fd;

	make_image("a", 0x61);
	make_image("b", 0x62);
	/* a: the sidecar was gone, backing file and map not yet */
	st = tmp_stat(ts.fd, "a");
	snprintf(rec, sizeof(rec), "unlink %llu %llu\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	fd = state_fd();
	tmp_write_file(fd, "a.unlink", rec, strlen(rec));
	/* b: nothing was removed yet */
	st = tmp_stat(ts.fd, "b");
	snprintf(rec, sizeof(rec), "unlink %llu %llu\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	tmp_write_file(fd, "b.unlink", rec, strlen(rec));
	close(fd);
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	s = open_store();
	cr_expect_str_eq(listing(s), "b");
	cr_expect(!tmp_exists(ts.fd, "a") && !state_exists("a.map") && !state_exists("a.unlink"));
	cr_expect(!state_exists("b.unlink") && tmp_exists(ts.fd, "b"));
	cr_expect_eq(logcap_lines(&cap, "a: finished an interrupted unlink", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(logcap_lines(&cap, "b: an interrupted unlink had not removed the sidecar", NULL, NULL), 1,
		     "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, interrupted_unlink_leaves_a_new_file_of_that_name_alone)
{
	struct sfs_store *s;
	int fd;

	make_image("a", 0x61);
	fd = state_fd();
	tmp_write_file(fd, "a.unlink", "unlink 1 2\n", 11);    /* some other inode */
	close(fd);
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	s = open_store();
	cr_expect(tmp_exists(ts.fd, "a"), "not the file the unlink was removing");
	cr_expect(!state_exists("a.unlink"));
	cr_expect_eq(logcap_lines(&cap, "a: not the backing file", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

/* ---- a sidecar written again while its image is open ---- */

Test(store, readded_sidecar_that_matches_is_served_by_the_open_instance)
{
	struct sfs_store *s;
	struct sfs_image *held, *im;

	held = made("a", 0x61, &s);
	cr_assert_eq(renameat(ts.fd, "a.json", ts.fd, "a.json.away"), 0);
	sfs_store_rescan(s);
	cr_expect_str_eq(listing(s), "");
	tmp_write_sidecar(ts.fd, "a", GOOD);
	sfs_store_rescan(s);
	cr_expect_str_eq(listing(s), "a");
	im = get(s, "a");
	cr_expect_eq(im, held, "the same instance");
	sfs_store_put(s, im);
	put_close(s, held);
}

Test(store, readded_sidecar_that_differs_is_refused_until_closed)
{
	struct sfs_store *s;
	struct sfs_image *held, *im = NULL;

	held = made("a", 0x61, &s);
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	sfs_store_rescan(s);
	cr_expect_str_eq(listing(s), "");
	tmp_write_sidecar(ts.fd, "a", "{\"size\": \"2M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}");
	logcap_clear(&cap);
	sfs_store_rescan(s);
	cr_expect_str_eq(listing(s), "");
	cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT);
	cr_expect_eq(logcap_lines(&cap, "a.json: declared again while the image is still open",
				  "size 1048576 -> 2097152", "sector 512/4096 -> 4096/4096"), 1, "%s", cap.buf);
	expect_bytes(held, 0, 0x61, "");           /* the open file keeps working */
	sfs_store_put(s, held);
	/* closed: loaded as at mount time, which refuses another sector size */
	logcap_clear(&cap);
	cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT);
	cr_expect_eq(logcap_lines(&cap, "sector format never changes", NULL, NULL), 1, "%s", cap.buf);
	cr_expect_eq(sfs_store_close(s), 0);
}

Test(store, sidecar_rewritten_in_place_is_read_again)
{
	struct sfs_store *s;
	struct sfs_image *held, *im = NULL;

	held = made("a", 0x61, &s);
	/* the same values, written again: still served by the open instance */
	tmp_write_sidecar(ts.fd, "a", " " GOOD);
	im = get(s, "a");
	cr_expect_eq(im, held);
	sfs_store_put(s, im);
	/* another size while held open: refused until closed */
	tmp_write_sidecar(ts.fd, "a", "{\"size\": \"2M\", \"sector\": \"512e\", \"block_size\": \"64K\"}");
	logcap_clear(&cap);
	cr_expect_eq(sfs_store_get(s, "a", &im), -ENOENT);
	cr_expect_eq(logcap_lines(&cap, "a.json: rewritten while the image is served", "size 1048576 -> 2097152",
				  NULL), 1, "%s", cap.buf);
	sfs_store_put(s, held);
	/* closed: the new sidecar is loaded, and grows the image (a new instance; its address may
	 * be the freed one's, so only its geometry tells) */
	im = get(s, "a");
	cr_expect_eq(sfs_image_geom(im).size, 2 * MiB);
	expect_bytes(im, 0, 0x61, "");
	put_close(s, im);
}

/* ---- images that grow while their creator writes ---- */

static struct sfs_image *create_growing(struct sfs_store *s, const char *name)
{
	struct sfs_image *im = NULL;

	cr_assert_eq(sfs_store_create(s, name, &im), 0);
	sfs_image_set_growing(im, true);
	return im;
}

static void write_growing(struct sfs_store *s, struct sfs_image *im, uint64_t off, size_t len, int v)
{
	unsigned char *buf = malloc(len);

	cr_assert_not_null(buf);
	memset(buf, v, len);
	cr_assert_eq(sfs_store_write_growing(s, im, buf, len, off, true), (ssize_t)len, "write at %llu",
		     (unsigned long long)off);
	free(buf);
}

Test(store, growing_image_follows_its_writes_and_settles_when_closed)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im = create_growing(s, "g");
	unsigned char buf[4096];
	struct stat st;

	/* defaults of this suite: 4kn, zeroedthick, 128K blocks */
	for (uint64_t off = 0; off < 3 * MiB; off += 256 * KiB)
		write_growing(s, im, off, 256 * KiB, 0x67);
	cr_expect_eq(sfs_image_geom(im).size, 3 * MiB, "it shows what its writes reached");
	cr_expect_geq(sfs_image_capacity(im), 3 * MiB);
	cr_expect_lt(sfs_image_capacity(im), 5 * MiB, "room ahead: a quarter more, at least 1 MiB");
	cr_expect_eq(sfs_image_read(im, buf, sizeof(buf), 3 * MiB), 0, "reads end where it shows");
	cr_expect_eq(load_sidecar("g").size, sfs_image_capacity(im), "the sidecar says what the files have");
	/* a write that is not whole sectors is refused as always */
	cr_expect_eq(sfs_store_write_growing(s, im, buf, 512, 3 * MiB, true), -EINVAL);
	/* fsync: the size it shows is durable */
	cr_assert_eq(sfs_image_flush(im), 0);
	cr_assert_eq(sfs_store_settle(s, im, false), 0);
	cr_expect_eq(sfs_image_capacity(im), 3 * MiB);
	cr_expect_eq(load_sidecar("g").size, 3 * MiB);
	cr_expect_eq(tmp_stat(ts.fd, "g").st_size, (off_t)(3 * MiB));
	cr_expect_leq(tmp_stat(ts.fd, "g").st_blocks * 512, 3 * MiB + 128 * KiB, "the room ahead is given back");
	/* still growing until closed */
	write_growing(s, im, 3 * MiB, 4096, 0x68);
	cr_assert_eq(sfs_store_settle(s, im, true), 0);
	cr_expect(!sfs_image_growing(im));
	cr_expect_eq(sfs_image_geom(im).size, 3 * MiB + 4096);
	cr_expect_eq(sfs_image_capacity(im), 3 * MiB + 4096);
	cr_expect_eq(load_sidecar("g").size, 3 * MiB + 4096);
	/* from now on a disk of fixed size */
	cr_expect_eq(sfs_store_write_growing(s, im, buf, sizeof(buf), 3 * MiB + 4096, true), -ENOSPC);
	expect_bytes(im, 0, 0x67, "");
	expect_bytes(im, 3 * MiB, 0x68, "");
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect(!state_exists("g.grow"));
	st = tmp_stat(ts.fd, "g");
	cr_expect_eq(st.st_size, (off_t)(3 * MiB + 4096));
	im = open_get("g", &s);
	cr_expect_eq(sfs_image_geom(im).size, 3 * MiB + 4096);
	expect_bytes(im, 3 * MiB, 0x68, "");
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(store, truncate_of_a_growing_image_within_and_past_its_room)
{
	struct sfs_store *s = open_store();
	struct sfs_image *im = create_growing(s, "g");

	write_growing(s, im, 0, 4096, 0x67);
	cr_expect_eq(sfs_store_resize(s, im, 64 * KiB), 0);
	cr_expect_eq(sfs_image_geom(im).size, 64 * KiB);
	cr_expect_eq(sfs_store_resize(s, im, 8 * MiB), 0);
	cr_expect_eq(sfs_image_geom(im).size, 8 * MiB);
	cr_expect_geq(sfs_image_capacity(im), 8 * MiB);
	cr_expect_eq(sfs_store_resize(s, im, 4 * MiB), -EINVAL, "a disk with data never shrinks");
	cr_expect_eq(sfs_store_resize(s, im, 8 * MiB + 512), -EINVAL, "whole sectors");
	cr_assert_eq(sfs_store_settle(s, im, true), 0);
	cr_expect_eq(load_sidecar("g").size, 8 * MiB);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(store, a_disk_holding_no_data_may_shrink)
{
	struct sfs_store *s;
	struct sfs_image *im;
	unsigned char zeros[4096] = { 0 };

	tmp_write_sidecar(ts.fd, "e", "{\"size\": \"16M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}");
	im = open_get("e", &s);
	cr_expect_eq(sfs_store_resize(s, im, 0), 0, "nothing written: nothing lost");
	cr_expect_eq(sfs_image_geom(im).size, 0);
	cr_expect_eq(load_sidecar("e").size, 0);
	cr_expect_eq(tmp_stat(ts.fd, "e").st_size, 0);
	cr_expect_eq(sfs_store_resize(s, im, 8 * MiB), 0);
	/* a block of zeros (qemu-img writes one) is no data either */
	cr_assert_eq(sfs_image_write(im, zeros, sizeof(zeros), 0), (ssize_t)sizeof(zeros));
	cr_assert_eq(sfs_image_write(im, zeros, sizeof(zeros), 4 * MiB), (ssize_t)sizeof(zeros));
	cr_expect_eq(sfs_store_resize(s, im, 0), 0);
	cr_expect_eq(sfs_map_count(sfs_image_map(im)), 0);
	cr_expect_eq(sfs_store_resize(s, im, 8 * MiB), 0);
	put_bytes(im, 4 * MiB, 0x65);
	cr_expect_eq(sfs_store_resize(s, im, 2 * MiB), -EINVAL, "data past the new end");
	cr_expect_eq(sfs_store_resize(s, im, 6 * MiB), 0, "data before the new end");
	expect_bytes(im, 4 * MiB, 0x65, "");
	cr_expect_eq(load_sidecar("e").size, 6 * MiB);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
	im = open_get("e", &s);
	cr_expect_eq(sfs_image_geom(im).size, 6 * MiB);
	expect_bytes(im, 4 * MiB, 0x65, "");
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}
