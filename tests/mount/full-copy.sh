#!/bin/bash
# SPDX-License-Identifier: MIT
# full-copy.sh - a copy into the mount that fills the store ends at the
# size written.
#
# cp of 100 MiB into a new name on a 64 MiB store fails with ENOSPC, as it
# should.  The image grows with its writes and keeps room ahead of them;
# its creator's close gives that room back (a journalled trim), which
# needs two small new files (its journal, the sidecar's rewrite).  On the
# full store they could not be written: the image kept 60 MiB of which 53
# were written (the rest zeros), and the log said its size "is not
# durable".  Now the store holds a little space while an image grows and
# gives it up for the trim, so on an ext4 and a tmpfs store of 64 MiB:
#  - cp fails with "No space left on device";
#  - the image's size S is what cp wrote: its S bytes are the source's
#    first S bytes (no zeros of a kept reservation at the end), and its
#    sidecar and backing file say S too;
#  - no error in the log; after a restart the image is S bytes, the same.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_cmd mkfs.ext4 mount umount cmp timeout

on_exit unmount_store
head -c $((100 << 20)) /dev/urandom > "$T/src" || fail "making $T/src failed"

# mount_store KIND: a fresh 64 MiB ext4 (loop-mounted image file) or tmpfs on STORE.
mount_store() {
	case $1 in
	ext4)
		rm -f "$T/ext4.img"
		truncate -s 64M "$T/ext4.img" || fail "truncate $T/ext4.img failed"
		mkfs.ext4 -q -F -m 0 "$T/ext4.img" || fail "mkfs.ext4 $T/ext4.img failed"
		timeout 20 mount -o loop "$T/ext4.img" "$STORE" || fail "mount -o loop $T/ext4.img failed"
		;;
	tmpfs)
		timeout 20 mount -t tmpfs -o size=64M sfs-test "$STORE" || fail "mount -t tmpfs failed"
		;;
	esac
}

for kind in ext4 tmpfs; do
	mount_store $kind
	: > "$T/daemon.log"
	start_daemon
	LC_ALL=C cp "$T/src" "$MNT/big" 2>"$T/cp.err" && fail "$kind: cp of 100 MiB into a 64 MiB store worked"
	grep -q "No space left on device" "$T/cp.err" || fail "$kind: cp failed without ENOSPC: $(cat "$T/cp.err")"
	size=$(stat_val %s "$MNT/big")
	[ "$size" -gt $((16 << 20)) ] || fail "$kind: only $size bytes copied"
	cmp -s -n "$size" "$MNT/big" "$T/src" ||
		fail "$kind: the image is $size bytes but they are not all what cp wrote: $(cmp -n "$size" "$MNT/big" "$T/src" 2>&1)"
	[ "$(stat_val %s "$STORE/big")" = "$size" ] || fail "$kind: backing file $(stat_val %s "$STORE/big"), image $size"
	grep -q "\"size\": $size," "$STORE/big.json" || fail "$kind: sidecar: $(tr -d '\n' < "$STORE/big.json"), image $size"
	grep -q "error" "$T/daemon.log" && fail "$kind: the daemon logged an error: $(grep error "$T/daemon.log")"
	restart_daemon
	[ "$(stat_val %s "$MNT/big")" = "$size" ] || fail "$kind: $(stat_val %s "$MNT/big") bytes after a restart, $size before"
	cmp -s -n "$size" "$MNT/big" "$T/src" || fail "$kind: the copy does not read back after a restart"
	stop_daemon
	umount "$STORE" || fail "umount $STORE"
	pass "$kind: cp of 100 MiB into 64 MiB: ENOSPC, and the image ends at the $size bytes written"
done
