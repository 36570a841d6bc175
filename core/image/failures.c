/* SPDX-License-Identifier: MIT */
/*
 * failures.c - an image's failure state (fail.h, doc/failures.md): when
 * it is made, the disk it runs on, and what the daemon and the store ask
 * of it through the image (attributes, status, a stats reset, the pause
 * around a rename or unlink).
 *
 * Made at open when the sidecar has a failure key or STORE/.sectorfs
 * holds NAME.disk or NAME.undo, else on the first failure attribute
 * written.  Made late, it must not see a request that began without it
 * (a write that ended after a cut would land on a disk without power):
 * the image is made to take ranges (which waits for the requests without
 * one), the whole disk is then taken exclusively in the range lock (which
 * waits for those with one), and the state is published before that
 * range is let go, so every later request finds it.  Requests load the
 * pointer once, after their range is taken (io.c).
 *
 * The state's disk is the image itself below the statistics, the model
 * and the hooks: image_raw_read/write through the allocation map, and
 * the map's flush (data, then map) as its sync.  It needs the image's
 * descriptors, so each transfer pins the image (a pin is counted: inside
 * a request that holds one it costs a lock of the cache).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "util/rangelock.h"
#include "mount/xattrval.h"

/* ---- the state's disk ---- */

/* One transfer of the state's disk with the image pinned around it: a read into rbuf, a write
 * of wbuf, or (neither) a sync.  0 or -errno. */
static int fb_io(struct sfs_image *im, void *rbuf, const void *wbuf, size_t len, uint64_t off)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	if (rbuf)
		rc = image_raw_read(im, rbuf, len, off);
	else if (wbuf)
		rc = image_raw_write(im, wbuf, len, off);
	else
		rc = image_raw_sync(im);
	sfs_image_unpin(im);
	return rc;
}

static int fb_read(void *arg, void *buf, size_t len, uint64_t off)
{
	return fb_io(arg, buf, NULL, len, off);
}

static int fb_write(void *arg, const void *buf, size_t len, uint64_t off)
{
	return fb_io(arg, NULL, buf, len, off);
}

static int fb_sync(void *arg)
{
	return fb_io(arg, NULL, NULL, 0, 0);
}

/* ---- making it ---- */

/* Open the state with the sidecar's keys into im->fail (published). */
static int open_state(struct sfs_image *im, char *err, size_t errlen)
{
	struct sfs_wc_backing b = { .read = fb_read, .write = fb_write, .sync = fb_sync, .arg = im };
	struct sfs_fail_config c = { .size = sfs_image_capacity(im) };
	struct sfs_fail *f;
	int rc;

	sfs_sidecar_fail_config(&im->sc, &c.wc, &c.cut);
	c.wc.lss = im->geom.lss;
	c.wc.pss = im->geom.pss;
	rc = sfs_fail_open(im->state_fd, im->name, &c, &b, &im->log, &f, err, errlen);
	if (rc == 0)
		__atomic_store_n(&im->fail, f, __ATOMIC_RELEASE);
	return rc;
}

