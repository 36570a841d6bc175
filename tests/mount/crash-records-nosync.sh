#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-records-nosync.sh - the crash explorer catches a program that
# calls a record written before it is durable, on a raw disk, without
# root (no loop device), and --replay of a failing point fails again.
#
# Proves, on a 512e image with a volatile write cache and the workload
# tests/mount/power/record_writer.py nosync (20 records of 4 KiB, each
# logged as written at once, never flushed; its check requires every
# logged record on the disk):
#  - sectorfs-bench crash --points 8 exits 2 and reports failing points,
#    each with a SEED:TRIGGER to replay; the cuts lost writes (lose-all);
#  - --replay SEED:TRIGGER of the failing cut-after-writes point that lost
#    most runs that one round only, exits 2, and its check again finds
#    logged records lost (the list may differ by the last record: the
#    workload runs a few milliseconds past the cut until the explorer
#    kills it, and may or may not log the write that completed just
#    before it);
#  - the user's image is untouched, and no round's image, scratch
#    directory or process is left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

fail_sidecar d 16M 512e '"write_cache": "volatile"'
start_daemon
before=$(md5sum < "$MNT/d")
W="python3 $POWER_PY/record_writer.py nosync 20" C="python3 $POWER_PY/record_check.py"

crash_json "$T/run.json" --workload "$W" --check "$C" --points 8 "$MNT/d"
crash_some_failed "$T/run.json" "records logged before a flush"
expect_eq "$(crash_fig "$T/run.json" 'd["points"]')" 8 "points sampled"
expect_eq "$(crash_fig "$T/run.json" 'd["dry_run"]["writes"]')" 20 "writes of the dry run"
expect_eq "$(crash_fig "$T/run.json" 'd["dry_run"]["flushes"]')" 0 "flushes of the dry run"
expect_eq "$(crash_fig "$T/run.json" 'all(r["lost_writes"] > 0 for r in d["results"] if r["failed"])')" True \
	"every failing point's cut lost writes"
pass "no flush before the log: $(crash_fig "$T/run.json" 'd["points_failed"]') of 8 points fail"

point=$(crash_fig "$T/run.json" 'max((r["lost_writes"], r["replay"]) for r in d["results"] if r["failed"] and "writes" in r["trigger"])[1]')
crash_json "$T/replay.json" --workload "$W" --check "$C" --replay "$point" "$MNT/d"
said=$(crash_fig "$T/replay.json" 'd["results"][0]["check_says"]')
expect_eq "$CRASH_RC" 2 "--replay $point: exit status (the check says: $said)"
expect_eq "$(crash_fig "$T/replay.json" 'len(d["results"])')" 1 "--replay $point: rounds"
case $said in *"logged records lost"*) ;; *) fail "--replay $point: the check says '$said'" ;; esac
pass "--replay $point fails again: $said"

expect_eq "$(md5sum < "$MNT/d")" "$before" "the user's image after the exploration"
nothing_left
pass "the image untouched; no round's image, loop device or scratch directory left"
stop_daemon
