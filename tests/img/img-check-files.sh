#!/bin/bash
# SPDX-License-Identifier: MIT
# img-check-files.sh - sectorfs-img check of an image whose files are
# damaged: a backing file shorter than the disk (4; --repair extends it,
# 1; then clean), a missing map (4; --repair rebuilds it from the backing
# file's extents, 1; then clean).
. "$(dirname "$0")/lib.sh"

img 0 create -s 16M -f 4kn -b 64K "$STORE/thin4k"
make_small_raw
img 0 create --from "$T/small.raw" -f 4kn "$STORE/odd"

truncate -s 1M "$STORE/thin4k"
img 4 check "$STORE/thin4k"
out_is "$STORE/thin4k: backing file is 1048576 bytes, shorter than the disk (16777216 bytes)"
img 1 check --repair "$STORE/thin4k"
out_is "$STORE/thin4k: repaired: extended the backing file to 16777216 bytes"
[ "$(stat_val %s "$STORE/thin4k")" -eq $((16 * M)) ] || fail "backing not extended"
img 0 check "$STORE/thin4k"
pass "check: truncated backing file (4), --repair extends it (1)"

rm "$STORE/.sectorfs/odd.map"
img 4 check "$STORE/odd"
out_is "$STORE/odd: allocation map .sectorfs/odd.map is missing"
img 1 check --repair "$STORE/odd"
out_is "$STORE/odd: repaired: rebuilt the allocation map from the backing file's data extents (1 of 1 blocks hold data)"
img 0 check "$STORE/odd"
pass "check: missing map (4), --repair rebuilds it (1)"
