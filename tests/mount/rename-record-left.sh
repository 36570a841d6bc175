#!/bin/bash
# SPDX-License-Identifier: MIT
# rename-record-left.sh - "recovery never blocks the store": a rename
# record the start could not apply (here a FIFO under its name, which is
# never opened; a rename whose two names both hold files of the user's
# since the crash is kept the same way) keeps the images it names out,
# and only those; renames of the other images work.
#
# NOT IN Makefile.am: it fails.  The store has one rename record name
# (.sectorfs/rename), and a rename refuses to start while one is there
# (EBUSY, 'rename of x to z refused: .sectorfs/rename is left from a
# crash'), so one record left stops every rename in the store until
# check --repair or the user clears it.  Fixing it takes a record name
# of its own for each rename (rename.N), read by recovery and check.
. "$(dirname "$0")/lib.sh"
requires_fuse

sidecar x 1M 512n thin
sidecar y 1M 512n thin
mkdir -p "$STORE/.sectorfs"
mkfifo "$STORE/.sectorfs/rename"
start_daemon
mv "$MNT/x" "$MNT/z" 2>"$T/mv.err" || fail "rename of x, which no record names, failed: $(cat "$T/mv.err")"
[ -e "$MNT/z" ] || fail "z is not there after the rename"
pass "a rename record left keeps no other rename from working"
stop_daemon
