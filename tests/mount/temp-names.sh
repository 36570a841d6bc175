#!/bin/bash
# SPDX-License-Identifier: MIT
# temp-names.sh - an image named like an old temporary sidecar
# (NAME.json.tmp.PID) is left alone when NAME's sidecar is rewritten; a
# name starting with '.' (the daemon's temporary files) cannot be created,
# and no temporary file is left in the store.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
M=$((1024 * 1024))

start_daemon
sidecar e4k 100M 4kn thin
V="e4k.json.tmp.$DPID"
touch "$MNT/$V" || fail "cannot create $V"
truncate -s 1M "$MNT/$V" || fail "cannot grow $V"
head -c $M /dev/urandom > "$T/v.data"
dd if="$T/v.data" of="$MNT/$V" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "writing $V"
truncate -s 300M "$MNT/e4k" || fail "cannot grow e4k"
cmp -s "$T/v.data" "$MNT/$V" || fail "$V was changed by the rewrite of e4k's sidecar"
grep -q '"size": 314572800' "$STORE/e4k.json" || fail "e4k.json: $(cat "$STORE/e4k.json")"
grep -q '"size": 1048576' "$STORE/$V.json" || fail "$V.json: $(cat "$STORE/$V.json")"
expect_errno "Operation not permitted" touch "$MNT/.tmp.$DPID.1"
ls -A "$STORE" | grep -q '^\.tmp\.' && fail "a temporary file is in the store: $(ls -A "$STORE")"
ls -A "$STORE/.sectorfs" | grep -q '^\.tmp\.' && fail "a temporary file is left: $(ls -A "$STORE/.sectorfs")"
pass "an image named like a temporary sidecar is left alone; '.' names cannot be created"
stop_daemon

