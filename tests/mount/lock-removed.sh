#!/bin/bash
# SPDX-License-Identifier: MIT
# lock-removed.sh - one daemon per store, whatever happens to the lock file.
#
# Proves: with the store served, after `rm STORE/.sectorfs/lock`, after
# `mv` of the lock file and after `mv` of the whole .sectorfs (put back
# before the end), a second `sectorfs STORE MNT2` exits non-zero naming
# the serving daemon's pid and mounts nothing, and a changing
# `sectorfs-img resize` is refused the same way; 8 MiB written with fsync
# through the mount meanwhile reads back after an unmount and a new
# start, and `sectorfs-img check` is clean.  (Before the store directory
# itself was locked, the second daemon started with status 0 and the
# two kept separate maps: the 8 MiB read back as zeros.)

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout cmp

M=$((1024 * 1024))
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"   # if a second daemon got in

sidecar a 64M 512n thin 1M
head -c $((8 * M)) /dev/urandom > "$T/data"
start_daemon

# second_refused WHAT: a second daemon and a resize are refused, naming the daemon's pid.
second_refused() {
	local rc=0
	timeout 20 "$SECTORFS" "${TRANSPORT_OPTS[@]}" "$STORE" "$MNT2" >"$T/second.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "$1: second daemon hung"
	if mountpoint -q "$MNT2"; then
		fusermount3 -u "$MNT2"
		fail "$1: a second daemon started (status $rc) and served the store"
	fi
	[ $rc -ne 0 ] || fail "$1: second daemon exited 0"
	grep -q "already served by another sectorfs (pid $DPID " "$T/second.out" ||
		fail "$1: second daemon does not name pid $DPID: $(cat "$T/second.out")"
	rc=0
	"$SECTORFS_IMG" resize "$STORE/a" 128M >"$T/resize.out" 2>&1 || rc=$?
	[ $rc -ne 0 ] || fail "$1: sectorfs-img resize ran on the served store"
	grep -q "served by sectorfs (pid $DPID " "$T/resize.out" ||
		fail "$1: resize does not name pid $DPID: $(cat "$T/resize.out")"
	[ "$(stat -c %s "$STORE/a")" = $((64 * M)) ] || fail "$1: the refused resize changed a"
	pass "$1: a second daemon exits $rc and resize is refused, both naming pid $DPID"
}

rm "$STORE/.sectorfs/lock"
second_refused "lock file removed"
dd if="$T/data" of="$MNT/a" bs=1M oflag=direct conv=fsync,notrunc status=none || fail "write through the mount"

mv "$STORE/.sectorfs" "$STORE/.sectorfs.moved"
second_refused "state directory moved"
mv "$STORE/.sectorfs.moved" "$STORE/.sectorfs"

: > "$STORE/.sectorfs/lock.other"
mv "$STORE/.sectorfs/lock.other" "$STORE/.sectorfs/lock"
second_refused "lock file replaced by another file"

stop_daemon
"$SECTORFS_IMG" check "$STORE" >"$T/check.out" 2>&1 || fail "check after unmount: $(cat "$T/check.out")"
start_daemon
cmp "$T/data" <(head -c $((8 * M)) "$MNT/a") || fail "the 8 MiB written with fsync did not read back"
stop_daemon
pass "8 MiB written with fsync reads back after a new start; check is clean"
