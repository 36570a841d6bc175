#!/bin/bash
# SPDX-License-Identifier: MIT
# check-rename-records.sh - sectorfs-img check and check --repair read
# each rename's record, .sectorfs/FROM.rename, several at once, and the
# one record of older versions, .sectorfs/rename, beside them; each is
# judged for its own images:
#  - p.rename (nothing moved yet) is pending, and --repair finishes it;
#  - r.rename, whose two names were both taken by files of the user's
#    since, is a problem (4) only the user can settle: check names the
#    command, --repair leaves it and every file of the user's, and
#    finishes it once the file is moved away;
#  - FIFOs as u.rename and as the older record are named, never opened,
#    and removed by --repair; q, which no record names, is clean all along.
# Needs no mount.
. "$(dirname "$0")/lib.sh"

for n in p q r u; do
	img 0 create -s 1M "$STORE/$n"
done
# records as older versions wrote them ("FROM\0TO\0", no identities: the map decides)
printf 'p\0t\0' > "$STORE/.sectorfs/p.rename"
printf 'r\0s\0' > "$STORE/.sectorfs/r.rename"
mv "$STORE/.sectorfs/r.map" "$STORE/.sectorfs/s.map"
mv "$STORE/r" "$STORE/s"
echo "mine" > "$STORE/r"
echo "my notes" > "$STORE/s.json"
mkfifo "$STORE/.sectorfs/u.rename" "$STORE/.sectorfs/rename"

rc=0
timeout 20 "$SECTORFS_IMG" check "$STORE" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || fail "check exited $rc, want 4 (124: it hung on a FIFO): $(cat "$T/out")"
out_has "$STORE/p: pending: an interrupted rename of p to t: finished"
out_has "$STORE/r: .sectorfs/r.rename: an interrupted rename of r to s can neither be finished nor rolled back"
out_has "mv STORE/s.json STORE/s.json.yours"
out_has "$STORE/u: .sectorfs/u.rename: rename record that is not a regular file"
out_has "$STORE/.sectorfs/rename: rename record that is not a regular file"
out_is "$STORE/q: clean (1048576 bytes, thin, 0 of 1 blocks allocated)"
pass "check: four rename records, each named with its own images (4)"

rc=0
timeout 20 "$SECTORFS_IMG" check --repair "$STORE" >"$T/out" 2>&1 || rc=$?
[ $((rc & 4)) -eq 4 ] || fail "check --repair exited $rc, want the problem of r left (4): $(cat "$T/out")"
out_has "repaired: p: finished an interrupted rename to t"
out_has "repaired: removed .sectorfs/u.rename: not a regular file"
out_has "repaired: removed .sectorfs/rename: not a regular file"
out_has "not repaired: .sectorfs/r.rename"
[ "$(cat "$STORE/r")" = mine ] && [ "$(cat "$STORE/s.json")" = "my notes" ] || fail "the user's files were changed"
[ -e "$STORE/t" ] && [ -e "$STORE/t.json" ] && [ -e "$STORE/.sectorfs/t.map" ] && [ ! -e "$STORE/p" ] ||
	fail "p was not moved to t: $(ls "$STORE" "$STORE/.sectorfs")"
for f in p.rename u.rename rename; do
	[ ! -e "$STORE/.sectorfs/$f" ] || fail ".sectorfs/$f left"
done
img 0 check "$STORE/t"
img 0 check "$STORE/u"
img 0 check "$STORE/q"
pass "check --repair: p finished, the FIFOs removed, r and the user's files left as they were"

mv "$STORE/s.json" "$T/notes"
img 1 check --repair "$STORE"
out_has "repaired: r: finished an interrupted rename to s"
[ "$(cat "$STORE/r")" = mine ] || fail "the user's r was changed"
[ ! -e "$STORE/.sectorfs/r.rename" ] || fail "r.rename left"
img 0 check "$STORE/s"
pass "once the user's file is moved away, --repair finishes r to s and leaves r, the user's"
