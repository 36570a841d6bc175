#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-rename-fsync.sh - the crash explorer finds nothing wrong with a
# file replaced the durable way: the new file fsync'd, renamed over the
# old one, the directory fsync'd, and only then the change reported.
#
# Proves, with the set-up of crash-rename-nofsync.sh and
# tests/mount/power/rename_workload.sh fsync, over 30 crash points
# (writes, flushes, the end) under lose-all and 30 more under random:0.5:
#  - sectorfs-bench crash --loop exits 0 both times, every point ran and
#    none failed: f is "old" or "new" before the report, "new" after it.
# Needs root (a loop device, mount).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

PREP='echo old > f' ext4_image d
for policy in lose-all random:0.5; do
	crash_json "$T/$policy.json" --loop --workload "sh $POWER_PY/rename_workload.sh fsync" \
		--check "sh $POWER_PY/rename_check.sh" --points 30 --policy "$policy" "$MNT/d"
	crash_none_failed "$T/$policy.json" "rename with fsync, $policy"
	pass "fsync, rename, fsync of the directory: none of 30 points fails under $policy"
done
nothing_left
loops_gone
