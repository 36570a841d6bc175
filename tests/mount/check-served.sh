#!/bin/bash
# SPDX-License-Identifier: MIT
# check-served.sh - `sectorfs-img check STORE` on a served store says so once.
#
# Proves: with 20 images served, `check STORE` exits 0, checks each
# image, and says once (not once per image) that the store is served and
# who serves it; `check --repair STORE` is refused once, naming the
# holder, exits 8, and says that nothing was checked (before, it said
# "20 images, 0 clean" after one refusal per image, and `check STORE`
# printed its note 21 times).

. "$(dirname "$0")/lib.sh"
requires_fuse
N=20

for ((i = 0; i < N; i++)); do sidecar "d$i" 1M 512n thin 64K; done
start_daemon
HOLDER="pid $DPID, mounted at $MNT"

rc=0
"$SECTORFS_IMG" check "$STORE" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "check STORE exits $rc: $(cat "$T/out" "$T/err")"
notes=$(cat "$T/out" "$T/err" | grep -c "served by sectorfs")
[ "$notes" -eq 1 ] || fail "check STORE says $notes times that the store is served: $(cat "$T/out" "$T/err")"
grep -qF "served by sectorfs ($HOLDER)" "$T/out" || fail "the note does not name $HOLDER: $(cat "$T/out")"
[ "$(grep -c ": clean (" "$T/out")" -eq $N ] || fail "not $N images clean: $(cat "$T/out")"
grep -qx "$STORE: $N images, $N clean" "$T/out" || fail "summary: $(tail -n1 "$T/out")"
pass "check STORE: $N images clean, the store said to be served once"

rc=0
"$SECTORFS_IMG" check --repair "$STORE" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 8 ] || fail "check --repair STORE exits $rc: $(cat "$T/out" "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] && grep -qxF "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first" "$T/err" ||
	fail "refusal: $(cat "$T/err")"
grep -qxF "$STORE: nothing checked or repaired: --repair needs the store unmounted" "$T/out" &&
	[ "$(wc -l < "$T/out")" -eq 1 ] || fail "check --repair STORE says: $(cat "$T/out")"
pass "check --repair STORE: refused once naming the holder, exit 8, nothing checked and it says so"
stop_daemon
