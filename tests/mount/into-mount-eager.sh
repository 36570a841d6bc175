#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-eager.sh - a copy into a new eagerzeroedthick image (-o
# provisioning=eagerzeroedthick) gives an image of the source's size, as
# into a thin one: the room its writes had ahead, which the eager zeroing
# in the background zeroed meanwhile, is given back at the creator's close
# (those blocks hold zeros and were never written); the bytes are the
# source's (a hole its writes sought over is zeroed after the close),
# the image is zeroed to its end and clean.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp python3

SIZE=$(((41 << 20) + 4096))        # ends inside the room ahead of the writes
head -c $SIZE /dev/urandom > "$T/src"
dd if=/dev/zero of="$T/src" bs=1M seek=8 count=4 conv=notrunc status=none
start_daemon -o provisioning=eagerzeroedthick -o block_size=64K
log_mark
# written as a sparse copy does: 8 MiB, a hole of 4 MiB sought over (the close zeroes it), the rest
python3 - "$T/src" "$MNT/e" <<'PY' || fail "the copy into a new eagerzeroedthick image failed"
import os, sys
data = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
for off, end in ((0, 8 << 20), (12 << 20, len(data))):
    while off < end:
        off += os.pwrite(fd, data[off:min(end, off + (1 << 20))], off)
os.close(fd)
PY
size=$(stat_val %s "$MNT/e")
[ "$size" -eq $SIZE ] || fail "e: $size bytes after the copy, the source has $SIZE; log: $(log_new)"
cmp -s "$T/src" "$MNT/e" || fail "e does not hold the source's bytes"
log_new | grep -q "cannot give back the room" && fail "the room ahead was kept: $(log_new)"
for ((i = 0; i < 100; i++)); do
	[ "$(stats_key e allocated_blocks)" = $(((SIZE + 65535) / 65536)) ] && break
	sleep 0.1
done
[ "$(stats_key e allocated_blocks)" = $(((SIZE + 65535) / 65536)) ] ||
	fail "e: $(stats_key e allocated_blocks) of $(((SIZE + 65535) / 65536)) blocks zeroed or written 10 s after the copy"
stop_daemon
"$SECTORFS_IMG" info "$STORE/e" > "$T/info" 2>&1
grep -q "eager zeroing: *done" "$T/info" || fail "e not recorded zeroed: $(cat "$T/info")"
grep -q "\"size\": $SIZE" "$STORE/e.json" || fail "e.json does not say $SIZE: $(cat "$STORE/e.json")"
[ "$(stat_val %s "$STORE/e")" -eq $SIZE ] || fail "the backing file is $(stat_val %s "$STORE/e") bytes"
"$SECTORFS_IMG" check "$STORE/e" > "$T/check" 2>&1 || fail "check: $(cat "$T/check")"
pass "a copy into a new eagerzeroedthick image: the source's size and bytes; room given back; clean"
