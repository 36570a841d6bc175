#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace-fallocate.sh - fallocate through the mount: punch hole frees
# whole thin blocks (stats and st_blocks drop) and reads zeros, a discard
# of partial blocks frees none and keeps the rest of them, zero range reads
# zeros and leaves the rest alone, mode 0 allocates blocks that read zeros,
# a misaligned discard is EINVAL and changes nothing; data and allocation
# survive unmount + remount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-namespace.sh"
requires_fuse

start_daemon "${OPTS[@]}"
: > "$MNT/disk" || fail "creating $MNT/disk failed"
truncate -s 4M "$MNT/disk" || fail "truncate -s 4M failed"
write_random "$MNT/disk" 0 $M

alloc0=$(stats_key disk allocated_blocks)
blocks0=$(stat -c %b "$MNT/disk")
expect_eq "$alloc0" 16 "allocated_blocks after writing 1M of 64K blocks"
fallocate -p -o $BS -l $((2 * BS)) "$MNT/disk" || fail "fallocate -p (discard of 2 blocks) failed"
alloc1=$(stats_key disk allocated_blocks)
blocks1=$(stat -c %b "$MNT/disk")
expect_eq "$alloc1" $((alloc0 - 2)) "allocated_blocks after discarding 2 whole blocks"
[ "$blocks1" -lt "$blocks0" ] || fail "st_blocks did not drop after the discard ($blocks0 -> $blocks1)"
[ "$(stats_key disk discards)" -ge 1 ] || fail "stats discards not counted"
expect_zeros "$MNT/disk" $BS $((2 * BS)) "discarded range"
pass "fallocate -p frees whole thin blocks (allocated_blocks $alloc0 -> $alloc1, st_blocks $blocks0 -> $blocks1) and reads zeros"

head_before=$(range_sum "$MNT/disk" 0 $BS)
tail_before=$(range_sum "$MNT/disk" $((4 * BS)) $((M - 4 * BS)))
fallocate -z -o $((3 * BS + 8 * K)) -l $((16 * K)) "$MNT/disk" || fail "fallocate -z failed"
expect_zeros "$MNT/disk" $((3 * BS + 8 * K)) $((16 * K)) "zero range"
[ "$(range_sum "$MNT/disk" $((3 * BS)) $((8 * K)))" != "$(zero_sum $((8 * K)))" ] ||
	fail "fallocate -z zeroed data before its range"
expect_eq "$(range_sum "$MNT/disk" 0 $BS)" "$head_before" "data before the zeroed block"
expect_eq "$(range_sum "$MNT/disk" $((4 * BS)) $((M - 4 * BS)))" "$tail_before" "data after the zeroed block"
[ "$(stats_key disk write_zeroes)" -ge 1 ] || fail "stats write_zeroes not counted"
pass "fallocate -z makes its range read zeros and leaves the rest alone"

alloc2=$(stats_key disk allocated_blocks)
head_before=$(range_sum "$MNT/disk" $((5 * BS)) $((BS / 2)))
tail_before=$(range_sum "$MNT/disk" $((6 * BS + BS / 2)) $((BS / 2)))
fallocate -p -o $((5 * BS + BS / 2)) -l $BS "$MNT/disk" || fail "fallocate -p over two half blocks failed"
expect_eq "$(stats_key disk allocated_blocks)" "$alloc2" "allocated_blocks after discarding no whole block"
expect_zeros "$MNT/disk" $((5 * BS + BS / 2)) $BS "discard of two half blocks"
expect_eq "$(range_sum "$MNT/disk" $((5 * BS)) $((BS / 2)))" "$head_before" "data before a partial discard"
expect_eq "$(range_sum "$MNT/disk" $((6 * BS + BS / 2)) $((BS / 2)))" "$tail_before" "data after a partial discard"
pass "a discard of partial blocks frees none and reads zeros, the rest of those blocks intact"

fallocate -o $((2 * M)) -l $((2 * BS)) "$MNT/disk" || fail "fallocate (mode 0) failed"
alloc3=$(stats_key disk allocated_blocks)
expect_eq "$alloc3" $((alloc2 + 2)) "allocated_blocks after allocating 2 blocks"
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "size after fallocate mode 0 inside the disk"
expect_zeros "$MNT/disk" $((2 * M)) $((2 * BS)) "allocated range"
pass "fallocate (mode 0) allocates blocks (allocated_blocks $alloc2 -> $alloc3) that read zeros"

expect_errno "Invalid argument" fallocate -p -o 100 -l $SS "$MNT/disk"
expect_errno "Invalid argument" fallocate -p -o $SS -l 100 "$MNT/disk"
expect_eq "$(stats_key disk allocated_blocks)" "$alloc3" "allocated_blocks after refused discards"
pass "misaligned discard fails with EINVAL and changes nothing"
disk_sum=$(range_sum "$MNT/disk" 0 $((4 * M)))
disk_alloc=$alloc3

stop_daemon
start_daemon "${OPTS[@]}"
expect_eq "$(range_sum "$MNT/disk" 0 $((4 * M)))" "$disk_sum" "disk data after remount"
expect_eq "$(stats_key disk allocated_blocks)" "$disk_alloc" "disk allocated_blocks after remount"
expect_zeros "$MNT/disk" $BS $((2 * BS)) "discarded range after remount"
expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.block_size "$MNT/disk" 2>/dev/null || echo $BS)" $BS "block_size after remount"
pass "data and allocation survive unmount + remount"
stop_daemon
