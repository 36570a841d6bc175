/* SPDX-License-Identifier: MIT */
/*
 * test_identity.c - nothing a user puts in a store is taken for a file of
 * the daemon's, even on an inode number the daemon's file had (ext4 hands
 * a freed one to the next file at once), and one image that recovery
 * cannot put right keeps only itself out of service.
 *
 * Each crash is real: the operation runs in a forked child whose step
 * hook (core/util/step_test.h) exits at the step named, as a power cut would stop
 * it.  The user then removes the image's file and makes files under its
 * name until one gets the old inode number (reuse_inode; where the
 * filesystem under /tmp does not give it out again soon enough, the stat
 * calls of this program report it, which is all the daemon sees of a
 * reuse).  Proves:
 *   - the next start leaves that file alone after an unlink, a make of
 *     sectorfs-img, and a grow interrupted, and a rename record never
 *     moves the image onto a name the user took meanwhile;
 *   - the descriptor cache never reopens such a file as the image's;
 *   - a record whose image is gone is dropped, one that cannot be applied
 *     (its map unreadable) or that is not a regular file keeps its image
 *     out and the store serves the others;
 *   - a map copied from another image, or one whose backing file was
 *     replaced, is refused, and a map of an older version is given an
 *     identity at its first open;
 *   - a declared image whose backing file is missing is made again only
 *     when its map records no data (an interrupted create), with a line;
 *   - a FIFO as a map, a record or the lock file is never waited on;
 *   - a create replaces a map a removed image left, and images are made
 *     where the filesystem has no O_TMPFILE (openat refuses it here).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "util/step_test.h"
#include "store/intent.h"
#include "store/store.h"
#include "fixtures/store_fixture.h"

#define KiB 1024ull
#define DISK "{\"size\": \"1M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}"
#define USER "the user's own file, made after the crash\n"

static bool no_tmpfile;          /* openat refuses O_TMPFILE, as some filesystems do */
static unsigned tmpfile_refused;

/* A file reported under another inode number (reuse_inode) */
static struct {
	bool on;
	dev_t dev;
	ino_t real, fake;
} alias;

static void setup(void)
{
	store_setup("ident", true, "test_identity");
}

static void teardown(void)
{
	alias.on = false;
	no_tmpfile = false;
	store_teardown();
}

TestSuite(identity, .init = setup, .fini = teardown, .timeout = 30);

/* ---- helpers ---- */

/* ---- an inode number given out again ----
 *
 * Where the filesystem under /tmp does not give the number out again soon enough (other
 * processes free lower ones all the time), the collision is made: the stat calls of this
 * program report the user's new file with the old file's inode number (and nothing else
 * changed), which is what the daemon sees when the filesystem reuses it. */


static void *real_fn(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		abort();
	return p;
}

/* What a stat call of rc filling st returns: rc, st's inode number replaced when it is the
 * aliased file's. */
static int aliased(int rc, struct stat *st)
{
	if (rc == 0 && alias.on && st->st_dev == alias.dev && st->st_ino == alias.real)
		st->st_ino = alias.fake;
	return rc;
}

int alias_fstat(int fd, struct stat *st) __asm__("fstat");
int alias_fstat64(int fd, struct stat *st) __asm__("fstat64");
int alias_fstatat(int dfd, const char *path, struct stat *st, int flags) __asm__("fstatat");
int alias_fstatat64(int dfd, const char *path, struct stat *st, int flags) __asm__("fstatat64");

int alias_fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);

	if (!real)
		real = real_fn("fstat");
	return aliased(real(fd, st), st);
}

int alias_fstat64(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);

	if (!real)
		real = real_fn("fstat64");
	return aliased(real(fd, st), st);
}

int alias_fstatat(int dfd, const char *path, struct stat *st, int flags)
{
	static int (*real)(int, const char *, struct stat *, int);

	if (!real)
		real = real_fn("fstatat");
	return aliased(real(dfd, path, st, flags), st);
}

