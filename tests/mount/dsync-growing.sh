#!/bin/bash
# SPDX-License-Identifier: MIT
# dsync-growing.sh - a growing image keeps its room ahead across an fsync,
# so a copy with a flush per write zeroes no more than it writes.
#
# dd oflag=direct,dsync bs=4k count=1024 into a new name (the image grows
# with its writes; every write is followed by a flush) used to give the
# room ahead back at each flush and take it again at the next write,
# zeroing the rest of the block each time: 514 MiB zeroed for 4 MiB
# written, 13 times as long as into a declared image.  Now:
#  - zeroed_bytes (the stats) grows by at most what was written plus one
#    block (thin, 1 MiB blocks: each first write zeroes the rest of its
#    block), as for the same dd into a declared image;
#  - the close still gives the room back: size, sidecar and backing file
#    say 4 MiB, and the data reads back.
# (into-mount.sh: after kill -9 what a creator fsynced is there.)
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd cmp

M=$((1024 * 1024))
start_daemon

head -c $((4 * M)) /dev/urandom > "$T/src"
dd if="$T/src" of="$MNT/new" bs=4k count=1024 oflag=direct,dsync status=none || fail "dd into a new image failed"
written=$(stats_key new bytes_written)
zeroed=$(stats_key new zeroed_bytes)
[ "$written" = $((4 * M)) ] || fail "bytes_written $written, expected $((4 * M))"
[ "$zeroed" -le $((written + M)) ] ||
	fail "dd oflag=dsync of 4 MiB into a new image zeroed $zeroed bytes (more than written + one block)"
pass "dd oflag=direct,dsync bs=4k of 4 MiB into a new image: $written bytes written, $zeroed zeroed"

[ "$(stat_val %s "$MNT/new")" = $((4 * M)) ] || fail "size after the copy: $(stat_val %s "$MNT/new")"
[ "$(stat_val %s "$STORE/new")" = $((4 * M)) ] || fail "backing file after close: $(stat_val %s "$STORE/new")"
grep -q "\"size\": $((4 * M))" "$STORE/new.json" || fail "sidecar after close: $(cat "$STORE/new.json")"
cmp -s "$MNT/new" "$T/src" || fail "the copy does not read back"
pass "the close gives the room back: size, backing file and sidecar say 4 MiB; the data reads back"

stop_daemon
