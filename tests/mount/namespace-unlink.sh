#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace-unlink.sh - unlink removes image, sidecar and map; a name
# re-created after unlink is a new, empty image (no stale data or map).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-namespace.sh"
requires_fuse

start_daemon "${OPTS[@]}"

: > "$MNT/gone" || fail "creating gone failed"
truncate -s 64K "$MNT/gone" || fail "growing gone failed"
three_files gone present
rm "$MNT/gone" || fail "rm $MNT/gone failed"
three_files gone absent
[ ! -e "$MNT/gone" ] || fail "$MNT/gone still visible after unlink"
pass "unlink removes image, sidecar and map"
: > "$MNT/gone" || fail "re-creating gone failed"
expect_eq "$(stat -c %s "$MNT/gone")" 0 "size of an image re-created under an unlinked name"
truncate -s 64K "$MNT/gone" || fail "growing the re-created gone failed"
expect_zeros "$MNT/gone" 0 $((64 * K)) "re-created image"
expect_eq "$(stats_key gone allocated_blocks)" 0 "allocated_blocks of the re-created image"
rm "$MNT/gone" || fail "rm $MNT/gone (second) failed"
three_files gone absent
pass "a name re-created after unlink is a new, empty image (no stale data or map)"
stop_daemon
