#!/bin/bash
# SPDX-License-Identifier: MIT
# grow-full-store.sh - growing an image on a full store must fail cleanly
# and leave the image servable (a regression test).
#
# sfs_map_grow() (core/map/map.c) extends the map file with the new bitmap
# page (written as encoded empty chunks, which takes its space), fdatasyncs,
# and only then rewrites the header with the new block count.  On a full
# store that write fails with ENOSPC; grow returns the error (truncate(1)
# says "No space left on device").  It used to leave the map file longer
# than its header said, and the next mount's sfs_map_open() refused it
# ("allocation map is 12288 bytes, its header needs 8192 (trailing data)"):
# the image was not served.  Now a failed grow truncates the map back, and
# an open drops the empty chunks or zero sectors an interrupted grow left.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd

mount -t tmpfs -o size=1M tmpfs "$STORE" || skip "cannot mount a tmpfs"
on_exit "umount -l $STORE"   # lazy: the daemon may still hold it
# 4 KiB blocks: one bitmap page covers 126 MiB, so a grow to 200 MiB needs a second page.
printf '{ "size": "1M", "sector": "4kn", "provisioning": "thin", "block_size": "4K" }\n' > "$STORE/img.json"
start_daemon
dd if=/dev/urandom of="$MNT/img" bs=4K count=1 oflag=direct conv=notrunc,fsync status=none ||
	fail "first write failed"
dd if=/dev/zero of="$STORE/filler" bs=4K status=none 2>/dev/null   # fill the store
expect_errno "No space left on device" truncate -s 200M "$MNT/img"
stop_daemon
rm -f "$STORE/filler"
ls -l "$STORE/.sectorfs/img.map"
start_daemon
if [ ! -e "$MNT/img" ]; then
	grep -F "img.map" "$T/daemon.log"
	fail "the image is not served after a failed grow on a full store"
fi
stop_daemon
pass "image served again after a failed grow on a full store"
