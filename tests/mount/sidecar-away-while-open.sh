#!/bin/bash
# SPDX-License-Identifier: MIT
# sidecar-away-while-open.sh - only the sidecar of an image taken away
# for a moment (ls while it is away) with a descriptor open on the image:
# the image leaves the namespace and comes back with its sidecar, and
# writes fsynced afterwards through a new open and through the old
# descriptor are all there after remount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp awk

head -c $((8 * M)) /dev/urandom > "$T/src.d"
start_daemon
# only the sidecar of s taken away for a moment (as an editor that does not
# save in place does), with s open: s leaves the namespace while the
# sidecar is away and is served again when it is back.  Writes made and
# fsynced through the mount afterwards, and through the descriptor still
# open, are all durable: fsync makes them so, whichever way they came.
sidecar s 4M 4kn thin 64K
dd if="$T/src.d" of="$MNT/s" bs=64K count=2 oflag=direct conv=notrunc,fsync status=none || fail "s: write failed"
exec 5<>"$MNT/s"
mv "$STORE/s.json" "$T/s.json.away"
ls "$MNT" | grep -qx s && fail "ls $MNT still lists s while its sidecar is away"
mv "$T/s.json.away" "$STORE/s.json"
ls "$MNT" | grep -qx s || fail "ls $MNT does not list s once its sidecar is back"
# block 2 through a new open, block 3 through the descriptor open all along
dd if="$T/src.d" of="$MNT/s" bs=64K count=1 skip=2 seek=2 oflag=direct conv=notrunc,fsync status=none ||
	fail "s: write through a new open failed"
dd if="$T/src.d" bs=64K count=1 skip=3 seek=3 oflag=direct conv=notrunc,fsync status=none >&5 ||
	fail "s: write through the descriptor held open failed"
exec 5>&-
stop_daemon
start_daemon
dd if="$MNT/s" of="$T/got" bs=64K count=4 iflag=direct status=none
lost=
for blk in 0 1 2 3; do
	cmp -s -i $((blk * 65536)):$((blk * 65536)) -n 65536 "$T/got" "$T/src.d" || lost="$lost $blk"
done
if [ -n "$lost" ]; then
	not_ok "s: fsynced 64K block(s)$lost lost after a clean unmount: s was held open (fd 5) while its sidecar was moved away (ls) and back (ls); block 2 was written with dd conv=fsync through a new open, block 3 with dd conv=fsync through fd 5; after remount they read as $(for blk in $lost; do cmp -s -i $((blk * 65536)):0 -n 65536 "$T/got" /dev/zero && echo -n "zeros " || echo -n "other data "; done)(map: $("$SECTORFS_IMG" map "$STORE/s" 2>&1 | awk 'NR > 1 && $3 == "true" { printf "%s+%s ", $1, $2 }')allocated)"
else
	pass "sidecar of s away for a moment while s was open: every write fsynced through a new open and through the old descriptor is there after remount"
fi
stop_daemon
check_clean s "after the sidecar came back"
