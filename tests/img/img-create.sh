#!/bin/bash
# SPDX-License-Identifier: MIT
# img-create.sh - sectorfs-img create makes thin, zeroedthick and
# eagerzeroedthick images, with named and explicit sector formats, without
# progress output when stdout is no terminal; the sidecar, info (text and
# --json), map and check say what was made; create never overwrites any
# part of an existing image.
. "$(dirname "$0")/lib.sh"

img 0 create -s 8M -f 4kn -b 64K "$STORE/thin4k"
out_is "created $STORE/thin4k: 8M (8388608 bytes), 4kn (logical 4096, physical 4096), thin, block size 64K"
img 0 create -s 16M -f 512e -p zeroedthick "$STORE/zt"
img 0 create -s 8M --logical 4096 --physical 8192 -b 8K -p eagerzeroedthick --no-zero-offload "$STORE/ezt"
out_is "created $STORE/ezt: 8M (8388608 bytes), custom (logical 4096, physical 8192), eagerzeroedthick, block size 8K"
[ "$(wc -l < "$T/out")" -eq 1 ] || fail "progress output without a terminal: $(cat "$T/out")"
grep -q $'\r' "$T/out" && fail "carriage returns in non-tty output"
grep -q '"sector": "4kn"' "$STORE/thin4k.json" || fail "thin4k.json: $(cat "$STORE/thin4k.json")"
grep -q '"provisioning": "zeroedthick"' "$STORE/zt.json" || fail "zt.json: $(cat "$STORE/zt.json")"
grep -q '"zero_offload": false' "$STORE/ezt.json" || fail "ezt.json: $(cat "$STORE/ezt.json")"
img 0 info --json "$STORE/ezt"
[ "$(jv provisioning)" = eagerzeroedthick ] && [ "$(jv allocated_blocks)" = 1024 ] &&
	[ "$(jv total_blocks)" = 1024 ] && [ "$(jv zeroed)" = true ] && [ "$(jv physical_sector_size)" = 8192 ] &&
	[ "$(jv served)" = false ] || fail "info --json of ezt: $(cat "$T/out")"
[ "$(jv backing_bytes_used)" -ge $((8 * M)) ] || fail "ezt: backing file not fully allocated: $(cat "$T/out")"
img 0 info "$STORE/zt"
out_is "sector format:  512e (logical 512, physical 4096)"
out_is "provisioning:   zeroedthick"
out_is "allocated:      0 of 16 blocks, 0 B (0 bytes)"
out_is "served:         no"
map_is thin4k "0 8388608 false"
map_is ezt "0 8388608 true"
img 0 check "$STORE/thin4k"
out_is "$STORE/thin4k: clean (8388608 bytes, thin, 0 of 128 blocks allocated)"
pass "create thin / zeroedthick / eagerzeroedthick, info, map, check"

# ---- create refuses to overwrite any part of an image ----
img 1 create -s 8M "$STORE/thin4k"
err_is "sectorfs-img: $STORE/thin4k: image already exists ($STORE/thin4k.json is there); refusing to overwrite it"
: > "$STORE/leftover"
img 1 create -s 8M "$STORE/leftover"
err_is "sectorfs-img: $STORE/leftover: image already exists ($STORE/leftover is there); refusing to overwrite it"
[ ! -s "$STORE/leftover" ] && [ ! -e "$STORE/leftover.json" ] || fail "leftover was touched"
rm -f "$STORE/leftover"
pass "create never overwrites"
