#!/bin/bash
# SPDX-License-Identifier: MIT
# check-identity.sh - sectorfs-img check and a store whose files do not
# belong together, or that a crash left half changed:
#  - a map copied from another image is named (and info refuses to show
#    its geometry as the image's), and --repair never adopts it: it is set
#    aside (.sectorfs/NAME.map.stale) and the map rebuilt from the backing
#    file, the sidecar's geometry kept;
#  - a FIFO as a map is named, never waited on, and set aside by --repair;
#  - a create cut before its backing file (a map that records no data) is
#    an image not made yet (0); a backing file gone while its map records
#    data is a problem (4) that --repair leaves, naming the command;
#  - a grow record whose image was removed by hand is pending (dropped at
#    the next start, 0); one whose map cannot be read is a problem (4)
#    that --repair clears, deciding by the sidecar;
#  - a rename record whose names are both taken since is a problem that
#    only the user can settle: check names the command to run.
# Needs no mount.
. "$(dirname "$0")/lib.sh"

M=1048576

# ident FILE: FILE's identity as a record of this version names it (core/store/intent.h)
ident() {
	local w
	w=$(stat -c %w "$1")
	printf 'dev=%s ino=%s btime=%s.%s' "$(stat -c %d "$1")" "$(stat -c %i "$1")" "$(stat -c %W "$1")" \
		"$(echo "$w" | sed -n 's/.*:[0-9][0-9]\.\([0-9]*\) .*/\1/p')"
}
# a 512n image holding data in its first sector, b a 4kn image
head -c 512 /dev/urandom > "$T/sector"
img 0 create -s 1M -f 512n -b 64K --from "$T/sector" --raw "$STORE/a"
img 0 create -s 1M -f 4kn -b 64K "$STORE/b"
cp "$STORE/.sectorfs/b.map" "$STORE/.sectorfs/a.map"
img 1 info "$STORE/a"
err_has "$STORE/a: the allocation map is not this image's: a.map: a copy of the map of image 'b'"
img 4 check "$STORE"
out_has "$STORE/a: allocation map: a.map: a copy of the map of image 'b', not this image's"
out_lacks "sidecar says sector"
img 1 check --repair "$STORE"
out_has "$STORE/a: repaired: moved the foreign map to $STORE/.sectorfs/a.map.stale"
out_has "$STORE/a: repaired: rebuilt the allocation map from the backing file's data extents (1 of 16 blocks hold data)"
grep -q '"512n"' "$STORE/a.json" || fail "--repair rewrote a.json to the foreign map's geometry: $(cat "$STORE/a.json")"
img 0 info "$STORE/a"
out_has "512n"
img 0 map "$STORE/a"
grep -qE '^0 +65536 +true$' "$T/out" || fail "a's first block is not allocated: $(cat "$T/out")"
cmp -s -n 512 "$T/sector" "$STORE/a" || fail "a's first sector changed"
pass "a map copied from another image: named (4), set aside by --repair and rebuilt; the sidecar keeps 512n"

rm "$STORE/.sectorfs/a.map"
mkfifo "$STORE/.sectorfs/a.map"
STEP_TIMEOUT=20
rc=0
timeout 20 "$SECTORFS_IMG" check "$STORE" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || fail "check with a FIFO as a.map exited $rc, want 4 (124: it hung): $(cat "$T/out")"
out_has "$STORE/a: allocation map: a.map: allocation map is not a regular file"
rc=0
timeout 20 "$SECTORFS_IMG" check --repair "$STORE" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "check --repair with a FIFO as a.map exited $rc, want 1 (124: it hung): $(cat "$T/out")"
[ -p "$STORE/.sectorfs/a.map.corrupt" ] || fail "the FIFO was not set aside: $(ls -l "$STORE/.sectorfs")"
img 0 check "$STORE/a"
pass "a FIFO as a map: named (4), never waited on, set aside by --repair (1)"

