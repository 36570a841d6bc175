#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-ext4-barrier.sh - the crash explorer finds no failing point in
# ext4 with barriers, whose fsync flushes the disk's cache.
#
# Proves, on ext4 over a loop device (--loop) on a 4Kn image with a
# volatile write cache, mounted barrier=1, the workload
# tests/mount/power/fsync_writer.py (30 files, each written, fsync'd and
# its directory fsync'd before it is logged, O_DIRECT scratch writes in
# between left in the cache) and the check ext4_check.sh (the filesystem
# mounts, every logged file is intact, e2fsck -fn is clean), over 24
# points (after writes, after flushes, at times, the end), policy
# random:0.5:
#  - sectorfs-bench crash exits 0: every point ran, none failed;
#  - the cuts found writes in the cache (they tested something).
# Needs root; skips on a machine too slow for the points in POWER_BUDGET
# seconds (300).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

ext4_image d
crash_json "$T/run.json" --loop --workload "sh $POWER_PY/ext4_workload.sh barrier=1 fsync_writer.py 7 30" \
	--check "sh $POWER_PY/ext4_check.sh fsync_check.py" --points 24 --on writes,flushes,seconds,end \
	--policy random:0.5 "$MNT/d"
crash_none_failed "$T/run.json" "ext4 barrier=1"
unflushed=$(crash_fig "$T/run.json" 'sum(r["unflushed_writes"] for r in d["results"])')
[ "$unflushed" -gt 0 ] || fail "no cut found a write in the cache: the rounds tested nothing"
pass "ext4 barrier=1: none of 24 points fails ($unflushed unflushed writes at the cuts;" \
	"$(crash_fig "$T/run.json" '"%.2f" % d["seconds_per_round"]') s a round)"
nothing_left
loops_gone
