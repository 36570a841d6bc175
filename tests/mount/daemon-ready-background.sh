#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon-ready-background.sh - started in the background (no -f),
# sectorfs returns with the mount up and the pid file written, and the pid
# file and the store's lock name the daemon itself (tests/mount/pidfile-*.sh
# have more).
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))

sidecar a 4M 512n thin 64K
rm -f "$T/pid"
rc=0
timeout 30 "$SECTORFS" -o pidfile="$T/pid" "$STORE" "$MNT" 2>>"$T/daemon.log" || rc=$?
[ -s "$T/pid" ] || fail "sectorfs in the background returned ($rc) before writing its pid file"
DPID=$(cat "$T/pid")   # for lib.sh's cleanup
[ $rc -eq 0 ] || fail "sectorfs in the background exited $rc"
mountpoint -q "$MNT" || fail "sectorfs returned but $MNT is not mounted"
[ "$(cat "/proc/$DPID/comm" 2>/dev/null)" = sectorfs ] || fail "pid file says $DPID, which is not a running sectorfs"
[ "$(lock_text)" = "pid $DPID, mounted at $MNT" ] || fail "lock file says '$(lock_text)', daemon is $DPID"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_gone "$DPID" 10 || fail "background daemon $DPID still running 10 s after unmount"
DPID=
pass "background: mounted and pid file written when sectorfs returns; pid file and lock name the daemon itself"