# a create through a mount cut before its backing file was named: the map
# it made records no data
echo '{ "size": "1M" }' > "$STORE/c.json"
img 0 create -s 1M "$STORE/d"
cp "$STORE/.sectorfs/d.map" "$T/d.map"
rm "$STORE/d" "$STORE/d.json" "$STORE/.sectorfs/d.map"
cp "$T/d.map" "$STORE/.sectorfs/c.map"
img 0 check "$STORE/c"
out_has "$STORE/c: note: a create was interrupted before the backing file was made"
out_has "$STORE/c: clean (declared by its sidecar, not created yet)"
rm "$STORE/c.json" "$STORE/.sectorfs/c.map"
# a backing file gone while its map records data: never made again empty
rm "$STORE/a"
img 4 check "$STORE/a"
out_has "$STORE/a: backing file $STORE/a is missing while its map records 1 block of data"
out_has "(rm $STORE/.sectorfs/a.map)"
img 4 check --repair "$STORE/a"
[ -e "$STORE/.sectorfs/a.map" ] || fail "--repair removed the map of an image whose data is gone"
rm "$STORE/a.json" "$STORE/.sectorfs/a.map" "$STORE/.sectorfs/a.map.stale" "$STORE/.sectorfs/a.map.corrupt"
pass "a create cut before its backing file: not made yet (0); a backing file gone with data: 4, the command named"

# a grow record of an image removed by hand: dropped at the next start
img 0 create -s 1M "$STORE/g"
printf 'grow 1048576 2097152 1048576 1\n' > "$STORE/.sectorfs/g.grow"
rm "$STORE/g" "$STORE/g.json" "$STORE/.sectorfs/g.map"
img 0 check "$STORE"
out_has "$STORE/g: pending: an interrupted grow of g, whose image is gone (no map: removed by hand?): dropped: completed at the next start"
# one whose map cannot be read: the image is kept out; --repair decides by the sidecar
img 0 create -s 1M "$STORE/h"
printf 'grow 1048576 2097152 1048576 1\n%s\n' "$(ident "$STORE/h")" > "$STORE/.sectorfs/h.grow"
truncate -s 2M "$STORE/h"
printf 'garbage' | dd of="$STORE/.sectorfs/h.map" conv=notrunc status=none
img 4 check "$STORE"
out_has "$STORE/h: .sectorfs/h.grow: an interrupted grow of h from 1048576 to 2097152 bytes: its map cannot be read"
out_has "the next start cannot do it and leaves the image out"
img 1 check --repair "$STORE"
out_has "repaired: h: undid an interrupted grow from 1048576 to 2097152 bytes as its sidecar says"
out_has "$STORE/h: repaired: rebuilt the allocation map"
[ "$(stat -c %s "$STORE/h")" -eq $M ] || fail "h: the undone grow left $(stat -c %s "$STORE/h") bytes"
[ ! -e "$STORE/.sectorfs/g.grow" ] && [ ! -e "$STORE/.sectorfs/h.grow" ] || fail "records left: $(ls "$STORE/.sectorfs")"
img 0 check "$STORE"
pass "a grow record of an image gone: pending (0); one with an unreadable map: 4, cleared by --repair (1)"

# a rename cut after its map and backing file moved, then files of the user's
# put under both names: neither finished (s.json is taken) nor rolled back (r
# is taken); its record as older versions wrote it, .sectorfs/rename
# (check-rename-records.sh: those of this version, .sectorfs/FROM.rename)
img 0 create -s 1M "$STORE/r"
printf 'r\0s\0' > "$STORE/.sectorfs/rename"
mv "$STORE/.sectorfs/r.map" "$STORE/.sectorfs/s.map"
mv "$STORE/r" "$STORE/s"
echo "mine" > "$STORE/r"
echo "my notes" > "$STORE/s.json"
img 4 check "$STORE"
out_has "an interrupted rename of r to s can neither be finished nor rolled back: s.json is not the image's"
out_has "mv STORE/s.json STORE/s.json.yours"
img 4 check --repair "$STORE"
[ "$(cat "$STORE/r")" = mine ] && [ "$(cat "$STORE/s.json")" = "my notes" ] || fail "the user's files were changed"
mv "$STORE/s.json" "$T/notes"
img 1 check --repair "$STORE"
out_has "repaired: r: finished an interrupted rename to s"
[ "$(cat "$STORE/r")" = mine ] || fail "the user's r was changed"
[ -e "$STORE/s" ] && [ -e "$STORE/s.json" ] && [ -e "$STORE/.sectorfs/s.map" ] || fail "s: $(ls "$STORE")"
img 0 check "$STORE/s"
pass "a rename whose names were both taken since: 4, the command named; once the file is moved, finished"
