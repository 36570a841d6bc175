#!/bin/bash
# SPDX-License-Identifier: MIT
# bad-sector-ext4.sh - a bad sector under a file of ext4 on a loop device
# (4096-byte sectors): reading the file fails with EIO, rewriting it
# heals the sector, and the list survives a restart of the daemon.
#
# Proves, on a 4kn image, ext4 made over a loop device with 4096-byte
# logical blocks, and a 256 KiB file whose blocks filefrag gives:
#  - with its third block's LBA in user.sectorfs.bad_sectors (and the
#    ext4 mounted again, so nothing is cached), a read of the file fails with
#    "Input/output error", the stats count the media error and list the
#    read, by the loop device's kernel worker;
#  - rewriting the file in place (dd conv=notrunc,fsync) heals it: the
#    list is empty and the file reads back whole after a remount;
#  - a bad sector added then stays across a restart of the daemon
#    (NAME.disk), and still fails the read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_loop
requires_cmd python3 mkfs.ext4 filefrag setfattr getfattr

sidecar d 64M 4kn thin
start_daemon
IMG="$MNT/d"
FS="$T/fs"
mkdir -p "$FS"
on_exit "mountpoint -q $FS && { timeout 20 umount $FS || umount -l $FS; }"
attach_loop "$IMG" 4096
step mkfs.ext4 mkfs.ext4 -q -F "$DEV"
step mount mount "$DEV" "$FS"
dd if=/dev/urandom of="$T/data" bs=64K count=4 status=none
cp "$T/data" "$FS/file" && sync "$FS/file" || fail "cannot write the file"
# the third block's physical block: with 4096-byte blocks on 4096-byte sectors, its LBA
lba=$(filefrag -v -b4096 "$FS/file" | awk '$1 ~ /^0:/ { sub(/\.\..*/, "", $4); print $4 + 2; exit }')
[ -n "$lba" ] || fail "filefrag gave no extent: $(filefrag -v "$FS/file")"
step umount umount "$FS"
set_attr "$IMG" bad_sectors "+$lba"
step "mount again" mount "$DEV" "$FS"
expect_errno "Input/output error" dd if="$FS/file" of=/dev/null status=none
python3 - "$MNT/.stats/d.json" "$lba" <<'PY' || fail "the stats do not show the media error"
import json, sys
d, lba = json.load(open(sys.argv[1])), int(sys.argv[2])
assert d["failures"]["media_errors"] >= 1, d["failures"]
e = d["refused_recent"][0]
assert e["error"] == "EIO" and e["op"] == "read", e
assert e["offset"] <= lba * 4096 < e["offset"] + e["length"], (e, lba)
assert e["pid"] > 0 and e["comm"], e
PY
pass "reading the file over LBA $lba fails with EIO; the stats list the read"

dd if="$T/data" of="$FS/file" bs=64K conv=notrunc,fsync status=none || fail "cannot rewrite the file"
[ -z "$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$IMG")" ] ||
	fail "the rewrite did not heal LBA $lba"
step umount umount "$FS"
step "mount again" mount "$DEV" "$FS"
cmp -s "$FS/file" "$T/data" || fail "the file after the rewrite is not what was written"
pass "rewriting the file heals the sector"

step umount umount "$FS"
detach_loop "$DEV"
set_attr "$IMG" bad_sectors "+$lba"
restart_daemon
v=$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$IMG")
[ "$v" = "$lba-$lba" ] || fail "after a restart the list says '$v', want $lba-$lba"
attach_loop "$IMG" 4096
step "mount after the restart" mount "$DEV" "$FS"
expect_errno "Input/output error" dd if="$FS/file" of=/dev/null status=none
pass "the list survives a restart of the daemon"
step umount umount "$FS"
detach_loop "$DEV"
stop_daemon
