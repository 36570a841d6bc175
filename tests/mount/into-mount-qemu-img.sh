#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-qemu-img.sh - qemu-img into the mount: convert into a new
# name and (without -n) into a declared image that holds nothing, create
# twice; sizes and bytes as the source's, the sidecar says the size; a
# disk holding data is not shrunk (qemu-img create over it fails).
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp qemu-img qemu-io
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

start_daemon -o sector=4kn,provisioning=zeroedthick,block_size=256K

head -c $((5 * M)) /dev/urandom > "$T/src"
qemu-img create -q -f qcow2 "$T/src.qcow2" 8M
qemu-io -f qcow2 -c "write -P 0x5a 1M 1M" "$T/src.qcow2" >/dev/null
qemu-img convert -O raw "$T/src.qcow2" "$MNT/q" || fail "qemu-img convert into a new name"
qemu-img compare -q -f qcow2 -F raw -T none "$T/src.qcow2" "$MNT/q" || fail "compare q"
printf '{ "size": "16M", "sector": "4kn" }\n' > "$STORE/d4.json"
qemu-img convert -O raw "$T/src.qcow2" "$MNT/d4" || fail "qemu-img convert into a declared image (no -n)"
qemu-img compare -q -f qcow2 -F raw -T none "$T/src.qcow2" "$MNT/d4" || fail "compare d4"
grep -q "\"size\": $((8 * M))," "$STORE/d4.json" || fail "d4.json: $(cat "$STORE/d4.json")"
qemu-img create -q -f raw "$MNT/n1" 1G || fail "qemu-img create"
qemu-img create -q -f raw "$MNT/n1" 2G || fail "qemu-img create again over an image holding nothing"
sleep 1.1
[ "$(stat -c %s "$MNT/n1")" -eq $((2048 * M)) ] || fail "n1 is $(stat -c %s "$MNT/n1") bytes"
dd if="$T/src" of="$MNT/n1" bs=1M count=1 seek=10 oflag=direct conv=notrunc status=none
expect_errno "Could not resize file" qemu-img create -q -f raw "$MNT/n1" 1G
sleep 1.1
[ "$(stat -c %s "$MNT/n1")" -eq $((2048 * M)) ] || fail "a disk holding data shrank"
pass "qemu-img convert (new and declared, no -n) and create twice; a disk holding data is not shrunk"
stop_daemon
"$SECTORFS_IMG" check "$STORE" > "$T/check.out" 2>&1 || fail "check after the copies: $(cat "$T/check.out")"
