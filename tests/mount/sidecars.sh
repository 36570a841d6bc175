#!/bin/bash
# SPDX-License-Identifier: MIT
# sidecars.sh - what the daemon makes of the sidecars it finds in a store.
#
# Proves: with good sidecars beside bad ones (invalid JSON, an unknown key,
# a size not a multiple of the sector, physical < logical, a symlink, a
# FIFO, a 1 MiB file) the daemon starts, serves exactly the good images and
# logs one line per bad sidecar naming the file, the key (where there is
# one) and the reason, once, however often the names are looked up; it
# creates no image for a bad sidecar; a sidecar without its backing file
# gets one of the right size (thin: sparse; zeroedthick and
# eagerzeroedthick: fully allocated); an explicit logical/physical pair is
# honoured; a raw file with a sidecar and no map is imported with its data
# (holes included) intact; editing an image's sector format afterwards gets
# that image refused with a clear message, the recorded geometry and the
# data untouched, the other images still served, and the image comes back
# when the sidecar is put right.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd sha256sum du

M=$((1024 * 1024))

# sum FILE OFF LEN: sha256 of LEN bytes at OFF (64 KiB reads).
sum() { dd if="$1" bs=64K skip=$(($2 / 65536)) count=$(($3 / 65536)) status=none | sha256sum | cut -d' ' -f1; }
zsum() { head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1; }


# expect_one_line FILE KEY REASON_RE: exactly one new log line names FILE;
# it must also name KEY (unless empty) and match REASON_RE.
expect_one_line() {
	local lines n
	lines=$(log_new | grep -F -- "$1")
	n=$(printf '%s' "$lines" | grep -c .)
	[ "$n" -eq 1 ] || fail "$1: expected one log line, got $n: $lines"
	[ -z "$2" ] || printf '%s' "$lines" | grep -qF -- "$2" || fail "$1: log line does not name key $2: $lines"
	printf '%s' "$lines" | grep -qiE -- "$3" || fail "$1: log line does not give the reason ($3): $lines"
}

GOOD="gexplicit gezt gimport gthin gzt"

# ---- the store ----
sidecar gthin 8M 512n thin
sidecar gzt 8M 4kn zeroedthick 64K
sidecar gezt 8M 512e eagerzeroedthick 64K
printf '{ "size": "8M", "logical_sector_size": 2048, "physical_sector_size": 8192, "block_size": "64K" }\n' \
	> "$STORE/gexplicit.json"
# A raw file made elsewhere: data, a hole, data; 3 MiB in a 4 MiB disk.
dd if=/dev/urandom of="$STORE/gimport" bs=1M count=1 status=none
dd if=/dev/urandom of="$STORE/gimport" bs=1M seek=2 count=1 conv=notrunc status=none
cp --sparse=always "$STORE/gimport" "$T/gimport.orig"
sidecar gimport 4M 512n thin 64K

printf '{ "size": "1M", \n' > "$STORE/badjson.json"
printf '{ "size": "1M", "colour": "red" }\n' > "$STORE/badkey.json"
printf '{ "size": 1000, "sector": "4kn" }\n' > "$STORE/badsize.json"
printf '{ "size": "1M", "logical_sector_size": 4096, "physical_sector_size": 512 }\n' > "$STORE/badphys.json"
printf '{ "size": "1M", "sector": "512n", "provisioning": "thin" }\n' > "$T/elsewhere.json"
ln -s "$T/elsewhere.json" "$STORE/badlink.json"
mkfifo "$STORE/badfifo.json"
# valid JSON, only too big
{ printf '{ "size": "1M" }'; head -c $M /dev/zero | tr '\0' ' '; echo; } > "$STORE/badbig.json"
BAD="badbig badfifo badjson badkey badlink badphys badsize"

log_mark
start_daemon

# ---- served: exactly the good ones ----
expect_eq "$(ls "$MNT" | tr '\n' ' ')" "$GOOD " "images served"
for n in $BAD; do
	[ ! -e "$MNT/$n" ] || fail "bad sidecar $n.json served an image"
	[ ! -e "$STORE/$n" ] || fail "bad sidecar $n.json got a backing file"
	[ ! -e "$STORE/.sectorfs/$n.map" ] || fail "bad sidecar $n.json got a map"
done
pass "daemon started; serves exactly: $GOOD"

