#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-ext4-nobarrier.sh - the crash explorer catches ext4 mounted
# barrier=0 (nobarrier), whose fsync sends the disk no flush.
#
# Proves, with the set-up and workload of crash-ext4-barrier.sh but the
# filesystem mounted barrier=0, over 16 points, policy random:0.5:
#  - sectorfs-bench crash exits 2: some points fail (fsync'd files lost,
#    e2fsck errors, or a filesystem that no longer mounts);
#  - the dry run counted next to no flushes (the cache is never told to
#    write back: only the loop device's own set-up flushes, not counted).
# Needs root; skips on a machine too slow to find one in POWER_BUDGET
# seconds (300).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

ext4_image d
crash_json "$T/run.json" --loop --workload "sh $POWER_PY/ext4_workload.sh barrier=0 fsync_writer.py 7 30" \
	--check "sh $POWER_PY/ext4_check.sh fsync_check.py" --points 16 --policy random:0.5 "$MNT/d"
crash_some_failed "$T/run.json" "ext4 barrier=0"
flushes=$(crash_fig "$T/run.json" 'd["dry_run"]["flushes"]')
[ "$flushes" -le 2 ] || fail "ext4 barrier=0 sent $flushes flushes in the dry run"
pass "ext4 barrier=0: $(crash_fig "$T/run.json" 'd["points_failed"]') of 16 points fail ($flushes flushes in the dry run)"
nothing_left
loops_gone
