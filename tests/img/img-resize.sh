#!/bin/bash
# SPDX-License-Identifier: MIT
# img-resize.sh - sectorfs-img resize grows an image (to a size or by
# +SIZE) and rewrites its sidecar, says when it is already that size,
# refuses to shrink, a size off the sector, a bad or missing SIZE and an
# unknown image, each with its exact message.
. "$(dirname "$0")/lib.sh"

img 0 create -s 8M -f 4kn -b 64K "$STORE/thin4k"
img 0 resize "$STORE/thin4k" 12M
out_is "resized $STORE/thin4k: 8M (8388608 bytes) -> 12M (12582912 bytes)"
grep -q '"size": 12582912' "$STORE/thin4k.json" || fail "sidecar not rewritten: $(cat "$STORE/thin4k.json")"
img 0 resize "$STORE/thin4k" +4M
out_is "resized $STORE/thin4k: 12M (12582912 bytes) -> 16M (16777216 bytes)"
img 0 resize "$STORE/thin4k" 16M
out_is "$STORE/thin4k: already 16M (16777216 bytes)"
img 1 resize "$STORE/thin4k" 8M
err_is "sectorfs-img: $STORE/thin4k: cannot shrink from 16M (16777216 bytes) to 8M (8388608 bytes): images only grow"
img 1 resize "$STORE/thin4k" $((16 * M + 512))
err_is "sectorfs-img: $STORE/thin4k: size 16777728 is not a multiple of the logical sector size 4096"
img 1 resize "$STORE/thin4k" 1Q
err_is "sectorfs-img resize: invalid size '1Q' for SIZE: use a number of bytes, optionally followed by K, M, G or T (e.g. 8G)"
img 1 resize "$STORE/thin4k"
err_is "sectorfs-img resize: missing SIZE"
img 1 resize "$STORE/nosuch" 1G
err_is "sectorfs-img: $STORE/nosuch: no such image (no sidecar nosuch.json in $STORE)"
map_is thin4k "0 16777216 false"
pass "resize grows, refuses to shrink"
