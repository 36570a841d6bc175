#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-rename-nofsync.sh - the crash explorer catches the classic bug: a
# file replaced by writing a new one and renaming it over the old, with
# no fsync, and the change reported done.
#
# Proves, on ext4 over a loop device (--loop: 4096-byte sectors) on a 4Kn
# image with a volatile write cache, the workload
# tests/mount/power/rename_workload.sh (f holds "old"; write f.tmp with
# "new", rename it over f, note "committed" outside the disk, unmount)
# and its check rename_check.sh (after "committed" f must hold "new",
# before it "old" or "new"):
#  - sectorfs-bench crash --loop --points 12 exits 2: some points fail
#    with f still "old" after the commit was reported;
#  - --replay SEED:TRIGGER of a failing point fails again, saying the same;
#  - no loop device, mount, round image or scratch directory is left.
# Needs root (a loop device, mount).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

PREP='echo old > f' ext4_image d
W="sh $POWER_PY/rename_workload.sh" C="sh $POWER_PY/rename_check.sh"
crash_json "$T/run.json" --loop --workload "$W" --check "$C" --points 12 "$MNT/d"
crash_some_failed "$T/run.json" "rename without fsync"
expect_eq "$(crash_fig "$T/run.json" 'all("committed, yet f holds" in r["check_says"] for r in d["results"] if r["failed"])')" \
	True "what the failing checks say"
pass "rename without fsync: $(crash_fig "$T/run.json" 'd["points_failed"]') of 12 points fail"

point=$(crash_fig "$T/run.json" '[r["replay"] for r in d["results"] if r["failed"]][-1]')
said=$(crash_fig "$T/run.json" '[r["check_says"] for r in d["results"] if r["failed"]][-1]')
crash_json "$T/replay.json" --loop --workload "$W" --check "$C" --replay "$point" "$MNT/d"
expect_eq "$CRASH_RC" 2 "--replay $point: exit status"
expect_eq "$(crash_fig "$T/replay.json" 'd["results"][0]["check_says"]')" "$said" "--replay $point: the check says"
pass "--replay $point fails again: $said"
nothing_left
loops_gone
