#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-copy.sh - cp of a raw file with a hole at its end, and dd of
# a raw file, into new names in the mount: each image grows with the
# writes at its end until the handle that created it is closed, then it
# is a disk of the source's size and bytes; the sidecar says the size,
# the room grown ahead of the writes is given back (zeroedthick), and
# sectorfs-img check is clean.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

start_daemon -o sector=4kn,provisioning=zeroedthick,block_size=256K

head -c $((5 * M)) /dev/urandom > "$T/src"
truncate -s $((7 * M)) "$T/src"            # a hole at the end: cp sizes it with ftruncate
cp "$T/src" "$MNT/cp" || fail "cp into the mount failed"
cmp "$T/src" "$MNT/cp" || fail "cp: the image differs from the source"
[ "$(stat -c %s "$MNT/cp")" -eq $((7 * M)) ] || fail "cp: size $(stat -c %s "$MNT/cp")"
dd if="$T/src" of="$MNT/dd" bs=1M status=none || fail "dd into a new name failed"
cmp "$T/src" "$MNT/dd" || fail "dd: the image differs from the source"
for n in cp dd; do
	grep -q "\"size\": $((7 * M))," "$STORE/$n.json" || fail "$n.json: $(cat "$STORE/$n.json")"
	[ "$(stat -c %s "$STORE/$n")" -eq $((7 * M)) ] || fail "$n: backing file $(stat -c %s "$STORE/$n") bytes"
	blocks=$(stat -c %b "$STORE/$n")
	[ $((blocks * 512)) -le $((7 * M + 256 * 1024)) ] ||
		fail "$n: $((blocks * 512)) bytes reserved for a 7 MiB zeroedthick disk: the room ahead was kept"
done
pass "cp and dd into new names: the source's size and bytes, sidecar and reservation as the disk"
stop_daemon
"$SECTORFS_IMG" check "$STORE" > "$T/check.out" 2>&1 || fail "check after the copies: $(cat "$T/check.out")"