int alias_fstatat64(int dfd, const char *path, struct stat *st, int flags)
{
	static int (*real)(int, const char *, struct stat *, int);

	if (!real)
		real = real_fn("fstatat64");
	return aliased(real(dfd, path, st, flags), st);
}

int statx(int dfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	static int (*real)(int, const char *, int, unsigned, struct statx *);
	int rc;

	if (!real)
		real = real_fn("statx");
	rc = real(dfd, path, flags, mask, sx);

	if (rc == 0 && alias.on && makedev(sx->stx_dev_major, sx->stx_dev_minor) == alias.dev &&
	    sx->stx_ino == alias.real)
		sx->stx_ino = alias.fake;
	return rc;
}

/* ---- a filesystem without O_TMPFILE (openat refuses it while no_tmpfile is set) ---- */

int ident_openat(int dfd, const char *path, int flags, ...) __asm__("openat");
int ident_openat64(int dfd, const char *path, int flags, ...) __asm__("openat64");

static int openat_as(const char *name, int dfd, const char *path, int flags, mode_t mode)
{
	int (*real)(int, const char *, int, ...) = real_fn(name);

	if (no_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		tmpfile_refused++;
		errno = EOPNOTSUPP;
		return -1;
	}
	return real(dfd, path, flags, mode);
}

/* The interposer fn of the libc call name: its mode argument (only with O_CREAT or O_TMPFILE)
 * read, then openat_as. */
#define IDENT_OPENAT(fn, name)                                         \
	int fn(int dfd, const char *path, int flags, ...)              \
	{                                                              \
		mode_t mode = 0;                                       \
		va_list ap;                                            \
                                                                       \
		va_start(ap, flags);                                   \
		if (flags & (O_CREAT | O_TMPFILE))                     \
			mode = va_arg(ap, mode_t);                     \
		va_end(ap);                                            \
		return openat_as(name, dfd, path, flags, mode);        \
	}

IDENT_OPENAT(ident_openat, "openat")
IDENT_OPENAT(ident_openat64, "openat64")

/* The user: STORE/name removed, and files made under that name until one has inode ino again,
 * holding text.  A file that gets another number is kept aside (in a directory of its own), so
 * that the lower numbers freed by others are taken and ours comes next; after 2000 the last is
 * given the number (alias above). */
