#!/bin/bash
# SPDX-License-Identifier: MIT
# img-check-sidecar.sh - sectorfs-img check of a sidecar that disagrees
# with its image: a sector format other than the one the image was made
# with (4; inflate refuses; --repair rewrites the sidecar, 1), a size
# smaller than the image (4; --repair, 1); a sidecar that does not parse
# (4, not repairable, said so), no sidecar (4, not repairable); a typo in
# the sidecar of an image not made yet is one problem; a declared image not
# made yet is clean.
. "$(dirname "$0")/lib.sh"

img 0 create -s 16M -f 4kn -b 64K "$STORE/thin4k"
make_small_raw
img 0 create --from "$T/small.raw" -f 4kn "$STORE/odd"

sed -i 's/"4kn"/"512e"/' "$STORE/thin4k.json"
img 4 check "$STORE/thin4k"
out_is "$STORE/thin4k: sidecar says sector 512e (512/4096) but the image was made with 4kn (4096/4096); the sector format never changes"
img 1 inflate "$STORE/thin4k"
err_is "sectorfs-img: $STORE/thin4k: cannot open image: thin4k.json: key 'sector': the image was made with logical 4096 / physical 4096 sectors and its sector format never changes (sidecar says 512 / 4096) (see 'sectorfs-img check $STORE/thin4k')"
img 1 check --repair "$STORE/thin4k"
out_is "$STORE/thin4k: repaired: rewrote thin4k.json with the recorded geometry (4kn (4096/4096), block size 64K, thin, 16777216 bytes)"
grep -q '"sector": "4kn"' "$STORE/thin4k.json" || fail "sidecar not repaired: $(cat "$STORE/thin4k.json")"
img 0 check "$STORE/thin4k"
pass "check: mismatched sector in the sidecar (4), --repair rewrites the sidecar (1)"

sed -i 's/"size": [0-9]*/"size": 4096/' "$STORE/odd.json"
img 4 check "$STORE/odd"
out_is "$STORE/odd: sidecar size 4096 is smaller than the image (12288 bytes); images never shrink"
img 1 check --repair "$STORE/odd"
grep -q '"size": 12288' "$STORE/odd.json" || fail "sidecar size not repaired: $(cat "$STORE/odd.json")"

echo '{ "size": "8Q" }' > "$STORE/odd.json"
img 4 check "$STORE/odd"
out_is "$STORE/odd: sidecar: odd.json: key 'size': '8Q' is not a valid size (examples: 512, 4K, 1M, 8G, 2T) (not repairable: the sidecar is yours: correct the key it names)"
out_is "$STORE/odd: 1 problem, none that --repair can fix"
img 4 check --repair "$STORE/odd"
out_is "$STORE/odd: not repaired: sidecar: odd.json: key 'size': '8Q' is not a valid size (examples: 512, 4K, 1M, 8G, 2T) (not repairable: the sidecar is yours: correct the key it names)"
out_is "$STORE/odd: 1 problem found, 0 repaired"
rm "$STORE/odd.json"
img 4 check "$STORE/odd"
out_is "$STORE/odd: no sidecar odd.json: the image is not declared (files left by an interrupted create or unlink?) (not repairable: it may be an image whose sidecar was removed on purpose: write a sidecar to serve it again, or remove the files)"
# a sidecar that does not parse, for an image not made yet: only the sidecar is named
echo '{ "size": "1M", "sectr": "4kn" }' > "$STORE/typo.json"
img 4 check "$STORE/typo"
out_is "$STORE/typo: sidecar: typo.json: key 'sectr': unknown key (not repairable: the sidecar is yours: correct the key it names)"
[ "$(wc -l < "$T/out")" -eq 2 ] || fail "a sidecar typo reported as more than one problem: $(cat "$T/out")"
rm "$STORE/typo.json"
rm -f "$STORE/odd" "$STORE/.sectorfs/odd.map"
echo '{ "size": "8M" }' > "$STORE/decl.json"
img 0 check "$STORE/decl"
out_is "$STORE/decl: clean (declared by its sidecar, not created yet)"
img 0 info "$STORE/decl"
out_is "state:          declared by its sidecar, not created yet"
rm "$STORE/decl.json"
pass "check: small sidecar size, bad sidecar, undeclared, declared-only"
