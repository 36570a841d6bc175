#!/bin/bash
# SPDX-License-Identifier: MIT
# filesystems.sh - ext4 and XFS on loop devices over images in the mount
# keep every file across a daemon restart, and their checks stay clean
# (SPEC.md: "to loop-mount them as block devices"; Guarantees: writes made
# durable before a clean unmount survive).
#
# Proves, for ext4 and XFS (4 KiB blocks) each on a 4kn and on a 512e image
# (512 MiB thin images, 64K blocks, loop devices attached with
# `losetup -b <logical> --direct-io=on`):
#  - mkfs, mount, copy in a tree of 500 small files (1 B .. 16 KiB, in 5
#    directories) and 3 large ones (5, 12 and 24 MiB) of random content,
#    sync, umount: the filesystem checks clean (e2fsck -fn / xfs_repair
#    -n); the filesystem's cache flushes reach the daemon (flushes > 0) and
#    it refuses no I/O as misaligned;
#  - loop devices detached, daemon stopped (it must exit 0) and started
#    again, devices attached again: each filesystem mounts, holds exactly
#    the 503 files and every sha256 matches; after umount the check is
#    still clean.
# Every step runs under a timeout, so a hang fails instead of hanging CI.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_loop
requires_cmd mkfs.ext4 e2fsck mkfs.xfs xfs_repair blockdev mount umount timeout sha256sum
grep -qw xfs /proc/filesystems || modprobe xfs 2>/dev/null || true
grep -qw xfs /proc/filesystems || skip "the kernel has no XFS"
grep -qw ext4 /proc/filesystems || modprobe ext4 2>/dev/null || true
grep -qw ext4 /proc/filesystems || skip "the kernel has no ext4"

FS="$T/fs"
SRC="$T/src"
mkdir -p "$FS" "$SRC"

# check_tree WHAT: the mounted filesystem holds exactly the source tree.
check_tree() {
	local out n
	out=$(cd "$FS" && timeout "$STEP_TIMEOUT" sha256sum --quiet -c "$T/src.sums" 2>&1) ||
		fail "$1: checksums differ: $(echo "$out" | head -5)"
	n=$(cd "$FS" && timeout "$STEP_TIMEOUT" find . -path ./lost+found -prune -o -type f -print | wc -l)
	[ "$n" -eq "$NFILES" ] || fail "$1: $n files, expected $NFILES"
}

# The source tree, made once on the test's own disk: 500 small files, 3 large.
for ((d = 0; d < 5; d++)); do
	mkdir -p "$SRC/d$d"
	for ((i = 0; i < 100; i++)); do
		head -c $((RANDOM % 16384 + 1)) /dev/urandom > "$SRC/d$d/f$i"
	done
done
for mb in 5 12 24; do
	head -c $((mb * 1024 * 1024)) /dev/urandom > "$SRC/big$mb" || fail "writing $SRC/big$mb failed"
done
(cd "$SRC" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/src.sums" || fail "sha256sum of the source tree failed"
NFILES=$(wc -l < "$T/src.sums")
[ "$NFILES" -eq 503 ] || fail "source tree has $NFILES files, expected 503"

# name:logical sector:filesystem
CASES="e4kn:4096:ext4 x4kn:4096:xfs e512e:512:ext4 x512e:512:xfs"
sidecar e4kn 512M 4kn thin 64K
sidecar x4kn 512M 4kn thin 64K
sidecar e512e 512M 512e thin 64K
sidecar x512e 512M 512e thin 64K
start_daemon

# ---- first life: mkfs, files, check ----
# first_life NAME SECTOR FSTYPE (the loop device attached): mkfs, copy the tree in, check it.
first_life() {
	local name=$1 lss=$2 fstype=$3
	case $fstype in
	ext4) step "mkfs.ext4 on $name" mkfs.ext4 -q -F "$DEV" ;;
	xfs) step "mkfs.xfs on $name" mkfs.xfs -q -f -b size=4096 "$DEV" ;;
	esac
	mount_loop "$fstype"
	step "copy the tree into $fstype on $name" cp -a "$SRC/." "$FS/"
	step "sync $FS" sync -f "$FS"
	check_tree "$name ($fstype), before umount"
	release_loop "$name" "$fstype" "after the first umount"
	fl=$(stats_key "$name" flushes)
	[ "$fl" -gt 0 ] || fail "$name: $fstype's cache flushes did not reach the daemon (flushes 0)"
	pass "$fstype on $name (loop, logical $lss): mkfs, $NFILES files copied in, umount, check clean ($fl flushes reached the daemon)"
}
each_loop first_life $CASES

# ---- restart the daemon, second life: every file is there ----
restart_daemon
# second_life NAME SECTOR FSTYPE (attached again): every file is there, the check clean.
second_life() {
	local name=$1 lss=$2 fstype=$3
	mount_loop "$fstype"
	check_tree "$name ($fstype), after the daemon restart"
	release_loop "$name" "$fstype" "after the daemon restart"
	pass "$fstype on $name after the restart: $NFILES files, every sha256 matches, check clean"
}
each_loop second_life $CASES
loops_gone
