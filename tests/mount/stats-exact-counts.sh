#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-exact-counts.sh - the counters of SPEC.md "Statistics" count
# exactly the I/O that makes them, seen through a real mount with GNU dd
# O_DIRECT I/O, each on a fresh image:
#  - 100 O_DIRECT 4 KiB writes: writes=100, bytes_written=409600, 100 in the
#    "4K" size bucket and the ">=4K" alignment bucket; a dd conv=fsync adds
#    exactly one flush;
#  - 32 KiB sequential writes over 4 MiB of a thin image with 1 MiB blocks:
#    first_writes=4, overwrites=124, zeroed_bytes=4*(1M-32K), 4 blocks
#    allocated, and the write_first/write_overwrite latency counts match;
#  - misaligned reads and writes on 4kn: EINVAL, misaligned_rejected and
#    the 512/1K/2K alignment buckets count exactly each of them;
#  - partial-physical-sector writes on 512e: rmw_writes counts exactly them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

sidecar w4k 8M 512n thin 1M
sidecar seq 8M 512n thin 1M
sidecar mis 8M 4kn thin 64K
sidecar rmw 8M 512e thin 64K
start_daemon

io_w4k
key_is w4k writes 100
key_is w4k bytes_written 409600
key_is w4k reads 0
sub_is w4k size_histogram 4K 100
sub_is w4k alignment_histogram ">=4K" 100
key_is w4k first_writes 1
key_is w4k overwrites 99
pass "100 O_DIRECT 4 KiB writes: writes=100, bytes_written=409600, 100 in the 4K bucket"
io_w4k_fsync
key_is w4k flushes 1
sub_is w4k flush count 1
key_is w4k writes 101
pass "dd conv=fsync: exactly one flush"

io_seq
key_is seq writes 128
key_is seq first_writes 4
key_is seq overwrites 124
key_is seq zeroed_bytes $((4 * (M - 32 * K)))
key_is seq allocated_blocks 4
key_is seq total_blocks 8
sub_is seq write_first count 4
sub_is seq write_overwrite count 124
sub_is seq size_histogram 32K 128
pass "32 KiB sequential writes over 4 MiB, 1 MiB thin blocks: first_writes=4, overwrites=124, zeroed_bytes=4*(1M-32K)"

io_mis
key_is mis misaligned_rejected 11
sub_is mis alignment_histogram 512 7
sub_is mis alignment_histogram 1K 2
sub_is mis alignment_histogram 2K 2
sub_is mis alignment_histogram ">=4K" 2
key_is mis not_4k_aligned 11
key_is mis writes 1
key_is mis reads 1
key_is mis allocated_blocks 1
pass "misaligned I/O on 4kn: misaligned_rejected=11, alignment buckets 512/1K/2K/>=4K = 7/2/2/2"

io_rmw
key_is rmw writes 8
key_is rmw rmw_writes 6
key_is rmw misaligned_rejected 0
key_is rmw reads 1
pass "partial-physical writes on 512e: rmw_writes=6 of 8 writes"
stop_daemon
