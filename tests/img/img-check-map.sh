#!/bin/bash
# SPDX-License-Identifier: MIT
# img-check-map.sh - sectorfs-img check of a damaged allocation map, with
# fsck's exit codes: usage 16, a missing image 8; a corrupted map header
# is reported (4), info and resize refuse the image, --repair keeps the
# corrupt map aside and rebuilds it from the backing file's extents (1),
# then clean (0); random bytes over a bitmap page are reported (4), info
# and map refuse and change nothing, --repair marks the damaged chunks'
# blocks allocated so nothing written is lost (1), then clean (0); the
# data never changes.
. "$(dirname "$0")/lib.sh"

make_raw
img 0 create --from "$RAW" -b 64K "$STORE/imp"
img 16 check
err_is "sectorfs-img check: missing STORE/NAME"
img 16 check --now "$STORE/imp"
img 8 check "$STORE/nosuch"
err_is "sectorfs-img: $STORE/nosuch: no such image (no sidecar, backing file or map)"
sha_imp=$(sha256sum < "$STORE/imp")

printf '\xff' | dd of="$STORE/.sectorfs/imp.map" bs=1 seek=20 conv=notrunc status=none
img 4 check "$STORE/imp"
out_is "$STORE/imp: allocation map: imp.map: map header checksum mismatch (corrupted)"
out_is "$STORE/imp: 1 problem; 'sectorfs-img check --repair $STORE/imp' fixes it without losing data"
img 1 info "$STORE/imp"
err_is "sectorfs-img: $STORE/imp: imp.map: map header checksum mismatch (corrupted) (see 'sectorfs-img check $STORE/imp')"
img 1 resize "$STORE/imp" 20M
err_is "sectorfs-img: $STORE/imp: cannot open image: imp.map: map header checksum mismatch (corrupted) (see 'sectorfs-img check $STORE/imp')"
img 1 check --repair "$STORE/imp"
out_is "$STORE/imp: repaired: moved the corrupt map to $STORE/.sectorfs/imp.map.corrupt"
out_is "$STORE/imp: repaired: rebuilt the allocation map from the backing file's data extents (3 of 160 blocks hold data)"
out_is "$STORE/imp: 1 problem found, 1 repaired"
[ -f "$STORE/.sectorfs/imp.map.corrupt" ] || fail "corrupt map not kept"
img 0 check "$STORE/imp"
map_is imp "0 196608 false" "196608 131072 true" "327680 10092544 false" "10420224 65536 true"
[ "$(sha256sum < "$STORE/imp")" = "$sha_imp" ] || fail "repair changed the data"
pass "check: corrupted map (4), --repair rebuilds it (1), then clean (0)"

# Random bytes over the bitmap page (its 8 chunks; blocks 0-159 are in the first).
dd if=/dev/urandom of="$STORE/.sectorfs/imp.map" bs=4096 seek=1 count=1 conv=notrunc status=none
cp "$STORE/.sectorfs/imp.map" "$T/imp.map.damaged"
dmg="imp.map: bitmap checksum mismatch in 8 chunks (first at byte 4096, blocks 0-159): the map is damaged; 'sectorfs-img check --repair' rebuilds it"
img 4 check "$STORE/imp"
out_is "$STORE/imp: allocation map: $dmg"
out_is "$STORE/imp: 1 problem; 'sectorfs-img check --repair $STORE/imp' fixes it without losing data"
img 1 info "$STORE/imp"
err_is "sectorfs-img: $STORE/imp: $dmg (see 'sectorfs-img check $STORE/imp')"
img 1 map "$STORE/imp"
err_is "sectorfs-img: $STORE/imp: $dmg (see 'sectorfs-img check $STORE/imp')"
cmp -s "$STORE/.sectorfs/imp.map" "$T/imp.map.damaged" || fail "check, info or map changed the damaged map"
img 1 check --repair "$STORE/imp"
out_is "$STORE/imp: repaired: marked the 160 blocks of 8 damaged bitmap chunks allocated: nothing written is lost; those blocks now read what the backing file holds"
out_is "$STORE/imp: 1 problem found, 1 repaired"
! grep -q "moved the corrupt map\|rebuilt the allocation map" "$T/out" || fail "a salvage rebuilt the map: $(cat "$T/out")"
img 0 check "$STORE/imp"
out_is "$STORE/imp: clean (10485760 bytes, thin, 160 of 160 blocks allocated)"
map_is imp "0 10485760 true"
[ "$(sha256sum < "$STORE/imp")" = "$sha_imp" ] || fail "salvage changed the data"
pass "check: damaged bitmap chunks (4, info and map refuse), --repair salvages them (1), then clean (0)"
