#!/bin/bash
# SPDX-License-Identifier: MIT
# sector-edit-refused.sh - editing an image's sector format in its sidecar
# after the image was made gets that image refused with a clear message
# (one log line naming the key), the recorded geometry, the backing file,
# the map, the user's sidecar and the data untouched, the other images
# still served; the image comes back, with its data, when the sidecar is
# put right.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-sidecars.sh"

serve_good_store

dd if=/dev/urandom of="$MNT/gthin" bs=64K count=16 conv=notrunc status=none || fail "writing gthin failed"
thin_sum=$(sum "$MNT/gthin" 0 $M)
import_sum=$(sum "$MNT/gimport" 0 $((4 * M)))
stop_daemon
backing_sum=$(sum "$STORE/gthin" 0 $((8 * M)))
sidecar gthin 8M 4kn thin
edited=$(cat "$STORE/gthin.json")
log_mark
start_daemon
[ ! -e "$MNT/gthin" ] || fail "gthin served after its sector format was edited to 4kn"
expect_eq "$(ls "$MNT" | tr '\n' ' ')" "gexplicit gezt gimport gzt " "images served after the edit"
expect_one_line gthin.json "sector" "512|never|recorded|changes"
expect_eq "$(sum "$MNT/gimport" 0 $((4 * M)))" "$import_sum" "other image's data while gthin is refused"
expect_eq "$(sum "$STORE/gthin" 0 $((8 * M)))" "$backing_sum" "gthin backing file while refused"
expect_eq "$(cat "$STORE/gthin.json")" "$edited" "the user's edited sidecar"
[ -f "$STORE/.sectorfs/gthin.map" ] || fail "gthin's map went away"
pass "sidecar edited to another sector size: image refused ($(log_new | grep -F gthin.json)), others served, nothing touched"

sidecar gthin 8M 512n thin
[ -f "$MNT/gthin" ] || fail "gthin not served again once its sidecar is put right"
expect_eq "$(stat -c %o "$MNT/gthin")" 512 "gthin sector after the sidecar is put right"
expect_eq "$(sum "$MNT/gthin" 0 $M)" "$thin_sum" "gthin data after the sidecar is put right"
pass "sidecar put right: image served again with its recorded geometry and data"
stop_daemon
