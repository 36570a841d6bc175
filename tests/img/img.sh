#!/bin/bash
# SPDX-License-Identifier: MIT
# img.sh - sectorfs-img, every command through its happy path and its
# errors, with exact exit codes and messages:
#
#  - help, usage errors, bad sizes, bad formats, bad names, missing store;
#  - create: thin / zeroedthick / eagerzeroedthick, named and explicit
#    sector formats; refuses an existing image (any of its three files);
#    leaves nothing behind on failure or Ctrl-C; progress bar only on a tty;
#  - an image made by create mounts and behaves as its sidecar says (size,
#    st_blksize, xattrs, alignment rules, eager space);
#  - --from: a raw file with holes keeps its data and its holes (map);
#  - inflate: thin with data -> eagerzeroedthick, data unchanged (sha256
#    through the mount before and after), map full, sidecar rewritten;
#  - resize grows (sidecar and mount follow), never shrinks;
#  - check: clean, corrupted map, damaged bitmap chunks (salvaged),
#    mismatched sector in the sidecar,
#    truncated backing file, missing map, bad sidecar, with fsck exit codes
#    and --repair;
#  - every changing command refuses while a daemon serves the store, naming
#    the holder; info and map still work.
# The parts that need no mount always run; without FUSE the rest is skipped
# and the test exits 77.
. "$(dirname "$0")/lib.sh"

M=$((1024 * 1024))

# jv KEY: a top-level scalar of the JSON object in $T/out.
jv() {
	sed -n -e "s/^  \"$1\": \"\(.*\)\",\{0,1\}\$/\1/p" -e "s/^  \"$1\": \([^\",]*\),\{0,1\}\$/\1/p" "$T/out" | head -n1
}
# gone NAME: none of the image's files exists.
gone() {
	local f
	for f in "$STORE/$1" "$STORE/$1.json" "$STORE/.sectorfs/$1.map" "$STORE/.sectorfs/$1.map.new"; do
		[ ! -e "$f" ] || fail "$f left behind"
	done
}
# map_is NAME LINES...: 'sectorfs-img map' rows, "offset length allocated" each.
map_is() {
	local name=$1 want got
	shift
	img 0 map "$STORE/$name"
	want=$(printf '%s\n' "Offset Length Allocated" "$@")
	got=$(tr -s ' ' < "$T/out")
	[ "$got" = "$want" ] || fail "map of $name: expected
$want
got
$got"
}
xattr_get() {
	if command -v getfattr >/dev/null 2>&1; then
		getfattr --only-values -n "$2" "$1" 2>/dev/null
	else
		python3 -c 'import os, sys; sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$1" "$2"
	fi
}
disk_sha() { dd if="$MNT/$1" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1; }

# ---- help and usage ----
img 0 --help
out_has "usage: sectorfs-img COMMAND [options] STORE/NAME ..."
for c in create info check resize inflate map; do
	img 0 "$c" --help
	out_has "usage: sectorfs-img $c "
	img 0 help "$c"
	out_has "usage: sectorfs-img $c "
done
img 1
img 1 frobnicate "$STORE/x"
err_is "sectorfs-img: unknown command 'frobnicate'"
img 1 info
err_is "sectorfs-img info: missing STORE/NAME"
img 1 create -s 8M -q "$STORE/x"
err_is "sectorfs-img create: unknown option '-q'"
img 1 map --bogus "$STORE/x"
err_is "sectorfs-img map: unknown option '--bogus'"
img 1 create "$STORE/x"
err_is "sectorfs-img create: missing -s SIZE"
img 1 create -s 8M "$STORE/a" "$STORE/b"
err_is "sectorfs-img create: too many arguments"
img 0 --version
out_has "sectorfs-img "
pass "help and usage errors"

