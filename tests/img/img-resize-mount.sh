#!/bin/bash
# SPDX-License-Identifier: MIT
# img-resize-mount.sh - an image grown by sectorfs-img resize shows its
# new size in the mount; a resize touches only the image it names (an
# image declared beside it is not created).
. "$(dirname "$0")/lib.sh"
requires_mount

img 0 create -s 16M -f 512e -p zeroedthick "$STORE/zt"

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
