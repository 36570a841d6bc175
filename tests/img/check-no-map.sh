#!/bin/bash
# SPDX-License-Identifier: MIT
# check-no-map.sh - sectorfs-img check of an image that has its sidecar
# and a backing file that holds no data, but no map yet: what a raw file
# put in the store by hand, or a create or format change cut before its
# map, leaves.  The next start makes the map; check says so and calls the
# image clean (0), for the image and for the store, and check --repair
# too, never crashing on the map it does not have.  A raw file larger than
# its sidecar says is refused by the daemon (a disk is never cut): check
# says why (4), not that a map is missing or that all is clean.
. "$(dirname "$0")/lib.sh"

printf '{ "size": "1M", "sector": "4kn" }\n' > "$STORE/raw.json"
: > "$STORE/raw"
printf '{ "size": 0 }\n' > "$STORE/empty.json"
: > "$STORE/empty"

img 0 check "$STORE/raw"
out_is "$STORE/raw: note: no allocation map yet, and the backing file holds no data: sectorfs makes the map when it next opens the image"
out_is "$STORE/raw: clean (1048576 bytes, thin, no allocation map yet)"
pass "check NAME: a backing file without data and no map yet is clean (0)"

img 0 check "$STORE"
out_is "$STORE/empty: clean (0 bytes, thin, no allocation map yet)"
out_is "$STORE/raw: clean (1048576 bytes, thin, no allocation map yet)"
out_is "$STORE: 2 images, 2 clean"
pass "check STORE: both clean (0)"

img 0 check --repair "$STORE"
out_is "$STORE/raw: clean (1048576 bytes, thin, no allocation map yet)"
[ ! -e "$STORE/.sectorfs/raw.map" ] || fail "check --repair made a map it had no need to make"
pass "check --repair STORE: nothing to repair (0)"

# a raw file larger than its sidecar says, with or without data: the
# daemon refuses to import it (a disk is never cut), so check says why (4)
# and --repair leaves it
printf '{ "size": "1M" }\n' > "$STORE/big.json"
truncate -s 2M "$STORE/big"
img 4 check "$STORE/big"
out_is "$STORE/big: sidecar: big.json: key 'size': 1048576 is smaller than the existing backing file (2097152 bytes): sectorfs does not serve the image (not repairable: the sidecar is yours: correct the key it names)"
head -c 4096 /dev/urandom | dd of="$STORE/big" conv=notrunc status=none
img 4 check --repair "$STORE/big"
out_has "key 'size': 1048576 is smaller than the existing backing file"
[ "$(stat_val %s "$STORE/big")" -eq $((2 * M)) ] || fail "--repair cut the raw file"
pass "check: a raw file larger than its sidecar says is named (4), left alone by --repair"
