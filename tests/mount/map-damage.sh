#!/bin/bash
# SPDX-License-Identifier: MIT
# map-damage.sh - a damaged allocation map is refused, diagnosed and
# repaired without losing data; a version-1 map is converted once.
#
# Proves: a thin image with 4 blocks written through the mount, its map
# rewritten by hand as version 1 (the layout every store had before the
# bitmap checksums): 'sectorfs-img check' and 'info' read it without
# changing the file; the next mount converts it to version 2, logs that
# once, naming the map, and serves the 4 blocks intact; the mount after
# converts nothing.  Then random bytes over the map's bitmap page: the
# next mount does not serve the image (another one still is) and logs a
# line naming its map and the bitmap damage; 'sectorfs-img check' exits 4
# naming the map and the number of bad chunks; 'check --repair' exits 1,
# saying what it did; then the image is served again, its 4 written blocks
# read back intact and a block never written reads zeros (the salvage
# marks every block of a damaged chunk allocated, and the sparse backing
# file holds zeros there).
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd sha256sum python3 od

requires_built "$SECTORFS_IMG"
MAP="$STORE/.sectorfs/thin.map"
BS=65536
BLOCKS="0 5 700 1023"

# blk_sum FILE N: sha256 of block N of FILE.
blk_sum() { dd if="$1" bs=$BS skip="$2" count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1; }
map_version() { od -An -tu4 -j8 -N4 "$MAP" | tr -d ' '; }
# img RC ARGS...: sectorfs-img ARGS must exit RC; stdout in $T/out.
img() {
	local want=$1 rc=0
	shift
	"$SECTORFS_IMG" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "sectorfs-img $* exited $rc, expected $want: $(cat "$T/out" "$T/err")"
}
out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1'; got: $(cat "$T/out")"; }
expect_data() {
	local b
	for b in $BLOCKS; do
		expect_eq "$(blk_sum "$MNT/thin" "$b")" "$(blk_sum "$T/src.$b" 0)" "$1: block $b"
	done
	expect_eq "$(blk_sum "$MNT/thin" 3)" "$(head -c $BS /dev/zero | sha256sum | cut -d' ' -f1)" \
		"$1: block 3, never written"
}

# 64 MiB of 64 KiB blocks: 1024 blocks, one bitmap page.
sidecar thin 64M 4kn thin 64K
sidecar other 1M 512n thin
start_daemon
for b in $BLOCKS; do
	dd if=/dev/urandom of="$T/src.$b" bs=$BS count=1 status=none
	dd if="$T/src.$b" of="$MNT/thin" bs=$BS seek="$b" oflag=direct conv=notrunc,fsync status=none ||
		fail "write block $b"
done
expect_eq "$(stats_key thin allocated_blocks)" 4 "allocated blocks after 4 writes"
stop_daemon
expect_eq "$(map_version)" 2 "version of a new map"

# ---- version 1 ----
python3 - "$MAP" <<'PY' || fail "cannot rewrite the map as version 1"
import struct, sys
def crc32c(data):
    crc = 0xffffffff
    for x in data:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff
f = open(sys.argv[1], "rb").read()
hdr, body = bytearray(f[:4096]), f[4096:]
nblocks = struct.unpack_from("<Q", hdr, 40)[0]
bits = b"".join(body[c * 512:c * 512 + 504] for c in range(len(body) // 512))
pages = (nblocks + 32767) // 32768
bits = (bits + bytes(pages * 4096))[:pages * 4096]
struct.pack_into("<I", hdr, 8, 1)
struct.pack_into("<I", hdr, 56, crc32c(hdr[:56]))
open(sys.argv[1], "wb").write(bytes(hdr) + bits)
PY
expect_eq "$(map_version)" 1 "version after the rewrite"
cp "$MAP" "$T/v1.map"
img 0 check "$STORE/thin"
out_has "$STORE/thin: clean (67108864 bytes, thin, 4 of 1024 blocks allocated)"
img 0 info "$STORE/thin"
cmp -s "$MAP" "$T/v1.map" || fail "check or info changed a version-1 map"
log_mark
start_daemon
[ "$(log_new | grep -cF "thin.map: converted the allocation map from version 1 to version 2")" -eq 1 ] ||
	fail "no single log line about the conversion: $(log_new)"
expect_eq "$(stats_key thin allocated_blocks)" 4 "allocated blocks after the conversion"
expect_data "after the conversion"
stop_daemon
expect_eq "$(map_version)" 2 "version after the mount"
log_mark
start_daemon
! log_new | grep -qF "converted" || fail "converted again: $(log_new)"
stop_daemon
pass "a version-1 map reads unchanged by check and info, is converted once by the mount, data intact"

# ---- damage ----
dd if=/dev/urandom of="$MAP" bs=4096 seek=1 count=1 conv=notrunc status=none
log_mark
start_daemon
[ -e "$MNT/other" ] || fail "the other image is not served"
[ ! -e "$MNT/thin" ] || fail "an image with a damaged map is served"
ls "$MNT" | grep -qx thin && fail "an image with a damaged map is listed"
log_new | grep -F "thin.map" | grep -qF "bitmap checksum mismatch in 8 chunks (first at byte 4096, blocks 0-1023)" ||
	fail "the log does not name the damaged map: $(log_new)"
stop_daemon
pass "an image whose map bitmap is overwritten with random bytes is refused, the log naming the map"

img 4 check "$STORE/thin"
out_has "$STORE/thin: allocation map: thin.map: bitmap checksum mismatch in 8 chunks (first at byte 4096, blocks 0-1023)"
img 1 check --repair "$STORE/thin"
out_has "$STORE/thin: repaired: marked the 1024 blocks of 8 damaged bitmap chunks allocated: nothing written is lost; those blocks now read what the backing file holds"
img 0 check "$STORE/thin"
out_has "$STORE/thin: clean (67108864 bytes, thin, 1024 of 1024 blocks allocated)"
start_daemon
[ -e "$MNT/thin" ] || fail "the repaired image is not served"
expect_data "after the repair"
expect_eq "$(stats_key thin allocated_blocks)" 1024 "allocated blocks after the salvage"
stop_daemon
pass "check finds the damage (4), --repair salvages it (1), the 4 written blocks read back intact"
