#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-largest-file.sh - a new image grows up to the largest file its
# store's filesystem holds, and a write past that is EFBIG.
#
# An image created through the mount grows with its writes and takes room
# ahead of them.  The room ahead must not make a write fail that fits: on
# ext4 with 4 KiB blocks the largest file is 16 TiB - 4 KiB, so a 4 KiB
# write at 16 TiB - 8 KiB fits while the room after it does not (the grow
# with room got EFBIG from the backing file and the write failed with it).
# Now the grow falls back to what the write needs, as on a full store:
#  - dd of 4 KiB at 16 TiB - 8 KiB into a new image works, the image is
#    16 TiB - 4 KiB (its map 1 MiB blocks: within sectorfs's largest disk);
#  - one at 16 TiB - 4 KiB into another new image is "File too large"
#    (the filesystem's limit), and that image stays empty;
#  - the daemon exits 0, and serves both again.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
requires_cmd mkfs.ext4 mount umount timeout

on_exit unmount_store
truncate -s 64M "$T/ext4.img" || fail "truncate $T/ext4.img failed"
mkfs.ext4 -q -F -b 4096 "$T/ext4.img" || fail "mkfs.ext4 failed"
timeout 20 mount -o loop "$T/ext4.img" "$STORE" || skip "cannot mount a loop ext4"
start_daemon

LARGEST=$(((16 << 40) - 4096))
dd if=/dev/urandom of="$MNT/a" bs=4096 count=1 seek=$(((LARGEST - 4096) / 4096)) oflag=direct \
	conv=notrunc status=none 2>"$T/dd.err" || fail "a write ending at ext4's largest file failed: $(cat "$T/dd.err")"
[ "$(stat_val %s "$MNT/a")" = "$LARGEST" ] || fail "a: $(stat_val %s "$MNT/a") bytes, expected $LARGEST"
LC_ALL=C dd if=/dev/zero of="$MNT/b" bs=4096 count=1 seek=$((LARGEST / 4096)) oflag=direct conv=notrunc \
	status=none 2>"$T/dd.err" && fail "a write past ext4's largest file worked"
grep -q "File too large" "$T/dd.err" || fail "a write past ext4's largest file: $(cat "$T/dd.err")"
[ "$(stat_val %s "$MNT/b")" = 0 ] || fail "b: $(stat_val %s "$MNT/b") bytes after a refused write"
pass "a new image grows to ext4's largest file (16 TiB - 4 KiB); a write past it is EFBIG"
restart_daemon
[ "$(stat_val %s "$MNT/a")" = "$LARGEST" ] || fail "a after a restart: $(stat_val %s "$MNT/a")"
[ "$(stat_val %s "$MNT/b")" = 0 ] || fail "b after a restart: $(stat_val %s "$MNT/b")"
stop_daemon
pass "both served again after a restart"
