/* SPDX-License-Identifier: MIT */
/*
 * test_imgcache.c - a store whose images hold their descriptors through a
 * cache (opts.fd_budget; core/image/open.c, core/util/fdcache.c).
 *
 * The budget is one image's descriptors, so opening one image evicts the
 * other.  Proves: loaded images hold no descriptor and no stats; stat,
 * the stats info and the tally answer without a descriptor; an evicted
 * image reopens with the same backing inode and the same map (its written
 * block reads back, its count and stats are those before), and what was
 * written before the eviction is durable in the map file; a pinned image
 * is never evicted, even past the budget; a backing file replaced under
 * the name while evicted is not reopened (-ENOENT) and the next lookup
 * drops the old instance as removed behind the daemon's back and serves
 * the new file; a map replaced while evicted is refused (-EUCLEAN,
 * logged); rename, unlink and grow work on evicted images; a snapshot of
 * an image without I/O has the generation its stats get at the first I/O;
 * the store's idle look closes the images nobody has pinned for its quiet
 * time and packs the stats of those without I/O since the look before
 * (pinned or not), whose snapshots stay what they were and whose next
 * I/O reopens them and counts on.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "image/image_test.h"
#include "contract/sidecar.h"
#include "store/store.h"
#include "fixtures/tmpstore.h"

#define KiB 1024ull
#define BS (64 * KiB)
#define DISK "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}"

static struct tmpstore ts;
static struct logcap cap;
static struct sfs_store_opts opts;
static struct sfs_store *st;

static void setup(void)
{
	tmpstore_make(&ts, "imgcache", false);
	logcap_init(&cap);
	memset(&opts, 0, sizeof(opts));
	sfs_sidecar_defaults(&opts.defaults);
	opts.stats = true;
	opts.log = logcap_sink(&cap);
	opts.holder = "unit test";
	opts.fd_budget = 3;          /* one image at a time */
	tmp_write_sidecar(ts.fd, "a", DISK);
	tmp_write_sidecar(ts.fd, "b", DISK);
	tmp_write_sidecar(ts.fd, "c", DISK);
}

static void teardown(void)
{
	if (st)
		sfs_store_close(st);
	st = NULL;
	tmpstore_destroy(&ts);
}

TestSuite(imgcache, .init = setup, .fini = teardown, .timeout = 30);

static void open_store(void)
{
	char err[1024] = "";

	cr_assert_eq(sfs_store_open(ts.path, &opts, &st, err, sizeof(err)), 0, "open: %s", err);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;                /* the directory's own */
}

static struct sfs_image *get(const char *name)
{
	struct sfs_image *im = NULL;

	cr_assert_eq(sfs_store_get(st, name, &im), 0, "get %s", name);
	return im;
}

static void *block_of(char c)
{
	void *p = NULL;

	cr_assert_eq(posix_memalign(&p, 4096, BS), 0);
	memset(p, c, BS);
	return p;
}

static struct sfs_store_tally tally(void)
{
	struct sfs_store_tally t;

	sfs_store_tally(st, &t);
	return t;
}

Test(imgcache, loaded_images_hold_nothing)
{
	int before = count_fds();
	struct sfs_image *a;
	struct stat sb;

	open_store();
	cr_expect_eq(count_fds() - before, 3, "the store holds its directory, state directory and lock only");
	cr_expect_eq(tally().served, 3);
	cr_expect_eq(tally().open_now, 0);
	cr_expect_eq(tally().fds_now, 0);
	cr_expect_eq(tally().open_max, 1);
	a = get("a");
	cr_expect_not(sfs_image_resident(a));
	cr_expect_not(sfs_image_has_stats(a));
	/* stat and the stats info answer without opening anything */
	cr_assert_eq(sfs_image_stat(a, &sb), 0);
	cr_expect_eq(sb.st_size, 1 << 20);
	cr_expect_eq(sb.st_blksize, 4096);
	cr_assert_eq(sfs_store_stat(st, "b", &sb), 0);
	cr_expect_eq(sb.st_size, 1 << 20);
	struct sfs_stats_info info;

	sfs_image_stats_info(a, &info);
	cr_expect_eq(info.total_blocks, 16);
	cr_expect_eq(info.allocated_blocks, 0);
	cr_expect_not(sfs_image_resident(a));
	cr_expect_eq(count_fds() - before, 3);
	sfs_store_put(st, a);
}

