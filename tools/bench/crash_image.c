/* SPDX-License-Identifier: MIT */
/*
 * crash_image.c - the image the crash explorer works on, and a fresh copy
 * of it for every round (crash.h).
 *
 * The user's image is never written.  It is read once, through the
 * mount, into a snapshot; each round then gets an image of its own,
 * NAME.crash-XXXXXX-ROUND, declared in the same store with the same sidecar
 * and the snapshot's data, and removed through the mount when the round
 * ends.  So every round starts from the same disk, with the same keys,
 * a write count that starts at 0 when it is opened (the cut's seed draws
 * by write number: a replay sees the same numbers), and its own
 * statistics, which say how many writes and flushes the workload made.
 *
 *   STORE/NAME ........ the user's image (read through MNT/NAME)
 *   STORE/.crash.XXXXXX/snapshot    its data; holes where it reads zeros
 *   STORE/.crash.XXXXXX/round  ---rename--->  STORE/NAME.crash-XXXXXX-R
 *                                             + NAME.crash-XXXXXX-R.json
 *
 * The cost of a large image.  The snapshot reads only what can hold data:
 * the extents the backing file has (SEEK_DATA), through the mount, which
 * gives the disk's contents (a thin block never written reads zeros,
 * whatever the file holds); runs of zeros stay holes.  A round's copy is
 * a reflink (FICLONE: the same blocks until written, no time, no space)
 * where the store's filesystem has them (XFS, Btrfs), else a copy of the
 * snapshot's data extents only, with copy_file_range.  The work
 * directory is in the store so that the two are on one filesystem; its
 * name starts with a dot, which the daemon never takes for an image.
 * The daemon imports the copy when it is first looked up (a raw file
 * with a sidecar and no map): its data extents become the written blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "crash.h"
#include "util/fdio.h"
#include "util/units.h"
#include "mount/mountpoint.h"
#include "testbed.h"

#define CHUNK (1u << 20)
#define ZBLOCK 4096u

/* user.sectorfs.attr of path into buf: its length, or -1 (errno). */
static ssize_t get_attr(const char *path, const char *attr, char *buf, size_t len)
{
	char name[64];
	ssize_t n;

	snprintf(name, sizeof(name), SFS_XATTR_PREFIX "%s", attr);
	n = getxattr(path, name, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static unsigned attr_uint(const char *path, const char *attr)
{
	char v[32];

	return get_attr(path, attr, v, sizeof(v)) > 0 ? (unsigned)strtoul(v, NULL, 10) : 0;
}

/* The whole small file path, NUL-terminated, malloc'd; NULL (errno) when it cannot be read or
 * is larger than 1 MiB. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = malloc(1u << 20);
	size_t n;

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, (1u << 20) - 1, f);
	if (ferror(f) || !feof(f)) {
		fclose(f);
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The image's failure keys and size from its statistics; -1 (printed). */
static int image_keys(struct crash_image *im)
{
	char path[PATH_MAX + 300];
	json_error_t e;
	json_t *j, *f;

	snprintf(path, sizeof(path), "%s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX, im->mnt, im->name);
	if (!(j = json_load_file(path, 0, &e))) {
		tool_error("cannot read %s: %s%s", path, e.text, access(path, F_OK) < 0 ?
			   " (the explorer counts the writes and flushes of each round there: a mount made "
			   "with -o nostats has none)" : "");
		return -1;
	}
	im->size = (uint64_t)json_integer_value(json_object_get(j, "size"));
	f = json_object_get(j, "failures");
	snprintf(im->write_cache, sizeof(im->write_cache), "%s",
		 json_string_value(json_object_get(f, "write_cache")) ?: "none");
	snprintf(im->policy, sizeof(im->policy), "%s",
		 json_string_value(json_object_get(f, "power_cut_policy")) ?: "lose-all");
	json_decref(j);
	return 0;
}

/* The store rel (a relative path, as a daemon started with one shows it) resolved from here
 * into out, if its lock names mnt as its mount point; -1 otherwise. */
static int relative_store(const char *mnt, const char *rel, char *out, size_t len)
{
	char abs[PATH_MAX], lock[PATH_MAX + 32], *text, *at;
	int rc = -1;

	if (!realpath(rel, abs))
		return -1;
	snprintf(lock, sizeof(lock), "%s/" SFS_STATE_DIR "/lock", abs);
	if (!(text = slurp(lock)))
		return -1;
	/* "pid 6776, mounted at /tmp/x/mnt\n" */
	if ((at = strstr(text, ", mounted at ")) && strncmp(at + 13, mnt, strlen(mnt)) == 0 &&
	    (at[13 + strlen(mnt)] == '\n' || at[13 + strlen(mnt)] == '\0') && strlen(abs) < len) {
		memcpy(out, abs, strlen(abs) + 1);
		rc = 0;
	}
	free(text);
	return rc;
}

int crash_image_find(struct crash *c, const char *path)
{
	struct crash_image *im = &c->img;
	char fstype[64], src[PATH_MAX], tmp[PATH_MAX], sc[PATH_MAX + 300], power[16], *dir;
	struct stat st;

	im->snap = -1;
	if (!realpath(path, im->path) || stat(im->path, &st) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s", im->path);
	dir = dirname(tmp);
	if (strlen(dir) >= sizeof(im->mnt)) {
		tool_error("%s: the path of its mount is too long", path);
		return -1;
	}
	memcpy(im->mnt, dir, strlen(dir) + 1);
	snprintf(tmp, sizeof(tmp), "%s", im->path);
	snprintf(im->name, sizeof(im->name), "%s", basename(tmp));
	if (!S_ISREG(st.st_mode) || !sfs_mount_lookup(im->mnt, fstype, src, sizeof(src)) ||
	    strcmp(fstype, SFS_FSTYPE) != 0 || strncmp(src, "sectorfs:", 9) != 0) {
		tool_error("%s is not an image of a sectorfs mount (MNT/NAME): the explorer cuts the power "
			   "of a sectorfs disk", path);
		return -1;
	}
	if (src[9] != '/') {
		if (relative_store(im->mnt, src + 9, tmp, sizeof(tmp)) < 0) {
			tool_error("%s: its daemon was started with the relative store path '%s', which is "
				   "not its store from here: run the explorer in the directory the daemon was "
				   "started in, or start the daemon with an absolute store path", im->mnt, src + 9);
			return -1;
		}
		snprintf(src + 9, sizeof(src) - 9, "%s", tmp);
	}
	if (strlen(src + 9) >= sizeof(im->store)) {
		tool_error("%s: the path of its store is too long", path);
		return -1;
	}
	memcpy(im->store, src + 9, strlen(src + 9) + 1);
	if (get_attr(im->path, "power", power, sizeof(power)) < 0) {
		tool_error("%s: cannot read user.sectorfs.power: %s (a sectorfs older than the failure "
			   "model?)", path, strerror(errno));
		return -1;
	}
	if (strcmp(power, "on") != 0) {
		tool_error("%s: its power is %s: write 'on' to its user.sectorfs.power first", path, power);
		return -1;
	}
	im->logical = attr_uint(im->path, "logical_sector_size");
	im->physical = attr_uint(im->path, "physical_sector_size");
	if (!sfs_is_pow2(im->logical) || im->physical < im->logical) {
		tool_error("%s: cannot read its sector sizes (user.sectorfs.logical_sector_size)", path);
		return -1;
	}
	if (image_keys(im) < 0)
		return -1;
	snprintf(sc, sizeof(sc), "%s/%s" SFS_SIDECAR_SUFFIX, im->store, im->name);
	if (!(im->sidecar = slurp(sc))) {
		tool_error("cannot read %s: %s (each round's image is declared with the same sidecar)", sc,
			   strerror(errno));
		return -1;
	}
	snprintf(im->work, sizeof(im->work), "%s/.crash.XXXXXX", im->store);
	if (!mkdtemp(im->work)) {
		tool_error("cannot make a directory in the store %s: %s (each round's image is a copy "
			   "declared there)", im->store, strerror(errno));
		im->work[0] = '\0';
		return -1;
	}
	return 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Write the non-zero ZBLOCK runs of buf[0..n) to fd at off: 0 or -errno. */
static int put_nonzero(int fd, const unsigned char *buf, size_t n, uint64_t off)
{
	size_t i = 0, run;

	while (i < n) {
		size_t b = n - i < ZBLOCK ? n - i : ZBLOCK;
		int rc;

		if (all_zero(buf + i, b)) {
			i += b;
			continue;
		}
		for (run = b; i + run < n; run += b) {
			b = n - i - run < ZBLOCK ? n - i - run : ZBLOCK;
			if (all_zero(buf + i + run, b))
				break;
		}
		if ((rc = sfs_pwrite_all(fd, buf + i, run, (off_t)(off + i))) < 0)
			return rc;
		i += run;
	}
	return 0;
}

/* The next data extent [*d, *h) of fd at or after pos, before end; false when none.  A
 * filesystem without SEEK_DATA has one extent, the whole file. */
static bool next_data(int fd, uint64_t pos, uint64_t end, uint64_t *d, uint64_t *h)
{
	off_t a, b;

	if (pos >= end)
		return false;
	if ((a = lseek(fd, (off_t)pos, SEEK_DATA)) < 0) {
		if (errno == ENXIO)
			return false;
		*d = pos;
		*h = end;
		return true;
	}
	if ((uint64_t)a >= end)
		return false;
	b = lseek(fd, a, SEEK_HOLE);
	*d = (uint64_t)a;
	*h = b < 0 || (uint64_t)b > end ? end : (uint64_t)b;
	return true;
}

/* Read [d, h) of the disk and put its non-zero runs in the snapshot; -1 (printed). */
static int snap_extent(struct crash *c, int disk, unsigned char *buf, uint64_t d, uint64_t h, uint64_t *done)
{
	struct crash_image *im = &c->img;
	char a[32], b[32];

	for (uint64_t off = d; off < h && !tool_interrupted; ) {
		size_t len = h - off < CHUNK ? (size_t)(h - off) : CHUNK;
		ssize_t n = pread(disk, buf, len, (off_t)off);
		int rc;

		if (n <= 0) {
			tool_error("%s: cannot read at byte %llu: %s", im->path, (unsigned long long)off,
				   n < 0 ? strerror(errno) : "end of the disk");
			return -1;
		}
		if ((rc = put_nonzero(im->snap, buf, (size_t)n, off)) < 0) {
			tool_error("%s/snapshot: %s", im->work, strerror(-rc));
			return -1;
		}
		off += (uint64_t)n;
		*done += (uint64_t)n;
		tool_progress_draw(&c->prog, "crash: snapshot of %s: %s of %s read", im->name,
				   tool_fmt_size(*done, TOOL_SIZE_IEC, a, sizeof(a)),
				   tool_fmt_size(im->size, TOOL_SIZE_IEC, b, sizeof(b)));
	}
	return 0;
}

int crash_image_snapshot(struct crash *c)
{
	struct crash_image *im = &c->img;
	char path[PATH_MAX + 300];
	uint64_t pos = 0, d, h, done = 0, align = im->logical > ZBLOCK ? im->logical : ZBLOCK;
	int backing, disk = -1, rc = -1;
	unsigned char *buf = bench_buf_alloc(CHUNK, 4096);
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", im->store, im->name);
	if (!buf)
		return -1;
	if ((backing = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(backing, &st) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		goto out;
	}
	if ((disk = open(im->path, O_RDONLY | O_DIRECT | O_CLOEXEC)) < 0) {
		tool_error("%s: %s", im->path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/snapshot", im->work);
	if ((im->snap = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		goto out;
	}
	/* what the backing file holds past the disk's end is not the disk's */
	while (next_data(backing, pos, im->size, &d, &h)) {
		d = d / align * align;
		h = (h + align - 1) / align * align;
		if (h > im->size)
			h = im->size;
		if (snap_extent(c, disk, buf, d, h, &done) < 0)
			goto out;
		if (tool_interrupted)
			goto out;
		pos = h;
	}
	if (ftruncate(im->snap, (off_t)im->size) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		goto out;
	}
	im->snap_bytes = 0;
	for (pos = 0; next_data(im->snap, pos, im->size, &d, &h); pos = h)
		im->snap_bytes += h - d;
	rc = 0;
out:
	tool_progress_clear(&c->prog);
	if (backing >= 0)
		close(backing);
	if (disk >= 0)
		close(disk);
	free(buf);
	return rc;
}

/* Copy [d, h) of the snapshot into dst, in the kernel where it can: 0 or -errno. */
static int copy_range(int snap, int dst, uint64_t d, uint64_t h, unsigned char *buf)
{
	loff_t in = (loff_t)d, out = (loff_t)d;

	while ((uint64_t)in < h) {
		ssize_t n = copy_file_range(snap, &in, dst, &out, h - (uint64_t)in, 0);

		if (n > 0)
			continue;
		if (n == 0)
			return -EIO;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		/* no in-kernel copy here: through the buffer */
		while ((uint64_t)in < h) {
			size_t len = h - (uint64_t)in < CHUNK ? (size_t)(h - (uint64_t)in) : CHUNK;
			ssize_t r = pread(snap, buf, len, in);
			int rc;

			if (r <= 0)
				return r < 0 ? -errno : -EIO;
			if ((rc = sfs_pwrite_all(dst, buf, (size_t)r, in)) < 0)
				return rc;
			in += r;
		}
	}
	return 0;
}

/* The snapshot into the new file dst: a reflink, or its data extents.  0 or -errno. */
static int copy_snapshot(struct crash_image *im, int dst)
{
	uint64_t pos = 0, d, h;
	unsigned char *buf = NULL;
	int rc = 0;

	if (ioctl(dst, FICLONE, im->snap) == 0) {
		im->cloned = true;
		return 0;
	}
	im->cloned = false;
	if (!(buf = malloc(CHUNK)))
		return -ENOMEM;
	for (; !rc && next_data(im->snap, pos, im->size, &d, &h); pos = h)
		rc = copy_range(im->snap, dst, d, h, buf);
	free(buf);
	if (!rc && ftruncate(dst, (off_t)im->size) < 0)
		rc = -errno;
	return rc;
}

/* Wait while the daemon zeroes the round's image in the background (an eagerzeroedthick
 * import): its writes are not the workload's.  0, -1 (printed or interrupted). */
static int wait_zeroing(struct crash *c)
{
	const struct timespec tick = { 0, 20 * 1000 * 1000 };

	for (;;) {
		json_t *j = crash_round_stats(c);
		bool running;

		if (!j)
			return -1;
		running = strcmp(json_string_value(json_object_get(j, "zeroing")) ?: "", "running") == 0;
		json_decref(j);
		if (!running)
			return 0;
		if (tool_interrupted)
			return -1;
		nanosleep(&tick, NULL);
	}
}

int crash_image_make(struct crash *c)
{
	struct crash_image *im = &c->img;
	char tmp[PATH_MAX + 16], dst[PATH_MAX + 300], sc[PATH_MAX + 300];
	int fd, rc;
	struct stat st;

	/* the work directory's unique suffix: no other explorer, and no image one left behind
	 * when it was killed, has the name */
	snprintf(c->rname, sizeof(c->rname), "%.*s.crash-%s-%u", SFS_NAME_MAX - 40, im->name,
		 strrchr(im->work, '.') + 1, c->round);
	snprintf(c->rpath, sizeof(c->rpath), "%s/%s", im->mnt, c->rname);
	snprintf(tmp, sizeof(tmp), "%s/round", im->work);
	snprintf(dst, sizeof(dst), "%s/%s", im->store, c->rname);
	snprintf(sc, sizeof(sc), "%s/%s" SFS_SIDECAR_SUFFIX, im->store, c->rname);
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		tool_error("%s: %s", tmp, strerror(errno));
		c->rname[0] = '\0';
		return -1;
	}
	rc = copy_snapshot(im, fd);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc) {
		tool_error("cannot copy the snapshot into %s: %s", tmp, strerror(-rc));
		unlink(tmp);
		c->rname[0] = '\0';
		return -1;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_NOREPLACE) < 0) {
		tool_error("cannot put the round's image in place as %s: %s", dst, strerror(errno));
		unlink(tmp);
		c->rname[0] = '\0';
		return -1;
	}
	if ((fd = open(sc, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		rc = -errno;
	} else {
		rc = sfs_pwrite_all(fd, im->sidecar, strlen(im->sidecar), 0);
		if (close(fd) < 0 && !rc)
			rc = -errno;
		if (rc)
			unlink(sc);
	}
	if (rc) {
		tool_error("%s: %s", sc, strerror(-rc));
		unlink(dst);
		c->rname[0] = '\0';
		return -1;
	}
	/* the first lookup imports it */
	if (stat(c->rpath, &st) < 0) {
		tool_error("%s: the daemon does not serve the round's image (%s); its log says why",
			   c->rpath, strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size != im->size) {
		tool_error("%s: the round's image has %llu bytes, not the %llu of %s", c->rpath,
			   (unsigned long long)st.st_size, (unsigned long long)im->size, im->path);
		return -1;
	}
	if (attr_uint(c->rpath, "logical_sector_size") != im->logical) {
		tool_error("%s: the round's image does not have the sector size of %s", c->rpath, im->path);
		return -1;
	}
	return wait_zeroing(c);
}

int crash_image_remove(struct crash *c, bool keep)
{
	char path[PATH_MAX + 300];
	int rc = 0;

	if (!c->rname[0])
		return 0;
	if (keep) {
		c->rname[0] = '\0';
		return 0;
	}
	if (unlink(c->rpath) < 0 && errno != ENOENT) {
		tool_error("cannot remove the round's image %s: %s", c->rpath, strerror(errno));
		rc = -1;
		if (errno == ENOTCONN) {
			/* no daemon: take back the two files we put in the store */
			snprintf(path, sizeof(path), "%s/%s" SFS_SIDECAR_SUFFIX, c->img.store, c->rname);
			unlink(path);
			snprintf(path, sizeof(path), "%s/%s", c->img.store, c->rname);
			unlink(path);
		}
	}
	c->rname[0] = '\0';
	return rc;
}

void crash_image_close(struct crash *c)
{
	struct crash_image *im = &c->img;

	if (im->snap >= 0)
		close(im->snap);
	im->snap = -1;
	if (im->work[0] && testbed_rm_tree(im->work) < 0)
		tool_error("cannot remove %s: %s", im->work, strerror(errno));
	im->work[0] = '\0';
	free(im->sidecar);
	im->sidecar = NULL;
}

int crash_set_attr(struct crash *c, const char *key, const char *value)
{
	char name[64];

	snprintf(name, sizeof(name), SFS_XATTR_PREFIX "%s", key);
	if (setxattr(c->rpath, name, value, strlen(value), 0) < 0) {
		tool_error("%s: cannot set %s to '%s': %s", c->rpath, name, value, strerror(errno));
		return -1;
	}
	return 0;
}

int crash_power_on(struct crash *c)
{
	char v[16];

	if (get_attr(c->rpath, "power", v, sizeof(v)) < 0)
		return -1;
	return strcmp(v, "on") == 0;
}

json_t *crash_round_stats(struct crash *c)
{
	char path[PATH_MAX + 300];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), "%s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX, c->img.mnt, c->rname);
	if (!(j = json_load_file(path, 0, &e)))
		tool_error("cannot read %s: %s", path, e.text);
	return j;
}
