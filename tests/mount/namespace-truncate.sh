#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace-truncate.sh - truncate grows an image (to a multiple of the
# logical sector, else EINVAL), never shrinks, rewrites the sidecar's size
# and keeps the data, the grown part reads zeros (also when the old size
# ends inside an allocated block); the daemon logs the real cause of each
# refused truncate (a shrink, a size off the sector, growing or shrinking,
# a size past the maximum, 2^30 blocks: EFBIG); the size survives unmount
# + remount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-namespace.sh"
requires_fuse

start_daemon "${OPTS[@]}"
: > "$MNT/disk" || fail "creating $MNT/disk failed"
sc="$STORE/disk.json"

# ---- truncate grows ----
truncate -s 1M "$MNT/disk" || fail "truncate -s 1M failed"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after truncate -s 1M"
expect_eq "$(json_num "$sc" size)" $M "sidecar size after truncate -s 1M"
write_random "$MNT/disk" 0 $M
before=$(range_sum "$MNT/disk" 0 $M)
pass "truncate -s 1M grows a new image and its sidecar"

log_mark
expect_errno "Invalid argument" truncate -s $((2 * M + 512)) "$MNT/disk"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a non-multiple grow"
logged_since "disk: size $((2 * M + 512)) is not a multiple of the logical sector size 4096" "a non-multiple grow"
pass "growing to a size that is not a multiple of 4096 fails with EINVAL, and the log says why"

# 5 EiB: a multiple of the sector, past the maximum of 64K blocks (2^30 of them, 64 TiB)
log_mark
expect_errno "File too large" truncate -s $((5 << 60)) "$MNT/disk"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a grow past the maximum"
logged_since "disk: size $((5 << 60)) is larger than the maximum 64 TiB for a block size of 64 KiB" "a grow past the maximum"
pass "growing past 64 TiB with 64K blocks fails with EFBIG, and the log says the maximum, not the sector"

log_mark
expect_errno "Invalid argument" truncate -s 512K "$MNT/disk"
logged_since "disk: refusing to shrink from $M to $((512 * K)) bytes (a disk that holds data only grows)" \
	"a shrink to 512K"
log_mark
expect_errno "Invalid argument" truncate -s $((512 * K + 512)) "$MNT/disk"
logged_since "disk: size $((512 * K + 512)) is not a multiple of the logical sector size 4096" \
	"a shrink to a size off the sector"
log_mark
expect_errno "Invalid argument" truncate -s 0 "$MNT/disk"
logged_since "disk: refusing to shrink from $M to 0 bytes (a disk that holds data only grows)" "a shrink to 0"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a refused shrink"
expect_eq "$(json_num "$sc" size)" $M "sidecar size after a refused shrink"
pass "shrinking fails with EINVAL, the size is unchanged, and the log says why"

truncate -s 4M "$MNT/disk" || fail "truncate -s 4M failed"
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "size after truncate -s 4M"
expect_eq "$(json_num "$sc" size)" $((4 * M)) "sidecar size after truncate -s 4M"
expect_eq "$(range_sum "$MNT/disk" 0 $M)" "$before" "data written before the grow"
expect_zeros "$MNT/disk" $M $((3 * M)) "grown part"
expect_eq "$(stats_key disk total_blocks)" 64 "total_blocks after growing to 4M"
pass "truncate -s 4M: sidecar follows, old data intact, new part reads zeros"

# A grow from a size inside a block: the allocated part block keeps its
# data, and what grows into it reads zeros.
: > "$MNT/tail" || fail "creating tail failed"
truncate -s $((BS + 4 * K)) "$MNT/tail" || fail "growing tail to 68K failed"
dd if=/dev/urandom of="$MNT/tail" bs=$SS count=$(((BS + 4 * K) / SS)) conv=notrunc oflag=direct status=none ||
	fail "writing tail failed"
tail_sum=$(range_sum "$MNT/tail" 0 $((BS + 4 * K)))
truncate -s $((4 * BS)) "$MNT/tail" || fail "growing tail failed"
expect_eq "$(range_sum "$MNT/tail" 0 $((BS + 4 * K)))" "$tail_sum" "data before a grow from inside a block"
expect_zeros "$MNT/tail" $((BS + 4 * K)) $((3 * BS - 4 * K)) "part grown into a partial block"
rm "$MNT/tail" || fail "rm tail failed"
pass "growing from inside an allocated block keeps the data; the grown part reads zeros"

stop_daemon
start_daemon "${OPTS[@]}"
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "disk size after remount"
expect_eq "$(json_num "$STORE/disk.json" size)" $((4 * M)) "disk sidecar size after remount"
pass "the grown size survives unmount + remount"
stop_daemon
