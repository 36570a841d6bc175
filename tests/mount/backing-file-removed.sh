#!/bin/bash
# SPDX-License-Identifier: MIT
# backing-file-removed.sh - only the backing file of a served image
# removed from the store, its sidecar kept: the next lookup serves a fresh
# image of the sidecar's size that reads as zeros, not the old data; the
# other image is untouched.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp

sidecar b 4M 512e zeroedthick 64K
sidecar c 4M 512n thin 64K
serve_written b

# only the backing file of b removed; its sidecar declares it again
rm "$STORE/b"
ls "$MNT" > "$T/ls"
grep -qx b "$T/ls" || fail "ls $MNT does not list b after only its backing file was removed (its sidecar declares it): $(tr '\n' ' ' < "$T/ls")"
[ "$(stat_val %s "$MNT/b")" -eq $((4 * M)) ] || fail "b: size $(stat_val %s "$MNT/b"), the sidecar says 4M"
dd if="$MNT/b" of="$T/got" bs=1M iflag=direct status=none || fail "reading the new b failed"
[ "$(stat_val %s "$T/got")" -eq $((4 * M)) ] || fail "b: read $(stat_val %s "$T/got") bytes, the sidecar says 4M"
cmp -s "$T/got" <(head -c $((4 * M)) /dev/zero) ||
	fail "b, served again from its sidecar after its backing file was removed, does not read as zeros: $(cmp "$T/got" <(head -c $((4 * M)) /dev/zero) 2>&1)"
[ "$(stats_key b allocated_blocks)" = 0 ] || fail "b: allocated_blocks $(stats_key b allocated_blocks) in the fresh image"
[ -f "$STORE/b" ] && [ -f "$STORE/.sectorfs/b.map" ] || fail "b: no new backing file or map: $(ls -A "$STORE" "$STORE/.sectorfs" | tr '\n' ' ')"
dd if="$MNT/c" of="$T/got" bs=1M iflag=direct status=none
cmp -s "$T/got" "$T/c.before" || fail "c changed when b's backing file was removed"
pass "backing file of b removed, sidecar kept: b is served again as a fresh 4M image of zeros, the old data gone, c untouched"
stop_daemon
for img in b c; do check_clean $img "after the removal"; done