static void reuse_inode(const char *name, ino_t ino, const char *text)
{
	char pad[32];
	struct stat st;
	int i, pads;

	/* the directory first: made after the unlink, it could take the number itself */
	mkdirat(ts.fd, ".pads", 0700);
	pads = openat(ts.fd, ".pads", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(pads, 0);
	unlinkat(ts.fd, name, 0);
	for (i = 0;; i++) {
		tmp_write_file(ts.fd, name, text, strlen(text));
		st = tmp_stat(ts.fd, name);
		if (st.st_ino == ino || i == 2000)
			break;
		snprintf(pad, sizeof(pad), "%d", i);
		cr_assert_eq(renameat(ts.fd, name, pads, pad), 0);
	}
	tmp_rm_below(pads);
	close(pads);
	unlinkat(ts.fd, ".pads", AT_REMOVEDIR);
	if (st.st_ino != ino) {
		alias.dev = st.st_dev;
		alias.real = st.st_ino;
		alias.fake = ino;
		alias.on = true;
		cr_log_info("inode %lu not given out again after %d files: the collision is made",
			    (unsigned long)ino, i);
	}
}

static void expect_user_file(const char *name, const char *text)
{
	char buf[256];

	cr_expect_eq(tmp_read_file(ts.fd, name, buf, sizeof(buf)), (ssize_t)strlen(text),
		     "%s: the user's file is gone or changed (log: %s)", name, cap.buf);
	cr_expect_str_eq(buf, text, "%s: the user's file was changed", name);
}

/* ---- the next start and a file that took the inode of the daemon's ---- */

static int unlink_a(struct sfs_store *s)
{
	return sfs_store_unlink(s, "a");
}

Test(identity, interrupted_unlink_leaves_a_user_file_on_the_inode)
{
	ino_t ino;

	make_lettered("a b", DISK);
	ino = tmp_stat(ts.fd, "a").st_ino;
	crash_during("unlink", 2, unlink_a);          /* the sidecar gone: the commit */
	cr_assert(state_exists("a.unlink") && !tmp_exists(ts.fd, "a.json"));
	reuse_inode("a", ino, USER);
	cr_assert_eq(sfs_store_close(open_store()), 0);
	expect_user_file("a", USER);
	cr_expect(!state_exists("a.unlink") && !state_exists("a.map"), "the unlink was not finished");
	cr_expect(strstr(cap.buf, "a: not the backing file"), "log: %s", cap.buf);
}

static int make_c(struct sfs_store *s)
{
	struct sfs_sidecar sc;
	char err[512];

	sfs_sidecar_defaults(&sc);
	sc.size = 1024 * KiB;
	return sfs_store_make_image(s, "c", &sc, -1, NULL, err, sizeof(err));
}

Test(identity, interrupted_make_leaves_a_user_file_on_the_inode)
{
	ino_t ino;

	make_lettered("b", DISK);
	crash_during("make", 3, make_c);              /* backing file, map, the record naming them */
	cr_assert(state_exists("c.create") && tmp_exists(ts.fd, "c") && !tmp_exists(ts.fd, "c.json"));
	ino = tmp_stat(ts.fd, "c").st_ino;
	reuse_inode("c", ino, USER);
	cr_assert_eq(sfs_store_close(open_store()), 0);
	expect_user_file("c", USER);
	cr_expect(!state_exists("c.create") && !state_exists("c.map"), "the make was not undone");
}

static int rename_a_b(struct sfs_store *s)
{
	return sfs_store_rename(s, "a", "b", false);
}

Test(identity, interrupted_rename_never_moves_onto_a_name_taken_since)
{
	struct sfs_store *s;
	struct sfs_image *im;
	unsigned char buf[4096];

	make_lettered("a", DISK);
	crash_during("rename", 1, rename_a_b);        /* the record written, nothing moved */
	cr_assert(state_exists("a.rename"));
	tmp_write_file(ts.fd, "b", USER, strlen(USER));
	s = open_store();
	expect_user_file("b", USER);
	cr_expect(!state_exists("a.rename"));
	im = get(s, "a");                              /* rolled back: the image stays a */
	cr_assert_eq(sfs_image_pin(im), 0);
	cr_assert_eq(sfs_image_read(im, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	cr_expect_eq(buf[0], 'a', "a's data");
	sfs_image_unpin(im);
	sfs_store_put(s, im);
	cr_assert_eq(sfs_store_close(s), 0);
}

static int grow_a(struct sfs_store *s)
{
	struct sfs_image *im = get(s, "a");

	return sfs_store_resize(s, im, 2048 * KiB);
}

Test(identity, interrupted_grow_never_cuts_a_user_file_on_the_inode)
{
	char big[3 * 1024 * 1024 / 64];
	ino_t ino;

	make_lettered("a b", DISK);
	crash_during("grow", 2, grow_a);              /* backing file extended, map header old */
	cr_assert(state_exists("a.grow"));
	ino = tmp_stat(ts.fd, "a").st_ino;
	memset(big, 'U', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	reuse_inode("a", ino, big);
	cr_assert_eq(sfs_store_close(open_store()), 0);
	cr_expect_eq(tmp_stat(ts.fd, "a").st_size, (off_t)strlen(big), "the user's file was cut (log: %s)",
		     cap.buf);
	cr_expect(!state_exists("a.grow"));
}

/* An unlink an older version left (its record names the file by device and inode only, its map
 * records no identity): the file is left alone, as any file no record vouches for, and the log
 * says why in those terms (not "another file took the name"), with what to do. */
Test(identity, an_unlink_of_an_older_version_says_why_it_leaves_the_file)
{
	struct sfs_map_info mi = { { 1024 * KiB, 4096, 4096, 64 * KiB }, SFS_PROV_THIN, 0 };
	struct stat st;
	struct sfs_map *m;
	char text[64];

	tmp_write_file(ts.fd, "a", "data", 4);
	cr_assert_eq(sfs_map_create(ts.statefd, "a.map", &mi, &m), 0);
	sfs_map_close(m);
	st = tmp_stat(ts.fd, "a");
	snprintf(text, sizeof(text), "unlink %llu %llu\n", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	cr_assert_eq(sfs_intent_put(ts.statefd, "a", ".unlink", text), 0);   /* past its commit: no sidecar */
	cr_assert_eq(sfs_store_close(open_store()), 0);
	cr_expect(tmp_exists(ts.fd, "a"), "a file no identity vouches for was removed");
	cr_expect(!state_exists("a.unlink"));
	cr_expect(strstr(cap.buf, "a record of an older version"), "log: %s", cap.buf);
	cr_expect(!strstr(cap.buf, "another file took the name"), "log: %s", cap.buf);
}

/* A grow an older version left before its commit: undone, its backing file (which no map identity
 * vouches for) left longer, and the log says why in those terms. */
Test(identity, a_grow_of_an_older_version_says_why_it_leaves_the_file_longer)
{
	struct sfs_map_info mi = { { 1024 * KiB, 4096, 4096, 64 * KiB }, SFS_PROV_THIN, 0 };
	struct sfs_map *m;
	char text[64];
	int fd;

	tmp_write_sidecar(ts.fd, "a", "{\"size\": \"2M\", \"sector\": \"4kn\", \"block_size\": \"64K\"}");
	tmp_write_file(ts.fd, "a", "", 0);
	fd = openat(ts.fd, "a", O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 2048 * KiB), 0);      /* extended, the map header still old */
	close(fd);
	cr_assert_eq(sfs_map_create(ts.statefd, "a.map", &mi, &m), 0);
	sfs_map_close(m);
	snprintf(text, sizeof(text), "grow %llu %llu %llu 1\n", 1024 * KiB, 2048 * KiB, 1024 * KiB);
	cr_assert_eq(sfs_intent_put(ts.statefd, "a", ".grow", text), 0);
	cr_assert_eq(sfs_store_close(open_store()), 0);
	cr_expect(!state_exists("a.grow"));
	cr_expect_eq(tmp_stat(ts.fd, "a").st_size, (off_t)(2048 * KiB), "a file no identity vouches for was cut");
	cr_expect(strstr(cap.buf, "a record of an older version"), "log: %s", cap.buf);
}

/* ---- the descriptor cache ---- */

Test(identity, evicted_image_is_never_reopened_on_a_file_that_took_its_inode)
{
	struct sfs_image *a, *b;
	struct sfs_store *s;
	ino_t ino;

	make_lettered("a b", DISK);
	opts.fd_budget = 3;                           /* one image's descriptors at a time */
	a = open_get("a", &s);
	cr_assert_eq(sfs_image_pin(a), 0);
	sfs_image_unpin(a);
	b = get(s, "b");
	cr_assert_eq(sfs_image_pin(b), 0);            /* a evicted */
	sfs_image_unpin(b);
	ino = tmp_stat(ts.fd, "a").st_ino;
	reuse_inode("a", ino, USER);
	cr_expect_eq(sfs_image_pin(a), -ENOENT, "the user's file was opened as the image's");
	expect_user_file("a", USER);
	sfs_store_put(s, a);
	sfs_store_put(s, b);
	cr_assert_eq(sfs_store_close(s), 0);
	expect_user_file("a", USER);
}

/* ---- records the start cannot apply ---- */

/* Image a is not served by s (what says how it would be), the reason naming why (NULL: any). */
static void expect_a_refused(struct sfs_store *s, const char *what, const char *why)
{
	struct sfs_image *im = NULL;
	char err[1024] = "";

	cr_expect_neq(sfs_store_lookup(s, "a", &im, err, sizeof(err)), 0, "%s", what);
	if (why)
		cr_expect(strstr(err, why), "why: %s", err);
}

/* Image name is served by s, and s closes. */
static void expect_served_and_close(struct sfs_store *s, const char *name)
{
	sfs_store_put(s, get(s, name));
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(identity, grow_record_of_an_image_removed_by_hand_is_dropped)
{
	struct sfs_store *s;

	make_lettered("a b", DISK);
	crash_during("grow", 2, grow_a);
	cr_assert(state_exists("a.grow"));
	cr_assert_eq(unlinkat(ts.fd, "a", 0), 0);
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	cr_assert_eq(unlinkat(ts.statefd, "a.map", 0), 0);
	s = open_store();                              /* not "cannot put the store right" */
	cr_expect(!state_exists("a.grow"), "the record of the image gone stays");
	cr_expect(strstr(cap.buf, "a: dropped an interrupted grow: its image is gone"), "log: %s", cap.buf);
	expect_served_and_close(s, "b");
}

Test(identity, a_record_that_cannot_be_applied_keeps_only_its_image_out)
{
	struct sfs_store *s;

	make_lettered("a b", DISK);
	crash_during("grow", 2, grow_a);
	tmp_write_file(ts.statefd, "a.map", "not a map", 9);      /* the commit point unreadable */
	s = open_store();
	cr_expect(state_exists("a.grow"), "the record was dropped without being applied");
	expect_a_refused(s, "a served", "a: an interrupted grow (.sectorfs/a.grow)");
	expect_served_and_close(s, "b");
}

Test(identity, a_fifo_as_a_record_is_never_read_and_keeps_its_image_out, .timeout = 10)
{
	struct sfs_store *s;
	struct stat st;

	make_lettered("a b", DISK);
	cr_assert_eq(mkfifoat(ts.statefd, "a.grow", 0600), 0);
	s = open_store();
	cr_expect(fstatat(ts.statefd, "a.grow", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode),
		  "the FIFO was removed as a damaged record");
	expect_a_refused(s, "a served", NULL);
	expect_served_and_close(s, "b");
}

/* ---- maps that are not the image's ---- */

static void copy_file(int dirfd, const char *from, const char *to)
{
	static char buf[1 << 20];
	ssize_t n = tmp_read_file(dirfd, from, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	tmp_write_file(dirfd, ".copy", buf, (size_t)n);
	cr_assert_eq(renameat(dirfd, ".copy", dirfd, to), 0);
}

Test(identity, a_map_copied_from_another_image_is_refused)
{
	struct sfs_store *s;

	make_lettered("a b", DISK);
	copy_file(ts.statefd, "b.map", "a.map");      /* the same geometry, b's bits */
	s = open_store();
	expect_a_refused(s, "a served through b's map", "a copy of the map of image 'b'");
	expect_served_and_close(s, "b");
}

Test(identity, a_backing_file_replaced_while_stopped_is_not_served_through_the_old_map)
{
	struct sfs_store *s;

	make_lettered("a", DISK);
	copy_file(ts.fd, "a", "a");                    /* the same bytes, another file */
	s = open_store();
	expect_a_refused(s, "served through the old map", "made for a backing file that is no longer there");
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(identity, a_map_of_an_older_version_gets_an_identity)
{
	struct sfs_map_info mi = { { 1024 * KiB, 4096, 4096, 64 * KiB }, SFS_PROV_THIN, 0 };
	struct sfs_map *m;

	tmp_write_sidecar(ts.fd, "a", DISK);
	tmp_write_file(ts.fd, "a", "", 0);
	cr_assert_eq(sfs_map_create(ts.statefd, "a.map", &mi, &m), 0);
	cr_expect_not(sfs_map_ident(m)->present);
	sfs_map_close(m);
	expect_served_and_close(open_store(), "a");
	m = tmp_map_open_ro(ts.statefd, "a.map");
	cr_expect(sfs_map_ident(m)->present, "no identity recorded");
	cr_expect_str_eq(sfs_map_ident(m)->name, "a");
	cr_expect_eq(sfs_map_ident(m)->backing.ino, (uint64_t)tmp_stat(ts.fd, "a").st_ino);
	sfs_map_close(m);
}

/* ---- a backing file missing ---- */

Test(identity, a_create_cut_before_its_backing_file_is_finished_and_logged)
{
	tmp_write_sidecar(ts.fd, "a", DISK);
	sfs_store_close(open_store());
	cr_assert_eq(unlinkat(ts.fd, "a", 0), 0);     /* sidecar and a map of no data left */
	logcap_clear(&cap);
	expect_served_and_close(open_store(), "a");
	cr_expect(tmp_exists(ts.fd, "a"));
	cr_expect(strstr(cap.buf, "a: backing file missing, and its map records no data: made now"), "log: %s",
		  cap.buf);
}

Test(identity, a_backing_file_gone_whose_map_records_data_is_not_made_again_empty)
{
	struct sfs_store *s;

	make_lettered("a", DISK);
	cr_assert_eq(unlinkat(ts.fd, "a", 0), 0);
	s = open_store();
	expect_a_refused(s, "made again, empty", "backing file missing while its map records 1 block of data");
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect(!tmp_exists(ts.fd, "a"));
}

/* ---- FIFOs in the state directory ---- */

Test(identity, a_fifo_as_a_map_is_never_waited_on, .timeout = 10)
{
	struct sfs_map *m = NULL;
	char err[512] = "";

	cr_assert_eq(mkfifoat(ts.statefd, "x.map", 0600), 0);
	cr_expect_eq(sfs_map_open(ts.statefd, "x.map", SFS_MAP_RDONLY, NULL, &m, err, sizeof(err)), -EUCLEAN,
		     "%s", err);
	cr_expect(strstr(err, "not a regular file"), "%s", err);
}

/* A symbolic link, a socket or a directory as a map is not a map either (and so check --repair
 * puts it aside as it does a FIFO), not a map that cannot be read. */
Test(identity, a_link_a_socket_or_a_directory_as_a_map_is_not_a_regular_file)
{
	static const char *const names[] = { "link.map", "dangling.map", "sock.map", "dir.map" };
	struct sfs_map *m = NULL;

	tmp_write_file(ts.statefd, "real.map", "x", 1);
	cr_assert_eq(symlinkat("real.map", ts.statefd, "link.map"), 0);
	cr_assert_eq(symlinkat("nowhere.map", ts.statefd, "dangling.map"), 0);
	cr_assert_eq(mknodat(ts.statefd, "sock.map", S_IFSOCK | 0600, 0), 0);
	cr_assert_eq(mkdirat(ts.statefd, "dir.map", 0700), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (unsigned ro = 0; ro <= SFS_MAP_RDONLY; ro += SFS_MAP_RDONLY) {
			char err[512] = "";

			cr_expect_eq(sfs_map_open(ts.statefd, names[i], ro, NULL, &m, err, sizeof(err)), -EUCLEAN,
				     "%s (%s): %s", names[i], ro ? "read-only" : "read-write", err);
			cr_expect(strstr(err, "not a regular file"), "%s: %s", names[i], err);
		}
	}
}

/* A directory under a temporary file's name in the state directory: check says the next start
 * removes it, so the start does (an empty one; one that holds files is logged and stays). */
Test(identity, an_empty_directory_under_a_temporary_name_is_removed_at_the_start)
{
	struct sfs_store *s;

	cr_assert_eq(mkdirat(ts.statefd, ".tmp.123.4", 0700), 0);
	cr_assert_eq(mkdirat(ts.statefd, "a.map.new", 0700), 0);
	cr_assert_eq(mkdirat(ts.statefd, "b.map.tmp.77", 0700), 0);
	cr_assert_eq(mkdirat(ts.statefd, ".tmp.9.9", 0700), 0);
	tmp_write_file(ts.statefd, ".tmp.9.9/x", "x", 1);
	s = open_store();
	cr_assert_eq(sfs_store_close(s), 0);
	cr_expect(!state_exists(".tmp.123.4"), "log: %s", cap.buf);
	cr_expect(!state_exists("a.map.new"), "log: %s", cap.buf);
	cr_expect(!state_exists("b.map.tmp.77"), "log: %s", cap.buf);
	cr_expect(state_exists(".tmp.9.9/x"), "a directory that holds a file was emptied");
	cr_expect(strstr(cap.buf, ".tmp.9.9"), "the one that stays is not logged: %s", cap.buf);
}

Test(identity, a_fifo_as_the_lock_file_is_never_waited_on, .timeout = 10)
{
	struct sfs_store *s = NULL;
	char err[1024] = "", holder[256];

	cr_assert_eq(mkfifoat(ts.statefd, "lock", 0600), 0);
	cr_expect_neq(sfs_store_holder(ts.path, holder, sizeof(holder)), 0, "a FIFO holds the store");
	cr_expect_neq(sfs_store_open(ts.path, &opts, &s, err, sizeof(err)), 0, "locked with a FIFO");
	cr_expect(strstr(err, "lock file is a FIFO"), "%s", err);
}

Test(identity, a_create_replaces_a_map_left_by_an_image_removed_by_hand)
{
	struct sfs_image *im = NULL;
	struct sfs_store *s;

	make_lettered("a", DISK);
	cr_assert_eq(unlinkat(ts.fd, "a", 0), 0);     /* the user removed a, but not its map */
	cr_assert_eq(unlinkat(ts.fd, "a.json", 0), 0);
	s = open_store();
	cr_expect_eq(sfs_store_create(s, "a", &im), 0, "a new image over the map of a removed one (log: %s)",
		     cap.buf);
	if (im) {
		sfs_image_release(im);
		sfs_store_put(s, im);
	}
	cr_assert_eq(sfs_store_close(s), 0);
}

Test(identity, images_are_made_where_the_filesystem_has_no_o_tmpfile)
{
	struct sfs_map *m;

	tmp_write_sidecar(ts.fd, "a", DISK);
	no_tmpfile = true;
	expect_served_and_close(open_store(), "a");
	no_tmpfile = false;
	cr_expect_gt(tmpfile_refused, 0, "O_TMPFILE was never asked for");
	cr_assert(tmp_exists(ts.fd, "a"), "no backing file made");
	m = tmp_map_open_ro(ts.statefd, "a.map");
	cr_expect(sfs_map_ident(m)->present);
	cr_expect_eq(sfs_map_ident(m)->backing.ino, (uint64_t)tmp_stat(ts.fd, "a").st_ino, "the map names another file");
	sfs_map_close(m);
	expect_served_and_close(open_store(), "a"); /* and it is served again, tied */
}

Test(identity, a_rename_replaces_a_map_left_by_an_image_removed_by_hand)
{
	struct sfs_store *s;

	make_lettered("a b", DISK);
	cr_assert_eq(unlinkat(ts.fd, "b", 0), 0);     /* the user removed b, but not its map */
	cr_assert_eq(unlinkat(ts.fd, "b.json", 0), 0);
	s = open_store();
	cr_expect_eq(sfs_store_rename(s, "a", "b", false), 0, "log: %s", cap.buf);
	cr_expect(!state_exists("a.rename"), "a rename record left");
	cr_assert_eq(sfs_store_close(s), 0);
}