Test(imgcache, evicted_image_reopens_with_same_identity_and_map)
{
	struct sfs_image *a, *b;
	struct sfs_stats_snap snap;
	char *w = block_of('A'), *r = block_of(0);
	dev_t dev, dev2;
	ino_t ino, ino2;

	open_store();
	a = get("a");
	b = get("b");
	sfs_image_identity(a, &dev, &ino);
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_write(a, w, BS, 3 * BS), (ssize_t)BS);
	sfs_image_unpin(a);
	cr_expect(sfs_image_resident(a), "idle within the budget: still open");
	cr_assert_eq(sfs_image_pin(b), 0);
	cr_expect_not(sfs_image_resident(a), "a evicted to open b");
	cr_expect_eq(tally().evictions, 1);
	sfs_image_unpin(b);

	/* written before the eviction: the bit is durable in the map file */
	int sfd = openat(ts.fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sfs_map *m = tmp_map_open_ro(sfd, "a.map");

	cr_expect(sfs_map_test(m, 3), "the eviction flushed the map");
	sfs_map_close(m);
	close(sfd);

	cr_assert_eq(sfs_image_pin(a), 0);
	cr_expect(sfs_image_resident(a));
	cr_expect_not(sfs_image_resident(b), "b evicted to open a again");
	sfs_image_identity(a, &dev2, &ino2);
	cr_expect(dev == dev2 && ino == ino2);
	cr_expect_eq(sfs_map_count(sfs_image_map(a)), 1);
	cr_expect(sfs_map_test(sfs_image_map(a), 3));
	cr_assert_eq(sfs_image_read(a, r, BS, 3 * BS), (ssize_t)BS);
	cr_expect_eq(memcmp(r, w, BS), 0, "the block written before the eviction reads back");
	cr_assert_eq(sfs_image_read(a, r, BS, 0), (ssize_t)BS);
	cr_expect_eq(r[0], 0);
	sfs_image_stats_snapshot(a, &snap);
	cr_expect_eq(snap.writes, 1, "stats kept across the eviction");
	cr_expect_eq(snap.reads, 2);
	sfs_image_unpin(a);
	sfs_store_put(st, a);
	sfs_store_put(st, b);
	free(w);
	free(r);
}

