#!/bin/bash
# SPDX-License-Identifier: MIT
# second-daemon.sh - a second daemon on the same store exits non-zero
# naming the holder ("pid N, mounted at MNT"), mounts nothing, and the
# first one goes on serving writes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_fuse
requires_gnu_dd
requires_cmd cmp timeout

MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"

sidecar cc 4M 512n thin 64K
head -c $M /dev/urandom > "$T/src.cc"
start_daemon
rc=0
timeout 20 "$SECTORFS" -f "$STORE" "$MNT2" >"$T/second.out" 2>&1 || rc=$?
[ $rc -ne 124 ] || fail "second daemon on the store hung"
[ $rc -ne 0 ] || fail "second daemon on the same store exited 0"
grep -qF "pid $DPID, mounted at $MNT" "$T/second.out" ||
	fail "second daemon does not name the holder 'pid $DPID, mounted at $MNT': $(cat "$T/second.out")"
! mountpoint -q "$MNT2" || fail "second daemon mounted $MNT2"
kill -0 "$DPID" 2>/dev/null || fail "first daemon died"
dd if="$T/src.cc" of="$MNT/cc" bs=64K seek=16 oflag=direct conv=notrunc,fsync status=none ||
	fail "first daemon no longer serves writes"
dd if="$MNT/cc" of="$T/got" bs=64K skip=16 count=16 iflag=direct status=none
cmp -s "$T/got" "$T/src.cc" || fail "first daemon: write after the refused second daemon does not read back"
pass "second daemon exits $rc naming the holder ($(head -n1 "$T/second.out" | sed "s|$T|\$T|g")); the first goes on serving writes"
stop_daemon
