#!/bin/bash
# SPDX-License-Identifier: MIT
# truncate-past-filesystem.sh - a truncate through the mount to a size the
# disk allows (at most 2^30 blocks) but the store's filesystem does not
# (ext4 with 4 KiB blocks: files below 16 TiB) fails with the filesystem's
# EFBIG, and the daemon's log line names that error, not another; the
# image keeps its size.  Skipped where the store's filesystem takes a file
# of 2^50 bytes (XFS, btrfs, tmpfs).
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd truncate

BIG=$((1 << 50))            # 2^30 blocks of 1 MiB: the largest such disk
truncate -s "$BIG" "$STORE/probe" 2>/dev/null && skip "the store's filesystem takes a file of $BIG bytes"
rm -f "$STORE/probe"

sidecar a 1M 512n thin
start_daemon
log_mark
expect_errno "File too large" truncate -s "$BIG" "$MNT/a"
[ "$(stat_val %s "$MNT/a")" -eq $((1 << 20)) ] || fail "a: size $(stat_val %s "$MNT/a") after the refused truncate"
logged_since "a: cannot grow to $BIG bytes: File too large" "the refused truncate"
log_new | grep -q "Invalid argument" && fail "the log names another error than the one returned: $(log_new)"
pass "truncate to $BIG bytes past the store's filesystem: EFBIG, logged as such; the size stays"
stop_daemon