Test(imgcache, pinned_image_never_evicted)
{
	struct sfs_image *im[3];
	char *w = block_of('P');

	open_store();
	for (int i = 0; i < 3; i++) {
		im[i] = get((const char *[]){ "a", "b", "c" }[i]);
		cr_assert_eq(sfs_image_pin(im[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		cr_expect(sfs_image_resident(im[i]), "pinned image %d closed", i);
		cr_expect_eq(sfs_image_write(im[i], w, BS, 0), (ssize_t)BS);
	}
	cr_expect_eq(tally().open_now, 3, "past the budget rather than closing a pinned image");
	for (int i = 0; i < 3; i++) {
		sfs_image_unpin(im[i]);
		sfs_store_put(st, im[i]);
	}
	cr_expect_leq(tally().open_now, 1, "back within the budget once unpinned");
	free(w);
}

Test(imgcache, backing_file_replaced_while_evicted_is_removal)
{
	struct sfs_image *a, *b, *a2;
	char *w = block_of('O'), *r = block_of(0), newdata[4096];

	open_store();
	a = get("a");
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_write(a, w, BS, 0), (ssize_t)BS);
	sfs_image_unpin(a);
	b = get("b");
	cr_assert_eq(sfs_image_pin(b), 0);
	sfs_image_unpin(b);
	cr_assert_not(sfs_image_resident(a));
	/* another file under the name, as a copy into the store would leave it */
	memset(newdata, 'N', sizeof(newdata));
	tmp_write_file(ts.fd, "a.new", newdata, sizeof(newdata));
	cr_assert_eq(renameat(ts.fd, "a.new", ts.fd, "a"), 0);
	cr_expect_eq(sfs_image_pin(a), -ENOENT, "reopened a file that is not the image's");
	cr_expect(sfs_image_backing_gone(a));
	/* the next lookup drops the old instance and serves the file now there */
	a2 = get("a");
	cr_expect_neq(a2, a, "the old instance is still served");
	cr_expect(strstr(cap.buf, "a: backing file removed from the store while served"), "log: %s", cap.buf);
	cr_assert_eq(sfs_image_pin(a2), 0);
	cr_assert_eq(sfs_image_read(a2, r, 4096, 0), 4096);
	cr_expect_eq(memcmp(r, newdata, 4096), 0, "the new file's data");
	sfs_image_unpin(a2);
	sfs_store_put(st, a2);
	sfs_store_put(st, a);           /* the last reference of the old instance */
	sfs_store_put(st, b);
	free(w);
	free(r);
}

Test(imgcache, map_replaced_while_evicted_is_refused)
{
	struct sfs_image *a, *b;
	char buf[65536];
	ssize_t n;
	int sfd;

	open_store();
	a = get("a");
	cr_assert_eq(sfs_image_pin(a), 0);
	sfs_image_unpin(a);
	b = get("b");
	cr_assert_eq(sfs_image_pin(b), 0);
	sfs_image_unpin(b);
	cr_assert_not(sfs_image_resident(a));
	/* the same bytes in another file: still not the map the image had */
	sfd = openat(ts.fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = tmp_read_file(sfd, "a.map", buf, sizeof(buf));
	cr_assert_gt(n, 0);
	tmp_write_file(sfd, "a.map.copy", buf, (size_t)n);
	cr_assert_eq(renameat(sfd, "a.map.copy", sfd, "a.map"), 0);
	close(sfd);
	cr_expect_eq(sfs_image_pin(a), -EUCLEAN);
	cr_expect(strstr(cap.buf, "a.map: changed behind the daemon's back"), "log: %s", cap.buf);
	sfs_store_put(st, a);
	sfs_store_put(st, b);
}

Test(imgcache, rename_unlink_and_grow_of_evicted_images)
{
	struct sfs_image *a, *b, *z;
	char *w = block_of('R'), *r = block_of(0);
	struct sfs_sidecar sc;
	char err[256];

	open_store();
	a = get("a");
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_write(a, w, BS, BS), (ssize_t)BS);
	sfs_image_unpin(a);
	sfs_store_put(st, a);
	b = get("b");
	cr_assert_eq(sfs_image_pin(b), 0);
	sfs_image_unpin(b);
	cr_assert_eq(sfs_store_rename(st, "a", "z", false), 0);
	z = get("z");
	cr_expect_eq(z, a, "the same instance, renamed");
	cr_expect_not(sfs_image_resident(z));
	cr_assert_eq(sfs_store_resize(st, z, 2 << 20), 0, "grow of an evicted image");
	cr_assert_eq(sfs_sidecar_load(ts.fd, "z.json", &sc, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sc.size, 2 << 20);
	cr_assert_eq(sfs_image_pin(b), 0);  /* z evicted again */
	sfs_image_unpin(b);
	cr_assert_eq(sfs_image_pin(z), 0, "reopened under its new name");
	cr_assert_eq(sfs_image_read(z, r, BS, BS), (ssize_t)BS);
	cr_expect_eq(memcmp(r, w, BS), 0);
	cr_expect_eq(sfs_image_geom(z).size, 2 << 20);
	sfs_image_unpin(z);
	sfs_store_put(st, z);
	cr_assert_eq(sfs_image_pin(b), 0);
	sfs_image_unpin(b);
	sfs_store_put(st, b);
	cr_assert_eq(sfs_store_unlink(st, "z"), 0);
	cr_expect_not(tmp_exists(ts.fd, "z"));
	cr_expect_not(tmp_exists(ts.fd, "z.json"));
	cr_expect_eq(tally().served, 2);
	free(w);
	free(r);
}

Test(imgcache, stats_made_at_the_first_io_keep_their_generation)
{
	struct sfs_stats_snap before, after;
	struct sfs_image *a;
	char *r = block_of(0);

	open_store();
	a = get("a");
	sfs_image_stats_snapshot(a, &before);
	cr_expect_eq(before.reads, 0);
	cr_expect_not(sfs_image_has_stats(a), "a snapshot made the stats");
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_read(a, r, 4096, 0), 4096);
	cr_expect(sfs_image_has_stats(a));
	sfs_image_stats_snapshot(a, &after);
	cr_expect_eq(after.reads, 1);
	cr_expect_eq(after.reset_generation, before.reset_generation, "no reset happened: same generation");
	cr_expect_geq(after.elapsed_ns, before.elapsed_ns);
	sfs_image_unpin(a);
	sfs_store_put(st, a);
	free(r);
}

/* Two snapshots hold the same figures (the elapsed time aside). */
static bool same_figures(struct sfs_stats_snap *x, struct sfs_stats_snap *y)
{
	x->elapsed_ns = y->elapsed_ns = 0;
	return memcmp(x, y, sizeof(*x)) == 0;
}

Test(imgcache, idle_look_closes_unused_images_and_packs_quiet_stats)
{
	static struct sfs_stats_snap a1, a2, c1, c2;
	static struct sfs_stats_recent ra1, ra2;
	struct sfs_image *a, *b, *c;
	struct sfs_store_idle gave;
	char *w = block_of('W'), *r = block_of(0);

	opts.fd_budget = 9;          /* three images open at once */
	open_store();
	a = get("a");
	b = get("b");
	c = get("c");
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_write(a, w, BS, 3 * BS), (ssize_t)BS);
	cr_assert_eq(sfs_image_read(a, r, BS, 0), (ssize_t)BS);
	cr_assert_eq(sfs_image_write(a, w, 512, 100), -EINVAL);   /* into the recent refused list */
	sfs_image_unpin(a);
	cr_assert_eq(sfs_image_pin(b), 0);
	sfs_image_unpin(b);
	cr_assert_eq(sfs_image_pin(c), 0);                     /* held open all along */
	cr_assert_eq(sfs_image_read(c, r, 4096, 0), 4096);
	cr_expect_eq(tally().open_now, 3);
	sfs_image_stats_snapshot(a, &a1);
	sfs_image_stats_recent(a, &ra1);
	sfs_image_stats_snapshot(c, &c1);

	sfs_store_idle(st, 0, &gave);
	cr_expect_eq(gave.closed, 2, "a and b, unpinned, closed");
	cr_expect_eq(gave.packed, 0, "the first look only starts the quiet time");
	cr_expect_not(sfs_image_resident(a));
	cr_expect_not(sfs_image_resident(b));
	cr_expect(sfs_image_resident(c), "a pinned image was closed");
	sfs_store_idle(st, 0, &gave);
	cr_expect_eq(gave.packed, 2, "the stats of a and c, quiet since the last look");
	cr_expect_eq(gave.closed, 0);
	cr_expect(sfs_image_has_stats(a) && sfs_image_has_stats(c));
	cr_expect_not(sfs_image_has_stats(b), "b never had I/O");
	sfs_image_stats_snapshot(a, &a2);
	sfs_image_stats_snapshot(c, &c2);
	sfs_image_stats_recent(a, &ra2);
	cr_expect(ra1.nrefused == 1 && ra2.nrefused == 1 && ra2.nrmw == ra1.nrmw &&
		  memcmp(&ra1.refused[0], &ra2.refused[0], sizeof(ra1.refused[0])) == 0,
		  "a's recent refused list changed when packed");
	cr_expect(same_figures(&a1, &a2), "a's figures changed when packed");
	cr_expect(same_figures(&c1, &c2), "c's figures changed when packed");

	/* the next I/O reopens a and counts on */
	cr_assert_eq(sfs_image_pin(a), 0);
	cr_assert_eq(sfs_image_read(a, r, BS, 3 * BS), (ssize_t)BS);
	cr_expect_eq(memcmp(r, w, BS), 0, "the block written before the close reads back");
	sfs_image_unpin(a);
	sfs_image_stats_snapshot(a, &a2);
	cr_expect_eq(a2.reads, a1.reads + 1);
	cr_expect_eq(a2.writes, a1.writes);
	cr_expect_eq(a2.misaligned_rejected, 1);
	cr_expect_eq(a2.reset_generation, a1.reset_generation);
	sfs_image_unpin(c);
	sfs_store_put(st, a);
	sfs_store_put(st, b);
	sfs_store_put(st, c);
	free(w);
	free(r);
}

struct settle_arg {
	struct sfs_image *im;
	pthread_barrier_t *go;
	int rc;
};

static void *settle_thread(void *p)
{
	struct settle_arg *a = p;

	pthread_barrier_wait(a->go);
	a->rc = sfs_store_settle(st, a->im, true);
	return NULL;
}

/* The creator's close (settle, done) comes asynchronously: a truncate by another open of the
 * image may run at the same moment, and must grow it whichever goes first. */
Test(imgcache, grow_racing_the_creators_close)
{
	char *w = block_of('G');
	pthread_barrier_t go;

	opts.fd_budget = 0;          /* the race is the store's, not the cache's */
	open_store();
	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 200; i++) {
		struct settle_arg a = { NULL, &go, 0 };
		char name[32];
		pthread_t t;
		int rc;

		snprintf(name, sizeof(name), "g%d", i);
		cr_assert_eq(sfs_store_create(st, name, &a.im), 0);
		sfs_image_set_growing(a.im, true);
		cr_assert_eq(sfs_store_write_growing(st, a.im, w, 4096, 0, true), 4096);
		pthread_create(&t, NULL, settle_thread, &a);
		pthread_barrier_wait(&go);
		rc = sfs_store_resize(st, a.im, 8192);
		pthread_join(t, NULL);
		cr_assert_eq(rc, 0, "round %d: the truncate racing the creator's close failed: %s", i, strerror(-rc));
		cr_assert_eq(a.rc, 0);
		cr_assert_eq(sfs_image_geom(a.im).size, 8192, "round %d", i);
		cr_assert_eq(sfs_image_capacity(a.im), 8192, "round %d", i);
		sfs_store_put(st, a.im);
	}
	pthread_barrier_destroy(&go);
	free(w);
}
