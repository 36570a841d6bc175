#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-parallel-writers.sh - 4 parallel O_DIRECT dd writers on one image
# (racing first writes to the same blocks, plus a region each): the totals
# of every counter are exact and the data reads back as written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"
requires_cmd cmp

sidecar conc 16M 512n thin 1M
start_daemon

io_conc
key_is conc writes $((4 * 128 + 4 * 512))
key_is conc bytes_written $((4 * 4 * M + 4 * 2 * M))
key_is conc first_writes 12
key_is conc overwrites $((4 * 128 + 4 * 512 - 12))
key_is conc zeroed_bytes $((4 * (M - 32 * K) + 8 * (M - 4 * K)))
key_is conc allocated_blocks 12
sub_is conc size_histogram 32K 512
sub_is conc size_histogram 4K 2048
sub_is conc write_first count 12
sub_is conc write_overwrite count $((4 * 128 + 4 * 512 - 12))
truncate -s $((16 * M)) "$T/conc.model"
dd if="$PAT" of="$T/conc.model" conv=notrunc status=none
for i in 0 1 2 3; do
	dd if="$PAT" of="$T/conc.model" bs=$M count=2 seek=$((4 + 2 * i)) conv=notrunc status=none
done
dd if="$MNT/conc" of="$T/conc.read" bs=$M iflag=direct status=none || fail "conc: reading it back failed"
cmp -s "$T/conc.read" "$T/conc.model" || fail "conc: data differs from what the writers wrote"
pass "4 parallel dd writers: exact totals (2560 writes, 12 first writes, zeroed bytes) and data"
stop_daemon
