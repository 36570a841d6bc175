#!/bin/bash
# SPDX-License-Identifier: MIT
# store-integrity.sh - no operation through the mount loses a byte of the
# store's, by hand as a hostile user would try it:
#  - rename onto a file the user put in the store, and onto an image the
#    daemon refused (its data and its sidecar): EEXIST, both files intact;
#    create onto them: EEXIST, and the log says why;
#  - an image named like an old temporary sidecar (NAME.json.tmp.PID) is
#    left alone when NAME's sidecar is rewritten; a name starting with '.'
#    (the daemon's temporary files) cannot be created;
#  - a grow that fails on a full store is all or nothing: disk size,
#    backing file length and reservation, map and sidecar as before, space
#    given back (thin into a full store, zeroedthick needing more room than
#    there is, 4 TiB needing more map than there is), check clean;
#  - a sidecar removed and written again while its image is open: the same
#    values are served by the open instance, other values refused (logged)
#    until the image is closed, then loaded as at mount time.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

# ---- rename and create onto what is not a served image ----
echo "my notes" > "$STORE/notes"
head -c $M /dev/urandom > "$STORE/bad"
printf '{ "size": "1M", "sector": "512x" }\n' > "$STORE/bad.json"
sidecar x 1M 4kn thin
sidecar y 1M 4kn thin
notes_sum=$(sha256sum < "$STORE/notes")
bad_sum=$(sha256sum < "$STORE/bad")
badjson_sum=$(sha256sum < "$STORE/bad.json")
start_daemon
# rename(2) itself (mv guesses at messages from what stat says after a failure)
prename() { perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\n"' "$@"; }
expect_errno "File exists" prename "$MNT/x" "$MNT/notes"
expect_errno "File exists" prename "$MNT/y" "$MNT/bad"
expect_errno "File exists" touch "$MNT/notes"
[ "$(sha256sum < "$STORE/notes")" = "$notes_sum" ] || fail "the user's file was changed"
[ "$(sha256sum < "$STORE/bad")" = "$bad_sum" ] || fail "the refused image's data was changed"
[ "$(sha256sum < "$STORE/bad.json")" = "$badjson_sum" ] || fail "the refused image's sidecar was changed"
[ ! -e "$STORE/notes.json" ] || fail "a sidecar was made for the user's file"
[ -e "$MNT/x" ] && [ -e "$MNT/y" ] || fail "the images that were to be renamed are gone"
grep -q "notes: cannot rename onto it: notes in the store is not a served image" "$T/daemon.log" ||
	fail "the log does not say why the rename was refused: $(cat "$T/daemon.log")"
grep -q "notes: cannot create it" "$T/daemon.log" || fail "the log does not say why create was refused"
pass "rename and create onto a user's file or a refused image: EEXIST, both intact, the log says why"

# ---- names like temporary files ----
sidecar e4k 100M 4kn thin
V="e4k.json.tmp.$DPID"
touch "$MNT/$V" || fail "cannot create $V"
truncate -s 1M "$MNT/$V" || fail "cannot grow $V"
head -c $M /dev/urandom > "$T/v.data"
dd if="$T/v.data" of="$MNT/$V" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "writing $V"
truncate -s 300M "$MNT/e4k" || fail "cannot grow e4k"
cmp -s "$T/v.data" "$MNT/$V" || fail "$V was changed by the rewrite of e4k's sidecar"
grep -q '"size": 314572800' "$STORE/e4k.json" || fail "e4k.json: $(cat "$STORE/e4k.json")"
grep -q '"size": 1048576' "$STORE/$V.json" || fail "$V.json: $(cat "$STORE/$V.json")"
expect_errno "Operation not permitted" touch "$MNT/.tmp.$DPID.1"
ls -A "$STORE" | grep -q '^\.tmp\.' && fail "a temporary file is in the store: $(ls -A "$STORE")"
ls -A "$STORE/.sectorfs" | grep -q '^\.tmp\.' && fail "a temporary file is left: $(ls -A "$STORE/.sectorfs")"
pass "an image named like a temporary sidecar is left alone; '.' names cannot be created"
stop_daemon

# ---- a failed grow is all or nothing ----
mkdir -p "$T/full"
mount -t tmpfs -o size=64M tmpfs "$T/full" || skip "cannot mount a tmpfs"
on_exit "umount -l $T/full"
STORE0=$STORE
STORE=$T/full
sidecar big4 1G 4kn thin
sidecar zt 10M 4kn zeroedthick
start_daemon
dd if=/dev/urandom of="$MNT/big4" bs=4K count=1 oflag=direct conv=notrunc,fsync status=none || fail "write big4"
dd if=/dev/urandom of="$MNT/zt" bs=4K count=1 seek=100 oflag=direct conv=notrunc,fsync status=none || fail "write zt"
big_sum=$(dd if="$MNT/big4" bs=4K count=1 iflag=direct status=none | sha256sum)
bigjson_sum=$(sha256sum < "$STORE/big4.json")
ztjson_sum=$(sha256sum < "$STORE/zt.json")
zt_sum=$(dd if="$MNT/zt" bs=4K count=1 skip=100 iflag=direct status=none | sha256sum)
# a zeroedthick image asking for more room than the store has
free0=$(df -B1 --output=avail "$STORE" | tail -n1)
zt_blocks=$(stat -c %b "$STORE/zt")
expect_errno "No space left on device" truncate -s 100M "$MNT/zt"
free1=$(df -B1 --output=avail "$STORE" | tail -n1)
[ "$free1" -ge "$free0" ] || fail "a failed zeroedthick grow kept $((free0 - free1)) bytes of the store"
[ "$(stat -c %b "$STORE/zt")" -eq "$zt_blocks" ] || fail "zt's reservation changed"
[ "$(stat -c %s "$STORE/zt")" -eq $((10 * M)) ] || fail "zt's backing file is $(stat -c %s "$STORE/zt") bytes"
# then a full store
dd if=/dev/zero of="$STORE/filler" bs=64K status=none 2>/dev/null
expect_errno "No space left on device" truncate -s 2G "$MNT/big4"
expect_errno "No space left on device" truncate -s 4T "$MNT/big4"
sleep 1.1   # attribute cache
[ "$(stat -c %s "$MNT/big4")" -eq $((1024 * M)) ] || fail "big4 is $(stat -c %s "$MNT/big4") bytes after failed grows"
[ "$(stat -c %s "$STORE/big4")" -eq $((1024 * M)) ] || fail "big4's backing file is $(stat -c %s "$STORE/big4") bytes"
[ "$(stat -c %s "$MNT/zt")" -eq $((10 * M)) ] || fail "zt is $(stat -c %s "$MNT/zt") bytes"
[ "$(sha256sum < "$STORE/big4.json")" = "$bigjson_sum" ] || fail "big4.json changed: $(cat "$STORE/big4.json")"
[ "$(sha256sum < "$STORE/zt.json")" = "$ztjson_sum" ] || fail "zt.json changed: $(cat "$STORE/zt.json")"
"$SECTORFS_IMG" info --json "$STORE/big4" | grep -q '"size": 1073741824' || fail "big4's map: $("$SECTORFS_IMG" info --json "$STORE/big4")"
ls -A "$STORE/.sectorfs" | grep -qE '\.grow$|^\.tmp\.' && fail "left in the state directory: $(ls -A "$STORE/.sectorfs")"
[ "$(dd if="$MNT/big4" bs=4K count=1 iflag=direct status=none | sha256sum)" = "$big_sum" ] || fail "big4's data"
[ "$(dd if="$MNT/zt" bs=4K count=1 skip=100 iflag=direct status=none | sha256sum)" = "$zt_sum" ] || fail "zt's data"
rm -f "$STORE/filler"
stop_daemon
"$SECTORFS_IMG" check "$STORE" > "$T/check.out" 2>&1 || fail "check after failed grows: $(cat "$T/check.out")"
start_daemon
[ "$(stat -c %s "$MNT/big4")" -eq $((1024 * M)) ] && [ "$(stat -c %s "$MNT/zt")" -eq $((10 * M)) ] ||
	fail "sizes changed at the next mount"
truncate -s 2G "$MNT/big4" || fail "grow with room again"
stop_daemon
pass "failed grows on a full store: size, backing length, reservation, map, sidecar as before; space given back"
STORE=$STORE0

# ---- a sidecar written again while its image is open ----
rm -f "$STORE"/*.json
sidecar d 1M 4kn thin
start_daemon
head -c 64K /dev/urandom > "$T/d.data"
dd if="$T/d.data" of="$MNT/d" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "write d"
exec 3< "$MNT/d"
mv "$STORE/d.json" "$T/d.json"
ls "$MNT" | grep -qx d && fail "d still listed without its sidecar"
mv "$T/d.json" "$STORE/d.json"
ls "$MNT" | grep -qx d || fail "d not served again with the same sidecar"
grep -q "d: declared again; served by the instance still open" "$T/daemon.log" || fail "no revival in the log"
mv "$STORE/d.json" "$T/d.json"
ls "$MNT" >/dev/null
sidecar d 2M 4kn thin
ls "$MNT" | grep -qx d && fail "d served with other values while still open"
grep -q "d.json: declared again while the image is still open with other values (size 1048576 -> 2097152)" \
	"$T/daemon.log" || fail "the difference is not logged: $(cat "$T/daemon.log")"
dd bs=64K count=1 status=none <&3 | cmp -s - "$T/d.data" || fail "the open file no longer reads its data"
exec 3<&-
sleep 1.1
ls "$MNT" | grep -qx d || fail "d not served after its file was closed"
[ "$(stat -c %s "$MNT/d")" -eq $((2 * M)) ] || fail "d is $(stat -c %s "$MNT/d") bytes, the new sidecar says 2M"
cmp -s -n 65536 "$MNT/d" "$T/d.data" || fail "d's data after it was loaded again"
stop_daemon
pass "a sidecar written again while open: same values served, others refused until closed, then loaded"
