#!/bin/bash
# SPDX-License-Identifier: MIT
# fstab.sh - sectorfs mounts through mount(8) and mount.fuse3, as from
# /etc/fstab: "mount -t fuse PROGRAM#STORE MNT -o ..." and an fstab line
# (read from a test-owned file with mount -T, not /etc/fstab).  The daemon
# goes to the background as it does there; when mount returns the pid
# file is there and the disk served; the test checks the disk, unmounts
# with umount(8) and requires the daemon to have exited.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
requires_cmd mount umount
[ -x /sbin/mount.fuse3 ] || [ -x /usr/sbin/mount.fuse3 ] || skip "needs mount.fuse3 (package fuse3)"

sidecar disk 8M 4kn thin 64K

# ready_now FILE: mount(8) returns only once the daemon has written its
# pid file and the mount serves; nothing to wait for.
ready_now() {
	[ -s "$1" ] || fail "mount returned, but there is no pid file $1 yet"
	mountpoint -q "$MNT" || fail "mount returned, but $MNT is not mounted"
}

# check_disk: the mount serves the image as its sidecar says.
check_disk() {
	[ "$(stat -c %s "$MNT/disk")" = 8388608 ] || fail "size of disk"
	[ "$(stat -c %o "$MNT/disk")" = 4096 ] || fail "st_blksize of disk"
	grep -q "^sectorfs:$STORE $MNT fuse.sectorfs .*allow_other" /proc/mounts ||
		fail "not mounted as fuse.sectorfs with allow_other: $(grep "$MNT" /proc/mounts)"
	head -c 4096 /dev/urandom > "$T/blk"
	dd if="$T/blk" of="$MNT/disk" bs=4096 seek=3 oflag=direct conv=notrunc status=none || fail "write"
	cmp -s "$T/blk" <(dd if="$MNT/disk" bs=4096 skip=3 count=1 iflag=direct status=none) || fail "read back"
	expect_errno "Invalid argument" dd if="$T/blk" of="$MNT/disk" bs=512 count=1 oflag=direct conv=notrunc status=none
}

# 1. mount -t fuse PROGRAM#STORE MNT -o options
mount -t fuse "$SECTORFS#$STORE" "$MNT" -o "allow_other,pidfile=$T/pid1" 2>>"$T/daemon.log" ||
	fail "mount -t fuse failed"
ready_now "$T/pid1"
pid=$(cat "$T/pid1")
on_exit "kill $pid"
check_disk
pass "mount -t fuse $SECTORFS#STORE: served, 4kn rules hold, allow_other set"
umount "$MNT" || fail "umount failed"
wait_gone "$pid" 10 || fail "daemon $pid still running 10 s after umount"
[ ! -e "$T/pid1" ] || fail "pid file left behind after a clean exit"
pass "umount ends the daemon and it removes its pid file"

# 2. an fstab line, mounted by its mount point
printf '%s#%s %s fuse allow_other,pidfile=%s 0 0\n' "$SECTORFS" "$STORE" "$MNT" "$T/pid2" > "$T/fstab"
mount -T "$T/fstab" "$MNT" 2>>"$T/daemon.log" || fail "mount -T fstab failed"
ready_now "$T/pid2"
pid=$(cat "$T/pid2")
on_exit "kill $pid"
check_disk
cmp -s "$T/blk" <(dd if="$MNT/disk" bs=4096 skip=3 count=1 iflag=direct status=none) ||
	fail "data written in the first mount is not there"
pass "fstab line: served, data of the earlier mount intact"
umount "$MNT" || fail "umount failed"
wait_gone "$pid" 10 || fail "daemon $pid still running 10 s after umount"
pass "umount of the fstab mount ends the daemon"
