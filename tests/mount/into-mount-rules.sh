#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-rules.sh - an image made through the mount keeps the disk's
# rules: a write that is not whole sectors (cp of a 1000-byte file) is
# refused with EINVAL and leaves an empty image; a write past the end of
# a closed image gets ENOSPC; neither moves another image's counters.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp
M=$((1024 * 1024))

start_daemon -o sector=4kn,provisioning=zeroedthick,block_size=256K

head -c $((5 * M)) /dev/urandom > "$T/src"
truncate -s $((7 * M)) "$T/src"
cp "$T/src" "$MNT/cp" || fail "cp into the mount failed"
head -c 1000 /dev/urandom > "$T/odd"
mis0=$(stats_key cp misaligned_rejected)
expect_errno "Invalid argument" cp "$T/odd" "$MNT/odd"
[ "$(stat -c %s "$MNT/odd")" -eq 0 ] || fail "odd: $(stat -c %s "$MNT/odd") bytes"
expect_errno "No space left on device" dd if="$T/src" of="$MNT/cp" bs=4096 count=1 seek=$((7 * 256)) \
	oflag=direct conv=notrunc status=none
[ "$(stats_key cp misaligned_rejected)" = "$mis0" ] || fail "counters of another image moved"
pass "a write of part of a sector is refused (EINVAL); past the end of a closed image, ENOSPC"
stop_daemon