# look the bad names up again: still one line each
ls "$MNT" >/dev/null; ls -l "$MNT" >/dev/null
for n in $BAD; do stat "$MNT/$n" >/dev/null 2>&1 && fail "$n visible"; done
expect_one_line badjson.json "" "JSON"
expect_one_line badkey.json "colour" "unknown"
expect_one_line badsize.json "size" "multiple"
expect_one_line badphys.json "physical_sector_size" "smaller|less|<"
expect_one_line badlink.json "" "symbolic link|symlink"
expect_one_line badfifo.json "" "regular|fifo"
expect_one_line badbig.json "" "large|big|KiB|MiB"
log_new | grep -iE 'error|warn' | grep -E "\b(${GOOD// /|})\b" && fail "errors or warnings about good sidecars"
pass "one log line per bad sidecar, naming file, key and reason:"
log_new | grep -F -f <(printf '%s.json\n' $BAD) | sed 's/^/#   /'

# ---- declared images were created to their mode ----
for n in gthin gzt gezt gexplicit; do
	expect_eq "$(stat -c %s "$STORE/$n")" $((8 * M)) "size of the backing file made for $n"
	expect_eq "$(stat -c %s "$MNT/$n")" $((8 * M)) "size of $n in the mount"
	expect_eq "$(sum "$MNT/$n" 0 $((8 * M)))" "$(zsum $((8 * M)))" "contents of new image $n"
done
kb=$(du -k "$STORE/gthin" | cut -f1)
[ "$kb" -le 64 ] || fail "thin backing file not sparse: du says $kb KiB"
pass "thin: backing file created sparse (du ${kb} KiB), reads zeros"
for n in gzt gezt; do
	b=$(stat -c %b "$STORE/$n")
	[ $((b * 512)) -ge $((8 * M)) ] || fail "$n backing file not fully allocated: $b blocks of 512"
done
pass "zeroedthick and eagerzeroedthick: backing files fully allocated (st_blocks >= size)"
expect_eq "$(stat -c %o "$MNT/gexplicit")" 8192 "st_blksize of logical 2048 / physical 8192"
expect_eq "$(stat -c %o "$MNT/gezt")" 4096 "st_blksize of 512e"
expect_eq "$(stat -c %o "$MNT/gzt")" 4096 "st_blksize of 4kn"
expect_eq "$(stat -c %o "$MNT/gthin")" 512 "st_blksize of 512n"
if command -v getfattr >/dev/null 2>&1; then
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/gexplicit")" 2048 \
		"logical sector of gexplicit"
fi
pass "sector formats as declared (explicit 2048/8192 pair included)"

# ---- import ----
[ -f "$STORE/.sectorfs/gimport.map" ] || fail "no map made for the imported image"
expect_eq "$(stat -c %s "$MNT/gimport")" $((4 * M)) "size of the imported image"
expect_eq "$(sum "$MNT/gimport" 0 $((3 * M)))" "$(sum "$T/gimport.orig" 0 $((3 * M)))" "imported data"
expect_eq "$(sum "$MNT/gimport" $M $M)" "$(zsum $M)" "imported hole"
expect_eq "$(sum "$MNT/gimport" $((3 * M)) $M)" "$(zsum $M)" "imported image past the raw file's end"
pass "raw file with a sidecar and no map: imported, data and hole intact, grown to the sidecar's size"

# ---- sector format edited after creation ----
dd if=/dev/urandom of="$MNT/gthin" bs=64K count=16 conv=notrunc status=none || fail "writing gthin failed"
thin_sum=$(sum "$MNT/gthin" 0 $M)
import_sum=$(sum "$MNT/gimport" 0 $((4 * M)))
stop_daemon
backing_sum=$(sum "$STORE/gthin" 0 $((8 * M)))
sidecar gthin 8M 4kn thin
edited=$(cat "$STORE/gthin.json")
log_mark
start_daemon
[ ! -e "$MNT/gthin" ] || fail "gthin served after its sector format was edited to 4kn"
expect_eq "$(ls "$MNT" | tr '\n' ' ')" "gexplicit gezt gimport gzt " "images served after the edit"
expect_one_line gthin.json "sector" "512|never|recorded|changes"
expect_eq "$(sum "$MNT/gimport" 0 $((4 * M)))" "$import_sum" "other image's data while gthin is refused"
expect_eq "$(sum "$STORE/gthin" 0 $((8 * M)))" "$backing_sum" "gthin backing file while refused"
expect_eq "$(cat "$STORE/gthin.json")" "$edited" "the user's edited sidecar"
[ -f "$STORE/.sectorfs/gthin.map" ] || fail "gthin's map went away"
pass "sidecar edited to another sector size: image refused ($(log_new | grep -F gthin.json)), others served, nothing touched"

sidecar gthin 8M 512n thin
[ -f "$MNT/gthin" ] || fail "gthin not served again once its sidecar is put right"
expect_eq "$(stat -c %o "$MNT/gthin")" 512 "gthin sector after the sidecar is put right"
expect_eq "$(sum "$MNT/gthin" 0 $M)" "$thin_sum" "gthin data after the sidecar is put right"
pass "sidecar put right: image served again with its recorded geometry and data"
stop_daemon
