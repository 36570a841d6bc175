#!/bin/bash
# SPDX-License-Identifier: MIT
# map-v1-converted.sh - a map of version 1 (the layout every store had
# before the bitmap checksums), made by rewriting a thin image's map by
# hand: 'sectorfs-img check' and 'info' read it without changing the
# file; the next mount converts it to version 2, logs that once, naming
# the map, and serves the 4 written blocks intact; the mount after
# converts nothing.
. "$(dirname "$0")/../img/lib.sh"
. "$(dirname "$0")/lib-map.sh"
requires_fuse
requires_cmd sha256sum python3 od

map_setup

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
! log_new | grep -qF "converted the allocation map" || fail "converted again: $(log_new)"
stop_daemon
pass "a version-1 map reads unchanged by check and info, is converted once by the mount, data intact"
