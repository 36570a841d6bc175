#!/bin/bash
# SPDX-License-Identifier: MIT
# check-store.sh - sectorfs-img check STORE: every image of a store, what a
# crash left for the next start to put right, and the files that are no
# image, with fsck exit codes:
#  - a clean store: 0, one line per image, files that are no image noted;
#  - leftovers (a temporary file, an old temporary sidecar, an interrupted
#    unlink and grow): 0, each named "pending: ... completed at the next
#    start", and the images judged as that start leaves them; --repair
#    puts them right now (1) and says what it did; then 0;
#  - a backing file and map without a sidecar: a problem of that name (4),
#    left alone by --repair (the data may be wanted);
#  - the user's files are never touched;
#  - a command that changes an image shows, of what the recovery did,
#    what concerns that image only.
# Needs no mount.
. "$(dirname "$0")/lib.sh"

img 0 create -s 1M -f 4kn "$STORE/a"
img 0 create -s 2M -p zeroedthick "$STORE/b"
echo "my notes" > "$STORE/notes"
img 0 check "$STORE"
out_has "$STORE/a: clean (1048576 bytes"
out_has "$STORE/b: clean (2097152 bytes"
out_has "$STORE/notes: note: not an image (no sidecar, no map); left alone"
out_has "$STORE: 2 images, 2 clean"
pass "a clean store: 0, each image checked, the user's file noted"

# what a crash leaves: a temporary file, an old-style temporary sidecar, an
# unlink whose sidecar was gone, a grow whose map header was not written
touch "$STORE/.sectorfs/.tmp.999.1"
cp "$STORE/a.json" "$STORE/a.json.tmp.4242"
printf 'unlink %s %s\n' "$(stat -c %d "$STORE/a")" "$(stat -c %i "$STORE/a")" > "$STORE/.sectorfs/a.unlink"
rm "$STORE/a.json"
printf 'grow 2097152 4194304 2097152 1\n' > "$STORE/.sectorfs/b.grow"
truncate -s 4M "$STORE/b"
img 0 check "$STORE"
out_has ".sectorfs/.tmp.999.1: pending: a temporary file left by an interrupted write: removed at the next start"
out_has "a.json.tmp.4242: pending: a temporary sidecar left by an interrupted rewrite: removed at the next start"
out_lacks "a.json.tmp.4242: note: not an image"
out_has "$STORE/a: pending: an interrupted unlink of a, past its commit"
out_has "$STORE/b: pending: an interrupted grow of b from 2097152 to 4194304 bytes, before its commit (the map says the old size): undone: completed at the next start"
out_has "$STORE/b: clean (2097152 bytes"
out_lacks "note: b: not the backing file"
img 0 check "$STORE/b"
out_has "$STORE/b: pending: an interrupted grow of b from 2097152 to 4194304 bytes"
img 1 check --repair "$STORE"
out_has "repaired: removed .sectorfs/.tmp.999.1"
out_has "repaired: a: finished an interrupted unlink"
out_has "repaired: b: undid an interrupted grow from 2097152 to 4194304 bytes"
[ "$(stat -c %s "$STORE/b")" -eq 2097152 ] || fail "the undone grow left b $(stat -c %s "$STORE/b") bytes long"
[ ! -e "$STORE/a" ] && [ ! -e "$STORE/.sectorfs/a.map" ] || fail "the interrupted unlink left files of a"
img 0 check "$STORE"
out_has "$STORE: 1 image, 1 clean"
[ "$(cat "$STORE/notes")" = "my notes" ] || fail "the user's file was changed"
pass "leftovers of a crash: 0, each named as pending and the images judged as the next start leaves them; --repair puts them right (1); then 0"

# a backing file and map without a sidecar: not served, and left alone
img 0 create -s 1M "$STORE/hidden"
mv "$STORE/hidden.json" "$T/hidden.json"
img 4 check "$STORE"
out_has "$STORE/hidden: no sidecar hidden.json"
img 4 check --repair "$STORE"
[ -e "$STORE/hidden" ] && [ -e "$STORE/.sectorfs/hidden.map" ] || fail "--repair removed an undeclared image's files"
mv "$T/hidden.json" "$STORE/hidden.json"
img 0 check "$STORE"
pass "backing file and map without a sidecar: a problem (4), left alone by --repair"

# an interrupted sectorfs-img create (backing file and map made, no sidecar
# yet) is undone; one whose record has no inode yet removes only a backing
# file that holds no data; an interrupted inflate makes the sidecar follow
# the map
# (every sectorfs-img command that takes the lock puts the store right
# first, so the records are planted after the last of them)
img 0 create -s 1M "$STORE/infl"
img 0 inflate "$STORE/infl"
img 0 create -s 1M "$STORE/half"
printf 'create %s %s\n' "$(stat -c %d "$STORE/half")" "$(stat -c %i "$STORE/half")" > "$STORE/.sectorfs/half.create"
rm "$STORE/half.json"
echo "data of the user's" > "$STORE/early"
printf 'create\n' > "$STORE/.sectorfs/early.create"
sed -i 's/eagerzeroedthick/thin/' "$STORE/infl.json"
printf 'inflate\n' > "$STORE/.sectorfs/infl.inflate"
img 0 check "$STORE"
out_has "$STORE/half: pending: an interrupted create of half by sectorfs-img, before its sidecar: its files are removed"
out_has "$STORE/infl: pending: an interrupted inflate of infl, past its commit"
out_has "$STORE/infl: clean ("
img 1 check --repair "$STORE"
out_has "repaired: half: undid an interrupted create"
out_has "repaired: early: not the backing file an interrupted create made"
out_has "repaired: infl: finished an interrupted inflate"
[ ! -e "$STORE/half" ] && [ ! -e "$STORE/.sectorfs/half.map" ] || fail "the undone create left files"
[ "$(cat "$STORE/early")" = "data of the user's" ] || fail "a file holding data was removed"
grep -q eagerzeroedthick "$STORE/infl.json" || fail "infl.json: $(cat "$STORE/infl.json")"
img 0 check "$STORE/infl"
pass "interrupted create undone (a file holding data left alone), interrupted inflate finished"

# a command that changes an image shows the warnings about that image: of
# what the store's recovery did when it took the lock, only what it did to
# this image, not to another
img 0 create -s 1M "$STORE/g"
img 0 create -s 1M "$STORE/h"
printf 'create %s %s\n' "$(stat -c %d "$STORE/h")" "$(stat -c %i "$STORE/h")" > "$STORE/.sectorfs/h.create"
rm "$STORE/h.json"
img 0 resize "$STORE/g" 2M
[ ! -e "$STORE/h" ] || fail "the interrupted create of h was not undone"
[ ! -s "$T/err" ] || fail "resize of g showed warnings about another image: $(cat "$T/err")"
printf 'grow 2097152 4194304 2097152 1\n' > "$STORE/.sectorfs/g.grow"
truncate -s 4M "$STORE/g"
img 0 resize "$STORE/g" 3M
err_is "sectorfs-img: warning: g: undid an interrupted grow from 2097152 to 4194304 bytes; the image keeps 2097152 bytes"
out_is "resized $STORE/g: 2M (2097152 bytes) -> 3M (3145728 bytes)"
pass "a changing command shows what the recovery did to its image, not to another"