# ---- create: errors, nothing left behind ----
img 1 create -s 8X "$STORE/bad"
err_is "sectorfs-img create: invalid size '8X' for -s: use a number of bytes, optionally followed by K, M, G or T (e.g. 8G)"
img 1 create -s 99999999999T "$STORE/bad"
err_is "sectorfs-img create: size '99999999999T' for -s is too large"
img 1 create -s 1000 -f 4kn "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'size': 1000 is not a multiple of the logical sector size 4096"
img 1 create -s 8M -f 9kn "$STORE/bad"
err_is "sectorfs-img create: unknown sector format '9kn': use 512n, 512e or 4kn, or --logical and --physical"
img 1 create -s 8M -p fat "$STORE/bad"
err_is "sectorfs-img create: unknown provisioning 'fat': use thin, zeroedthick or eagerzeroedthick"
img 1 create -s 8M -b 3K "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'block_size': 3072 is not a power of two"
img 1 create -s 8M -f 4kn -b 1K "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'block_size': 1024 is smaller than the physical sector size 4096"
img 1 create -s 8M --logical 4096 "$STORE/bad"
err_is "sectorfs-img create: --logical and --physical go together"
img 1 create -s 8M --logical 4096 --physical 512 "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'physical_sector_size': 512 is smaller than the logical sector size 4096"
img 1 create -s 8M -f 4kn --logical 4096 --physical 4096 "$STORE/bad"
err_is "sectorfs-img create: -f and --logical/--physical exclude each other"
img 1 create -s 8M "$STORE/bad.json"
err_is "sectorfs-img: $STORE/bad.json: invalid image name 'bad.json': a name must not start with '.', end in '.json' or be longer than 200 characters"
img 1 create -s 8M "$T/nostore/bad"
err_is "sectorfs-img: $T/nostore: cannot open store: No such file or directory"
img 1 create --from "$T/nofile" "$STORE/bad"
err_is "sectorfs-img: $T/nofile: cannot open: No such file or directory"
head -c 10000 /dev/urandom > "$T/small.raw"
img 1 create -s 4K --from "$T/small.raw" "$STORE/bad"
err_is "sectorfs-img: $STORE/bad: size 4096 is smaller than $T/small.raw (10000 bytes)"
# a file that starts like another image format is not taken for raw, unless --raw says so
printf 'QFI\373\0\0\0\3' > "$T/fake.qcow2"
head -c 65536 /dev/zero >> "$T/fake.qcow2"
img 1 create --from "$T/fake.qcow2" "$STORE/bad"
err_is "sectorfs-img: $T/fake.qcow2 is a qcow2 image: convert it with 'qemu-img convert -O raw' first (or give --raw to copy its bytes as they are)"
[ ! -e "$STORE/bad" ] && [ ! -e "$STORE/bad.json" ] || fail "a refused --from left files"
img 0 create --from "$T/fake.qcow2" --raw "$STORE/fakeraw"
rm -f "$STORE/fakeraw" "$STORE/fakeraw.json" "$STORE/.sectorfs/fakeraw.map"
gone bad
pass "create refuses bad arguments and leaves nothing"

# ---- create: the three modes, and what the files say ----
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

# ---- Ctrl-C during eager zeroing removes the half-made image ----
"$SECTORFS_IMG" create -s 1G -b 4K -p eagerzeroedthick --no-zero-offload "$STORE/big" >"$T/out" 2>"$T/err" &
CPID=$!
for ((i = 0; i < 500; i++)); do
	[ -e "$STORE/.sectorfs/big.map" ] && break
	sleep 0.01
done
kill -INT $CPID
rc=0; wait $CPID || rc=$?
[ $rc -eq 130 ] || fail "interrupted create exited $rc, expected 130: $(cat "$T/err")"
err_is "sectorfs-img: create interrupted; $STORE/big removed"
gone big
pass "Ctrl-C during eager zeroing leaves no image"

# ---- the progress bar, on a terminal ----
if command -v script >/dev/null 2>&1; then
	script -qfec "$SECTORFS_IMG create -s 64M -b 64K -p eagerzeroedthick $STORE/tty" /dev/null > "$T/tty" 2>&1 ||
		fail "create on a terminal failed: $(cat "$T/tty")"
	grep -q "zeroing .*100%.*MB/s" "$T/tty" || fail "no progress bar on a terminal: $(cat -v "$T/tty")"
	pass "progress bar with percent and MB/s on a terminal"
else
	echo "# no script(1): progress bar on a terminal not tested"
fi

# ---- --from: data and holes ----
RAW="$T/disk.raw"
truncate -s 10M "$RAW"
head -c $((128 * 1024)) /dev/urandom | dd of="$RAW" bs=64K seek=3 conv=notrunc status=none
head -c 3000 /dev/urandom | dd of="$RAW" bs=1 seek=$((10 * M - 3000)) conv=notrunc status=none
img 0 create --from "$RAW" -b 64K "$STORE/imp"
out_is "created $STORE/imp: 10M (10485760 bytes), 512n (logical 512, physical 512), thin, block size 64K"
map_is imp "0 196608 false" "196608 131072 true" "327680 10092544 false" "10420224 65536 true"
img 0 info --json "$STORE/imp"
[ "$(jv allocated_bytes)" = $((192 * 1024)) ] || fail "imp allocated: $(cat "$T/out")"
img 0 create --from "$T/small.raw" -f 4kn "$STORE/odd"
out_is "created $STORE/odd: 12K (12288 bytes), 4kn (logical 4096, physical 4096), thin, block size 1M"
pass "--from keeps holes unallocated"

# ---- resize ----
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

# ---- check: the damage, its exit codes and --repair ----
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
pass "check: missing map, small sidecar size, bad sidecar, undeclared, declared-only"

# ---- the mount ----
if ! { [ -c /dev/fuse ] && command -v fusermount3 >/dev/null && command -v mountpoint >/dev/null &&
	[ -x "$SECTORFS" ] && dd --version 2>/dev/null | grep -q coreutils &&
	{ command -v getfattr || command -v python3; } >/dev/null; }; then
	skip "no FUSE, GNU dd or getfattr/python3: mount parts not run (the rest passed)"
