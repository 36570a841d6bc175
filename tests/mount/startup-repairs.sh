#!/bin/bash
# SPDX-License-Identifier: MIT
# startup-repairs.sh - what a crash left (a temporary file of the daemon's,
# an interrupted grow), repaired at a background start, is said on its
# stderr, and the grow is undone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K
start_logged "to make the image" "first"
stop_bg first

# ---- what a crash left, repaired at a background start: said on stderr ----
touch "$STORE/.sectorfs/.tmp.4242.1"
printf 'grow 4194304 8388608 4194304 1\n' > "$STORE/.sectorfs/a.grow"
truncate -s 8M "$STORE/a"
start_logged "after a crash" "after a crash"
grep -qF "removed .sectorfs/.tmp.4242.1: a temporary file left by an interrupted write" "$T/start.err" ||
	fail "the removed temporary file is not reported on stderr: $(cat "$T/start.err")"
grep -qF "a: undid an interrupted grow from 4194304 to 8388608 bytes" "$T/start.err" ||
	fail "the undone grow is not reported on stderr: $(cat "$T/start.err")"
[ "$(stat -c %s "$STORE/a")" -eq $((4 * M)) ] || fail "the undone grow left a $(stat -c %s "$STORE/a") bytes long"
stop_bg "after a crash"
pass "repairs at a background start are reported on stderr"
