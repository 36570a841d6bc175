#!/bin/bash
# SPDX-License-Identifier: MIT
# grow-all-or-nothing.sh - a grow that fails on a full store is all or
# nothing: disk size, backing file length and reservation, map and sidecar
# as before, space given back (thin into a full store, zeroedthick needing
# more room than there is, 4 TiB needing more map than there is);
# sectorfs-img check is clean, and the grow works once there is room.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

mkdir -p "$T/full"
mount -t tmpfs -o size=64M tmpfs "$T/full" || skip "cannot mount a tmpfs"
on_exit "umount -l $T/full"
STORE=$T/full
sidecar big4 1G 4kn thin
sidecar zt 10M 4kn zeroedthick
start_daemon
dd if=/dev/urandom of="$MNT/big4" bs=4K count=1 oflag=direct conv=notrunc,fsync status=none || fail "write big4"
dd if=/dev/urandom of="$MNT/zt" bs=4K count=1 seek=100 oflag=direct conv=notrunc,fsync status=none || fail "write zt"
big_sum=$(dd if="$MNT/big4" bs=4K count=1 iflag=direct status=none | sha256sum)
bigjson_sum=$(sha256sum < "$STORE/big4.json")
ztjson_sum=$(sha256sum < "$STORE/zt.json")
zt_sum=$(dd if="$MNT/zt" bs=4K count=1 skip=100 iflag=direct status=none | sha256sum)
# a zeroedthick image asking for more room than the store has
free0=$(df -B1 --output=avail "$STORE" | tail -n1)
zt_blocks=$(stat -c %b "$STORE/zt")
expect_errno "No space left on device" truncate -s 100M "$MNT/zt"
free1=$(df -B1 --output=avail "$STORE" | tail -n1)
[ "$free1" -ge "$free0" ] || fail "a failed zeroedthick grow kept $((free0 - free1)) bytes of the store"
[ "$(stat -c %b "$STORE/zt")" -eq "$zt_blocks" ] || fail "zt's reservation changed"
[ "$(stat -c %s "$STORE/zt")" -eq $((10 * M)) ] || fail "zt's backing file is $(stat -c %s "$STORE/zt") bytes"
# then a full store
dd if=/dev/zero of="$STORE/filler" bs=64K status=none 2>/dev/null
expect_errno "No space left on device" truncate -s 2G "$MNT/big4"
expect_errno "No space left on device" truncate -s 4T "$MNT/big4"
sleep 1.1   # attribute cache
[ "$(stat -c %s "$MNT/big4")" -eq $((1024 * M)) ] || fail "big4 is $(stat -c %s "$MNT/big4") bytes after failed grows"
[ "$(stat -c %s "$STORE/big4")" -eq $((1024 * M)) ] || fail "big4's backing file is $(stat -c %s "$STORE/big4") bytes"
[ "$(stat -c %s "$MNT/zt")" -eq $((10 * M)) ] || fail "zt is $(stat -c %s "$MNT/zt") bytes"
[ "$(sha256sum < "$STORE/big4.json")" = "$bigjson_sum" ] || fail "big4.json changed: $(cat "$STORE/big4.json")"
[ "$(sha256sum < "$STORE/zt.json")" = "$ztjson_sum" ] || fail "zt.json changed: $(cat "$STORE/zt.json")"
"$SECTORFS_IMG" info --json "$STORE/big4" | grep -q '"size": 1073741824' || fail "big4's map: $("$SECTORFS_IMG" info --json "$STORE/big4")"
ls -A "$STORE/.sectorfs" | grep -qE '\.grow$|^\.tmp\.' && fail "left in the state directory: $(ls -A "$STORE/.sectorfs")"
[ "$(dd if="$MNT/big4" bs=4K count=1 iflag=direct status=none | sha256sum)" = "$big_sum" ] || fail "big4's data"
[ "$(dd if="$MNT/zt" bs=4K count=1 skip=100 iflag=direct status=none | sha256sum)" = "$zt_sum" ] || fail "zt's data"
rm -f "$STORE/filler"
stop_daemon
"$SECTORFS_IMG" check "$STORE" > "$T/check.out" 2>&1 || fail "check after failed grows: $(cat "$T/check.out")"
start_daemon
[ "$(stat -c %s "$MNT/big4")" -eq $((1024 * M)) ] && [ "$(stat -c %s "$MNT/zt")" -eq $((10 * M)) ] ||
	fail "sizes changed at the next mount"
truncate -s 2G "$MNT/big4" || fail "grow with room again"
stop_daemon
pass "failed grows on a full store: size, backing length, reservation, map, sidecar as before; space given back"
