#!/bin/bash
# SPDX-License-Identifier: MIT
# stat-tool-errors.sh - sectorfs-stat on a directory that is no sectorfs
# mount (a plain one, /) exits 2 and says so; an unknown image name exits
# 1 naming it; a -o nostats mount has no .stats and sectorfs-stat on it
# exits 2 naming nostats.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

sidecar w4k 8M 512n thin 1M
start_daemon

rc=0
"$SECTORFS_STAT" "$T" > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on a plain directory: exit status"
grep -q "not a sectorfs mount" "$T/err" || fail "sectorfs-stat on a plain directory says: $(cat "$T/err")"
rc=0
"$SECTORFS_STAT" / > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on /: exit status"
grep -q "not a sectorfs mount" "$T/err" || fail "sectorfs-stat on / says: $(cat "$T/err")"
rc=0
"$SECTORFS_STAT" "$MNT" w4k nosuchimage > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 1 "sectorfs-stat with an unknown image: exit status"
grep -q "nosuchimage" "$T/err" || fail "sectorfs-stat with an unknown image says: $(cat "$T/err")"
pass "sectorfs-stat: exit 2 and a clear message off a sectorfs mount, exit 1 naming an unknown image"
stop_daemon

start_daemon -o nostats
[ -e "$MNT/.stats" ] && fail "-o nostats mount has a .stats directory"
rc=0
"$SECTORFS_STAT" "$MNT" > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on a -o nostats mount: exit status"
grep -q "nostats" "$T/err" || fail "sectorfs-stat on a -o nostats mount says: $(cat "$T/err")"
pass "sectorfs-stat on a -o nostats mount: exit 2, says nostats"
stop_daemon
pass "daemon unmounted and exited 0"
