#!/bin/bash
# SPDX-License-Identifier: MIT
# map-bitmap-damaged.sh - random bytes over a map's bitmap page: the next
# mount does not serve the image (another one still is) and logs a line
# naming its map and the bitmap damage; 'sectorfs-img check' exits 4
# naming the map and the number of bad chunks; 'check --repair' exits 1,
# saying what it did; then the image is served again, its 4 written blocks
# read back intact and a block never written reads zeros (the salvage
# marks every block of a damaged chunk allocated, and the sparse backing
# file holds zeros there).
. "$(dirname "$0")/../img/lib.sh"
. "$(dirname "$0")/lib-map.sh"
requires_fuse
requires_cmd sha256sum python3 od

map_setup

dd if=/dev/urandom of="$MAP" bs=4096 seek=1 count=1 conv=notrunc status=none
log_mark
start_daemon
[ -e "$MNT/other" ] || fail "the other image is not served"
[ ! -e "$MNT/thin" ] || fail "an image with a damaged map is served"
ls "$MNT" | grep -qx thin && fail "an image with a damaged map is listed"
log_new | grep -F "thin.map" | grep -qF "bitmap checksum mismatch in 8 chunks (first at byte 4096, blocks 0-1023)" ||
	fail "the log does not name the damaged map: $(log_new)"
stop_daemon
pass "an image whose map bitmap is overwritten with random bytes is refused, the log naming the map"

img 4 check "$STORE/thin"
out_has "$STORE/thin: allocation map: thin.map: bitmap checksum mismatch in 8 chunks (first at byte 4096, blocks 0-1023)"
img 1 check --repair "$STORE/thin"
out_has "$STORE/thin: repaired: marked the 1024 blocks of 8 damaged bitmap chunks allocated: nothing written is lost; those blocks now read what the backing file holds"
img 0 check "$STORE/thin"
out_has "$STORE/thin: clean (67108864 bytes, thin, 1024 of 1024 blocks allocated)"
start_daemon
[ -e "$MNT/thin" ] || fail "the repaired image is not served"
expect_data "after the repair"
expect_eq "$(stats_key thin allocated_blocks)" 1024 "allocated blocks after the salvage"
stop_daemon
pass "check finds the damage (4), --repair salvages it (1), the 4 written blocks read back intact"