static bool state_file(const struct sfs_image *im, const char *suffix)
{
	char fname[sizeof(im->name) + sizeof(SFS_UNDO_SUFFIX)];
	struct stat st;

	snprintf(fname, sizeof(fname), "%s%s", im->name, suffix);
	return fstatat(im->state_fd, fname, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

int image_fail_open(struct sfs_image *im, char *err, size_t errlen)
{
	int rc;

	if (!(im->sc.fail.have & SFS_HAVE_FAIL_STATE_KEYS) && !state_file(im, SFS_DISK_SUFFIX) &&
	    !state_file(im, SFS_UNDO_SUFFIX))
		return 0;
	rc = open_state(im, err, errlen);
	if (rc == 0)
		sfs_image_need_ranges(im);
	return rc;
}

/* The state, made now when there is none (top of file). */
static int need_state(struct sfs_image *im, struct sfs_fail **out, char *err, size_t errlen)
{
	struct sfs_range r;
	int rc = 0;

	if ((*out = image_fail(im)))
		return 0;
	pthread_mutex_lock(&im->fail_lk);
	if (!image_fail(im) && (rc = sfs_image_pin(im)) < 0)
		sfs_err(err, errlen, rc, "%s: %s", im->name, strerror(-rc));
	else if (!image_fail(im)) {
		sfs_image_need_ranges(im);
		rc = sfs_rangelock_lock(im->rl, &r, 0, UINT64_MAX, true);
		if (rc == 0) {
			rc = open_state(im, err, errlen);
			sfs_rangelock_unlock(im->rl, &r);
		} else {
			sfs_err(err, errlen, rc, "%s: %s", im->name, strerror(-rc));
		}
		sfs_image_unpin(im);
	}
	pthread_mutex_unlock(&im->fail_lk);
	*out = image_fail(im);
	return rc;
}

void image_fail_close(struct sfs_image *im)
{
	struct sfs_fail *f = image_fail(im);
	int rc;

	if (!f)
		return;
	/* the close keeps what the cache holds: the disk synced first, while it can be */
	if (sfs_image_pin(im) == 0) {
		image_raw_sync(im);
		sfs_image_unpin(im);
	}
	rc = sfs_fail_close(f);
	im->fail = NULL;
	if (rc < 0)
		sfs_logf(&im->log, SFS_LOG_WARN, "%s: its failure state did not close cleanly (%s); the next "
			 "open settles " SFS_UNDO_SUFFIX " again", im->name, strerror(-rc));
}

void image_fail_resize(struct sfs_image *im)
{
	struct sfs_fail *f = image_fail(im);

	if (f)
		sfs_fail_resize(f, sfs_image_capacity(im));
}

/* ---- what the daemon and the store ask ---- */

bool sfs_image_has_failures(const struct sfs_image *im)
{
	return image_fail(im) != NULL;
}

int sfs_image_fail_attr_get(struct sfs_image *im, const char *key, char **out, size_t *len)
{
	struct sfs_fail *f = image_fail(im);
	struct sfs_wc_config c;
	struct sfs_wc_cut cut;
	char buf[SFS_FAIL_VALUE_MAX];
	bool w;

	if (!sfs_xattr_failure(key, &w))
		return -ENODATA;
	if (strcmp(key, "bad_sectors") == 0) {
		int rc = f ? sfs_fail_bad_get(f, out, len) : 0;

		if (rc == 0 && f && *len && (*out)[*len - 1] == '\n')
			(*out)[--*len] = '\0';      /* one range a line; no newline after the last */
		if (rc < 0 || f)
			return rc;
		buf[0] = '\0';
	} else if (strcmp(key, "power") == 0) {
		snprintf(buf, sizeof(buf), "%s", f ? sfs_fail_power(f) : "on");
	} else if (strcmp(key, "power_seed") == 0) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(f ? sfs_fail_seed(f) : 0));
	} else {
		sfs_sidecar_fail_config(&im->sc, &c, &cut);
		if (strcmp(key, "atomic_write_unit") == 0)
			snprintf(buf, sizeof(buf), "%u", c.awu);
		else if (f)
			sfs_fail_policy(f, buf, sizeof(buf));
		else
			sfs_wc_format_policy(&cut, buf, sizeof(buf));
	}
	*out = strdup(buf);
	*len = strlen(buf);
	return *out ? 0 : -ENOMEM;
}

/* Does writing value to key leave a disk without a failure state as it is? */
static bool is_default(const char *key, const char *value, size_t len)
{
	while (len && (value[len - 1] == '\n' || value[len - 1] == ' '))
		len--;
	if (strcmp(key, "power") == 0)
		return len == 2 && memcmp(value, "on", 2) == 0;
	if (strcmp(key, "bad_sectors") == 0)
		return len == 0 || (len == 5 && memcmp(value, "clear", 5) == 0);
	return false;
}

int sfs_image_fail_attr_set(struct sfs_image *im, const char *key, const char *value, size_t len, char *err,
			    size_t errlen)
{
	struct sfs_fail *f;
	bool w;
	int rc;

	if (!sfs_xattr_failure(key, &w))
		return -ENODATA;
	if (!w)
		return sfs_err(err, errlen, -EPERM, "%s: read-only", key);
	if (!image_fail(im) && is_default(key, value, len))
		return 0;                  /* what a disk without a state is already (cp -a of its xattrs) */
	rc = need_state(im, &f, err, errlen);
	if (rc < 0)
		return rc;
	if (strcmp(key, "power") == 0)
		return sfs_fail_power_set(f, value, len, err, errlen);
	if (strcmp(key, "power_seed") == 0)
		return sfs_fail_seed_set(f, value, len, err, errlen);
	if (strcmp(key, "power_cut_policy") == 0)
		return sfs_fail_policy_set(f, value, len, err, errlen);
	return sfs_fail_bad_set(f, value, len, err, errlen);
}

int sfs_image_fail_status(struct sfs_image *im, struct sfs_fail_status *st, struct sfs_fail_cutinfo *last)
{
	struct sfs_fail *f = image_fail(im);

	if (!f)
		return -ENODATA;
	sfs_fail_status(f, st);
	return last ? sfs_fail_last_cut(f, last) : 0;
}

int sfs_image_stats_command(struct sfs_image *im, const char *buf, size_t len)
{
	struct sfs_fail *f = image_fail(im);
	int rc = sfs_stats_cell_command(&im->stats, buf, len);

	if (rc == 0 && f)
		sfs_fail_reset_counters(f);
	return rc;
}

void sfs_image_fail_pause(struct sfs_image *im)
{
	struct sfs_fail *f;

	pthread_mutex_lock(&im->fail_lk);   /* no state is made meanwhile */
	f = image_fail(im);
	if (f)
		sfs_fail_pause(f);
}

void sfs_image_fail_resume(struct sfs_image *im, const char *name, bool detach)
{
	struct sfs_fail *f = image_fail(im);

	if (f && detach)
		sfs_fail_detach(f);
	if (f)
		sfs_fail_resume(f, name);
	pthread_mutex_unlock(&im->fail_lk);
}
