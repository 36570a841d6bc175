#!/bin/bash
# SPDX-License-Identifier: MIT
# img-inflate.sh - sectorfs-img inflate turns a thin image with data into
# an eagerzeroedthick one: every block not written is zeroed, the map is
# full, the sidecar rewritten; the data reads the same through the mount
# before and after; a second inflate says it is already done.
. "$(dirname "$0")/lib.sh"
requires_mount

img 0 create -s 16M -f 4kn -b 64K "$STORE/thin4k"
head -c $((3 * 64 * 1024)) /dev/urandom > "$T/data"
start_daemon
dd if="$T/data" of="$MNT/thin4k" bs=64K count=3 seek=2 oflag=direct conv=notrunc status=none ||
	fail "aligned write to thin4k failed"
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
