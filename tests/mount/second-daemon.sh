#!/bin/bash
# SPDX-License-Identifier: MIT
# second-daemon.sh - a second daemon on the same store exits non-zero
# naming the holder as the lock file does ("pid N, mounted at MNT"),
# mounts nothing, leaves the holder's lock and mount alone, and the first
# one goes on serving writes; so does a third.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp timeout

MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"

sidecar cc 4M 512n thin 64K
head -c $M /dev/urandom > "$T/src.cc"
start_daemon
holder="pid $DPID, mounted at $MNT"
[ "$(lock_text)" = "$holder" ] || fail "lock file says '$(lock_text)', expected '$holder'"
for attempt in 1 2; do
	rc=0
	timeout 20 "$SECTORFS" -f "$STORE" "$MNT2" >"$T/second.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "second daemon hung"
	[ $rc -ne 0 ] || fail "second daemon on the same store exited 0"
	! mountpoint -q "$MNT2" || fail "second daemon left $MNT2 mounted"
	mountpoint -q "$MNT" || fail "second daemon unmounted the first one"
	kill -0 "$DPID" || fail "first daemon died"
	[ "$(stat -c %s "$MNT/cc")" = $((4 * M)) ] || fail "first daemon no longer serves cc"
	if grep -qF "$holder" "$T/second.out"; then
		pass "daemon $((attempt + 1)) on the store exits $rc, mnt2 unmounted: $(sed "s|$T|\$T|g" "$T/second.out")"
	elif [ $attempt -eq 1 ]; then
		fail "second daemon: message does not name the holder '$holder': $(cat "$T/second.out")"
	else
		not_ok "daemon $((attempt + 1)) on the store does not name the holder '$holder': $(cat "$T/second.out")"
	fi
	[ "$(lock_text)" = "$holder" ] ||
		not_ok "after refused daemon $((attempt + 1)) the lock file says '$(lock_text)', expected '$holder'"
done
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
