#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered-end-durable.sh - a buffered write past the end fails with
# ENOSPC at the write call; one made durable with fsync survives kill -9;
# O_DIRECT I/O of part of a sector still gets EINVAL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-buffered.sh"

buffered_serve

head -c $((2 * K)) /dev/urandom > "$T/blk"
expect_errno "No space left on device" perl -e 'open(F, "+<", $ARGV[0]) or die; sysseek(F, 8*1048576-100, 0); syswrite(F, "y" x 200) == 200 or die "$!\n"' "$MNT/k4"
expect_errno "Invalid argument" dd if="$T/blk" of="$MNT/k4" bs=512 count=1 seek=3 oflag=direct conv=notrunc status=none
perl -MIO::Handle -e 'open(F, "+<", $ARGV[0]) or die; sysseek(F, 5*4096+100, 0); syswrite(F, "durable") == 7 or die; F->sync or die "fsync: $!\n"' "$MNT/k4" ||
	fail "buffered write + fsync"
kill9_daemon
start_daemon
[ "$(dd if="$MNT/k4" bs=1 skip=$((5 * K + 100)) count=7 status=none)" = durable ] ||
	fail "a buffered write made durable with fsync is gone after kill -9"
stop_daemon
pass "buffered: ENOSPC past the end at the write call, durable with fsync; O_DIRECT of part of a sector: EINVAL"
