/* SPDX-License-Identifier: MIT */
/*
 * loopdev.c - loop devices and the filesystems mounted on them (loopdev.h).
 *
 * Attaching: LOOP_CTL_GET_FREE names a free device, LOOP_CONFIGURE binds
 * the file to it with the block size, direct I/O and autoclear in one
 * call; another process may take the same device between the two (EBUSY),
 * so it is tried again, up to 20 times.  The block size is read back with
 * BLKSSZGET, as lib-loop.sh does with blockdev --getss.
 *
 * Unmounting: the lines of /proc/self/mountinfo whose device (third
 * field, MAJOR:MINOR) is the loop device, last first (a mount on top of
 * another comes after it); umount2() is retried for a second while
 * EBUSY (a process killed a moment ago may still hold the filesystem),
 * then done with MNT_DETACH.
 *
 * Detaching: LOOP_CLR_FD on a device still open elsewhere only marks it
 * autoclear, so the device is watched until the kernel has let it go
 * (its /sys/block/loopN/loop directory is gone): until then a filesystem
 * going down may still write through it, and after a power cut nothing
 * may reach the disk once its power is back on.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "loopdev.h"

#define LOOPDEV_FREE_MS 60000

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int loopdev_attach(struct loopdev *lo, const char *path, unsigned sector, char *err, size_t errlen)
{
	struct loop_config cfg;
	struct stat st;
	int ctl, file, dev = -1, n = -1, lss = 0, e = 0;

	lo->fd = -1;
	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot open /dev/loop-control: %s%s", strerror(e),
			 e == EACCES || e == EPERM ? " (--loop needs root)" : "");
		return -1;
	}
	if ((file = open(path, O_RDWR | O_DIRECT | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(ctl);
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned)file;
	cfg.block_size = sector;
	cfg.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", path);
	for (int tries = 0; tries < 20; tries++) {
		if ((n = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0) {
			e = errno;
			break;
		}
		snprintf(lo->path, sizeof(lo->path), "/dev/loop%d", n);
		if ((dev = open(lo->path, O_RDWR | O_CLOEXEC)) < 0) {
			e = errno;
			if (e == ENOENT) {             /* the node is not there yet */
				nap_ms(20);
				continue;
			}
			break;
		}
		if (ioctl(dev, LOOP_CONFIGURE, &cfg) == 0) {
			e = 0;
			break;
		}
		e = errno;
		close(dev);
		dev = -1;
		if (e != EBUSY)
			break;
		nap_ms(10);
	}
	close(file);
	close(ctl);
	if (e || dev < 0) {
		snprintf(err, errlen, "cannot attach %s to a loop device%s%s: %s", path, n >= 0 ? " " : "",
			 n >= 0 ? lo->path : "", strerror(e ? e : EBUSY));
		if (dev >= 0)
			close(dev);
		return -1;
	}
	lo->fd = dev;
	if (fstat(dev, &st) < 0 || ioctl(dev, BLKSSZGET, &lss) < 0 || (unsigned)lss != sector) {
		snprintf(err, errlen, "%s over %s: the logical block size is %d, not %u", lo->path, path, lss,
			 sector);
		loopdev_detach(lo, NULL, 0);
		return -1;
	}
	lo->rdev = st.st_rdev;
	return 0;
}

/* The mount point field of a mountinfo line decoded in place (\040 and friends). */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The mount points of lo's filesystems, in mountinfo's order, malloc'd, into *out: how many
 * (0 with *out NULL when none), or -1. */
static int mounts_of(const struct loopdev *lo, char ***out)
{
	char line[4096], want[32], **v = NULL, **nv;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int n = 0;

	*out = NULL;
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%u:%u", major(lo->rdev), minor(lo->rdev));
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok = strtok_r(line, " ", &save);
		char *fields[5] = { NULL };

		for (int i = 0; i < 5 && tok; i++, tok = strtok_r(NULL, " ", &save))
			fields[i] = tok;
		if (!fields[4] || strcmp(fields[2], want) != 0)
			continue;
		if (!(nv = realloc(v, (size_t)(n + 1) * sizeof(*v))))
			break;
		v = nv;
		unescape(fields[4]);
		if (!(v[n] = strdup(fields[4])))
			break;
		n++;
	}
	fclose(f);
	*out = v;
	return n;
}

int loopdev_unmount_all(const struct loopdev *lo, char *err, size_t errlen)
{
	char **v;
	int n, done = 0, rc = 0;

	if (lo->fd < 0)
		return 0;
	if ((n = mounts_of(lo, &v)) < 0) {
		snprintf(err, errlen, "cannot read /proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	for (int i = n - 1; i >= 0; i--) {
		int r = -1;

		for (int tries = 0; tries < 50 && (r = umount2(v[i], 0)) < 0 && errno == EBUSY; tries++)
			nap_ms(20);
		if (r < 0 && errno == EBUSY)
			r = umount2(v[i], MNT_DETACH);
		if (r == 0 || errno == EINVAL || errno == ENOENT) {   /* gone already */
			done++;
		} else if (!rc) {
			snprintf(err, errlen, "cannot unmount %s (on %s): %s", v[i], lo->path, strerror(errno));
			rc = -1;
		}
		free(v[i]);
	}
	free(v);
	return rc < 0 ? -1 : done;
}

/* Is lo still bound to a file?  /sys/block/loopN/loop is there while it is. */
static bool bound(const struct loopdev *lo)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/block/%s/loop", lo->path + 5);
	return stat(path, &st) == 0;
}

int loopdev_detach(struct loopdev *lo, char *err, size_t errlen)
{
	int rc = 0, ms = 0;

	if (lo->fd < 0)
		return 0;
	/* busy elsewhere: the kernel makes it autoclear and detaches it at the last close */
	if (ioctl(lo->fd, LOOP_CLR_FD, 0) < 0 && errno != ENXIO) {
		if (err)
			snprintf(err, errlen, "cannot detach %s: %s", lo->path, strerror(errno));
		rc = -1;
	}
	close(lo->fd);
	lo->fd = -1;
	/* a filesystem still going down (lazily unmounted, or its umount still running) holds
	 * the device and may still write through it: it is gone only once the device is free */
	for (; rc == 0 && bound(lo) && ms < LOOPDEV_FREE_MS; ms += 10)
		nap_ms(10);
	if (rc == 0 && ms >= LOOPDEV_FREE_MS) {
		if (err)
			snprintf(err, errlen, "%s is still in use %d s after its detach", lo->path,
				 LOOPDEV_FREE_MS / 1000);
		rc = -1;
	}
	return rc;
}
