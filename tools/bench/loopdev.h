/* SPDX-License-Identifier: MIT */
/*
 * loopdev.h - loop devices over an image, and the filesystems a workload
 * mounts on them, for sectorfs-bench crash --loop (loopdev.c).
 *
 * A device is attached as losetup -b SECTOR --direct-io=on does it, with
 * one LOOP_CONFIGURE on a free device from /dev/loop-control, and marked
 * autoclear: should we die without detaching it, it goes once its last
 * user closes it.  Mounts are found by the device's number in
 * /proc/self/mountinfo, so a filesystem the workload mounted anywhere is
 * unmounted before the device is detached.  Root (CAP_SYS_ADMIN) is
 * needed for all of it.
 */
#ifndef SFS_BENCH_LOOPDEV_H
#define SFS_BENCH_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct loopdev {
	int fd;                 /* the device, open while attached; -1 when none */
	dev_t rdev;
	char path[32];          /* "/dev/loopN" */
};

/* Attach the file path as a new loop device with sector-byte logical blocks and direct I/O
 * into lo (lo->fd stays open until loopdev_detach).  0, or -1 with err saying why (the
 * device, the file, "needs root" for EACCES/EPERM). */
int loopdev_attach(struct loopdev *lo, const char *path, unsigned sector, char *err, size_t errlen);

/* Unmount every filesystem mounted from lo (deepest first), lazily when one stays busy for
 * a second: the number unmounted, or -1 with err naming the mount that could not go. */
int loopdev_unmount_all(const struct loopdev *lo, char *err, size_t errlen);

/* Detach lo and close it, and wait (up to a minute) until the kernel has let the device go: a
 * device still open elsewhere goes when that user closes it.  Does nothing when none is
 * attached.  0, or -1 with err (the device is then left to go by itself). */
int loopdev_detach(struct loopdev *lo, char *err, size_t errlen);

#endif