fi

head -c $((3 * 64 * 1024)) /dev/urandom > "$T/data"
start_daemon
HOLDER="pid $DPID, mounted at $MNT"
for f in thin4k zt ezt imp; do [ -f "$MNT/$f" ] || fail "$f not served"; done
[ "$(stat_val %s "$MNT/thin4k")" -eq $((16 * M)) ] && [ "$(stat_val %o "$MNT/thin4k")" -eq 4096 ] &&
	[ "$(stat_val %o "$MNT/zt")" -eq 4096 ] && [ "$(stat_val %o "$MNT/ezt")" -eq 8192 ] ||
	fail "sizes / st_blksize: $(stat -c '%n %s %o' "$MNT"/*)"
[ "$(xattr_get "$MNT/ezt" user.sectorfs.logical_sector_size)" = 4096 ] &&
	[ "$(xattr_get "$MNT/ezt" user.sectorfs.physical_sector_size)" = 8192 ] &&
	[ "$(xattr_get "$MNT/ezt" user.sectorfs.provisioning)" = eagerzeroedthick ] &&
	[ "$(xattr_get "$MNT/ezt" user.sectorfs.block_size)" = 8192 ] &&
	[ "$(xattr_get "$MNT/zt" user.sectorfs.provisioning)" = zeroedthick ] ||
	fail "xattrs of created images"
[ $(($(stat_val %b "$MNT/ezt") * 512)) -ge $((8 * M)) ] || fail "ezt: space not allocated"
expect_errno "Invalid argument" dd if="$T/data" of="$MNT/thin4k" bs=512 count=1 seek=1 oflag=direct conv=notrunc status=none
dd if="$T/data" of="$MNT/thin4k" bs=64K count=3 seek=2 oflag=direct conv=notrunc status=none ||
	fail "aligned write to thin4k failed"
[ "$(dd if="$MNT/imp" bs=1M iflag=direct status=none | sha256sum)" = "$(sha256sum < "$RAW")" ] ||
	fail "imported image differs from the raw file through the mount"
pass "created images mount as their sidecars say (size, st_blksize, xattrs, alignment)"

# served: changing commands refuse naming the holder, looking ones work
img 1 create -s 8M "$STORE/new"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
gone new
img 1 resize "$STORE/thin4k" 32M
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 1 inflate "$STORE/thin4k"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 8 check --repair "$STORE/thin4k"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 0 check "$STORE/thin4k"
img 0 info "$STORE/thin4k"
out_is "served:         yes, by $HOLDER (allocation as of its last flush)"
img 0 info --json "$STORE/thin4k"
[ "$(jv served)" = true ] && [ "$(jv holder)" = "$HOLDER" ] || fail "info --json while served: $(cat "$T/out")"
img 0 map "$STORE/thin4k"
pass "changes refused while served, naming the holder; info, map, check work"

# inflate: thin with data -> eagerzeroedthick, data unchanged
before=$(disk_sha thin4k)
stop_daemon
map_is thin4k "0 131072 false" "131072 196608 true" "327680 16449536 false"
img 0 inflate "$STORE/thin4k"
out_is "inflated $STORE/thin4k: thin -> eagerzeroedthick, 253 of 256 blocks zeroed now (15.8 MiB)"
map_is thin4k "0 16777216 true"
grep -q '"provisioning": "eagerzeroedthick"' "$STORE/thin4k.json" || fail "sidecar: $(cat "$STORE/thin4k.json")"
img 0 info --json "$STORE/thin4k"
[ "$(jv provisioning)" = eagerzeroedthick ] && [ "$(jv zeroed)" = true ] || fail "after inflate: $(cat "$T/out")"
img 0 inflate "$STORE/thin4k"
out_is "$STORE/thin4k: already eagerzeroedthick"
img 0 check "$STORE/thin4k"
start_daemon
[ "$(disk_sha thin4k)" = "$before" ] || fail "inflate changed the data"
[ "$(xattr_get "$MNT/thin4k" user.sectorfs.provisioning)" = eagerzeroedthick ] || fail "xattr after inflate"
stop_daemon
pass "inflate: data unchanged through the mount, map full, eagerzeroedthick"

# resize shows in the mount
img 0 resize "$STORE/zt" 32M
start_daemon
[ "$(stat_val %s "$MNT/zt")" -eq $((32 * M)) ] || fail "resized zt is $(stat_val %s "$MNT/zt") bytes"
stop_daemon
pass "resize shows in the mount"

# a changing command touches only the image it names
printf '{ "size": "8M", "sector": "4kn", "provisioning": "eagerzeroedthick" }\n' > "$STORE/bystander.json"
img 0 resize "$STORE/zt" 40M
[ ! -e "$STORE/bystander" ] && [ ! -e "$STORE/.sectorfs/bystander.map" ] ||
	fail "resize of zt created another image's files"
rm -f "$STORE/bystander.json"
pass "resize leaves the store's other images alone"
