#!/bin/bash
# SPDX-License-Identifier: MIT
# rename-record-left.sh - "recovery never blocks the store": a rename
# record the start could not apply (here FIFOs under a record's name,
# never opened: .sectorfs/y.rename, and .sectorfs/rename, the one record
# name of older versions; a rename whose two names both hold files of the
# user's since the crash is kept the same way) keeps the images it names
# out, and only those; renames of the other images work.  Each rename has
# a record of its own, .sectorfs/FROM.rename, so no record left stands in
# the way of another (test_renamerec.c: the rest, unmounted).
. "$(dirname "$0")/lib.sh"
requires_fuse

sidecar x 1M 512n thin
sidecar y 1M 512n thin
mkdir -p "$STORE/.sectorfs"
mkfifo "$STORE/.sectorfs/rename" "$STORE/.sectorfs/y.rename"
start_daemon
[ ! -e "$MNT/y" ] || fail "y is served beside the record .sectorfs/y.rename left"
mv "$MNT/x" "$MNT/z" 2>"$T/mv.err" || fail "rename of x, which no record names, failed: $(cat "$T/mv.err")"
[ -e "$MNT/z" ] || fail "z is not there after the rename"
! mv "$MNT/z" "$MNT/y" 2>/dev/null || fail "z was renamed onto y, which a record left holds"
[ -e "$MNT/z" ] && [ -e "$STORE/y.json" ] || fail "after the refused rename: $(ls "$STORE")"
pass "a rename record left keeps its image out and no other rename from working"
stop_daemon
