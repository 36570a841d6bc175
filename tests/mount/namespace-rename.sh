#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace-rename.sh - rename moves image, sidecar and map together (the
# map keeps its inode), data and stats read back under the new name; a
# rename over an existing image replaces it (data, size, sidecar, map);
# the result survives unmount + remount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-namespace.sh"
requires_fuse

start_daemon "${OPTS[@]}"
touch "$MNT/other" || fail "touch $MNT/other failed"

truncate -s 1M "$MNT/other" || fail "truncate other failed"
write_random "$MNT/other" 0 $M
other_sum=$(range_sum "$MNT/other" 0 $M)
map_ino=$(stat -c %i "$STORE/.sectorfs/other.map")
mv "$MNT/other" "$MNT/moved" || fail "mv other moved failed"
three_files other absent
three_files moved present
expect_eq "$(stat -c %i "$STORE/.sectorfs/moved.map")" "$map_ino" "inode of the moved map"
expect_eq "$(json_num "$STORE/moved.json" size)" $M "moved sidecar size"
[ ! -e "$MNT/other" ] || fail "$MNT/other still visible after rename"
expect_eq "$(range_sum "$MNT/moved" 0 $M)" "$other_sum" "data under the new name"
[ -f "$MNT/.stats/moved.json" ] || fail ".stats/moved.json missing after rename"
[ ! -e "$MNT/.stats/other.json" ] || fail ".stats/other.json still there after rename"
pass "rename moves image, sidecar and map together; data and stats read back under the new name"

: > "$MNT/victim" || fail "creating victim failed"
truncate -s 256K "$MNT/victim" || fail "truncate victim failed"
write_random "$MNT/victim" 0 $((256 * K))
mv "$MNT/moved" "$MNT/victim" || fail "mv moved victim (over an existing image) failed"
three_files moved absent
three_files victim present
expect_eq "$(stat -c %i "$STORE/.sectorfs/victim.map")" "$map_ino" "inode of the map after rename over"
expect_eq "$(stat -c %s "$MNT/victim")" $M "size of the replaced image"
expect_eq "$(json_num "$STORE/victim.json" size)" $M "sidecar size of the replaced image"
expect_eq "$(range_sum "$MNT/victim" 0 $M)" "$other_sum" "data of the replaced image"
expect_eq "$(ls "$MNT" | grep -c '^victim$')" 1 "entries named victim"
pass "rename over an existing image replaces it (data, size, sidecar, map)"

victim_sum=$(range_sum "$MNT/victim" 0 $M)
stop_daemon
start_daemon "${OPTS[@]}"
three_files victim present
expect_eq "$(stat -c %s "$MNT/victim")" $M "victim size after remount"
expect_eq "$(range_sum "$MNT/victim" 0 $M)" "$victim_sum" "victim data after remount"
pass "the renamed image survives unmount + remount"
stop_daemon
