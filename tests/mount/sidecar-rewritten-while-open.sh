#!/bin/bash
# SPDX-License-Identifier: MIT
# sidecar-rewritten-while-open.sh - a sidecar removed and written again
# while its image is open: the same values are served by the open
# instance, other values refused (logged) until the image is closed, then
# loaded as at mount time, the data kept.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
M=$((1024 * 1024))

sidecar d 1M 4kn thin
start_daemon
head -c 64K /dev/urandom > "$T/d.data"
dd if="$T/d.data" of="$MNT/d" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "write d"
exec 3< "$MNT/d"
mv "$STORE/d.json" "$T/d.json"
ls "$MNT" | grep -qx d && fail "d still listed without its sidecar"
mv "$T/d.json" "$STORE/d.json"
ls "$MNT" | grep -qx d || fail "d not served again with the same sidecar"
grep -q "d: declared again; served by the instance still open" "$T/daemon.log" || fail "no revival in the log"
mv "$STORE/d.json" "$T/d.json"
ls "$MNT" >/dev/null
sidecar d 2M 4kn thin
ls "$MNT" | grep -qx d && fail "d served with other values while still open"
grep -q "d.json: declared again while the image is still open with other values (size 1048576 -> 2097152)" \
	"$T/daemon.log" || fail "the difference is not logged: $(cat "$T/daemon.log")"
dd bs=64K count=1 status=none <&3 | cmp -s - "$T/d.data" || fail "the open file no longer reads its data"
exec 3<&-
sleep 1.1
ls "$MNT" | grep -qx d || fail "d not served after its file was closed"
[ "$(stat -c %s "$MNT/d")" -eq $((2 * M)) ] || fail "d is $(stat -c %s "$MNT/d") bytes, the new sidecar says 2M"
cmp -s -n 65536 "$MNT/d" "$T/d.data" || fail "d's data after it was loaded again"
stop_daemon
pass "a sidecar written again while open: same values served, others refused until closed, then loaded"
