#!/bin/bash
# SPDX-License-Identifier: MIT
# img-mount.sh - images made by sectorfs-img create mount as their
# sidecars say: size, st_blksize, the user.sectorfs.* xattrs, the space of
# an eagerzeroedthick image allocated, the alignment rules of a 4kn disk;
# an image imported with --from reads through the mount as the raw file.
. "$(dirname "$0")/lib.sh"
requires_mount

img 0 create -s 16M -f 4kn -b 64K "$STORE/thin4k"
img 0 create -s 16M -f 512e -p zeroedthick "$STORE/zt"
img 0 create -s 8M --logical 4096 --physical 8192 -b 8K -p eagerzeroedthick --no-zero-offload "$STORE/ezt"
make_raw
img 0 create --from "$RAW" -b 64K "$STORE/imp"

head -c $((3 * 64 * 1024)) /dev/urandom > "$T/data"
start_daemon
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
stop_daemon
