#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-sparse.sh - cp --sparse=always of a source with a hole into a
# new image: cp seeks over the hole and punches it in the destination
# (fallocate PUNCH_HOLE|KEEP_SIZE) past the end its writes reached so far.
# A discard there, on a growing image, discards nothing that was written
# and succeeds, as on a file, so the copy ends with the source's size and
# bytes and the hole unallocated.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp fallocate

SIZE=$((24 << 20))
head -c $SIZE /dev/urandom > "$T/src"
fallocate -p -o $((8 << 20)) -l $((4 << 20)) "$T/src" || skip "the test directory's filesystem punches no holes"
start_daemon -o block_size=1M
cp --sparse=always "$T/src" "$MNT/s" 2>"$T/cp.err" || fail "cp --sparse=always into a new image failed: $(cat "$T/cp.err")"
[ "$(stat_val %s "$MNT/s")" -eq $SIZE ] || fail "s: $(stat_val %s "$MNT/s") bytes, the source has $SIZE"
cmp -s "$T/src" "$MNT/s" || fail "s does not hold the source's bytes"
[ "$(stats_key s allocated_blocks)" -eq 20 ] || fail "s: $(stats_key s allocated_blocks) blocks allocated, want 20 (the 4 of the hole not)"
pass "cp --sparse=always into a new image: the source's size and bytes, the hole unallocated"

# a source that ends with a hole: cp seeks to the end and truncates to it
fallocate -p -o $((20 << 20)) -l $((4 << 20)) "$T/src"
cp --sparse=always "$T/src" "$MNT/t" 2>"$T/cp.err" || fail "cp --sparse=always of a source ending in a hole failed: $(cat "$T/cp.err")"
[ "$(stat_val %s "$MNT/t")" -eq $SIZE ] || fail "t: $(stat_val %s "$MNT/t") bytes, the source has $SIZE"
cmp -s "$T/src" "$MNT/t" || fail "t does not hold the source's bytes"
pass "cp --sparse=always of a source ending in a hole: its size and bytes"
stop_daemon
