#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-sqlite-full.sh - the crash explorer finds no failing point in
# SQLite in WAL mode with synchronous=FULL.
#
# Proves, on ext4 (barrier=1) over a loop device (--loop) on a 4Kn image
# with a volatile write cache, python3's sqlite3 committing 40
# transactions of 1 to 5 rows (tests/mount/power/sqlite_writer.py FULL,
# each row logged once COMMIT returned) and the check ext4_check.sh
# sqlite_check.py (the database opens, PRAGMA integrity_check is ok,
# every logged row is there with its data, e2fsck -fn is clean), over 20
# points, policy random:0.5:
#  - sectorfs-bench crash exits 0: every point ran, none failed.
# Needs root; skips without python3's sqlite3, and on a machine too slow
# for the points in POWER_BUDGET seconds (300).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

ext4_image d
crash_json "$T/run.json" --loop --workload "sh $POWER_PY/ext4_workload.sh barrier=1 sqlite_writer.py 7 FULL 40" \
	--check "sh $POWER_PY/ext4_check.sh sqlite_check.py" --points 20 --policy random:0.5 "$MNT/d"
crash_none_failed "$T/run.json" "SQLite WAL synchronous=FULL"
pass "SQLite WAL, synchronous=FULL: none of 20 points fails"
nothing_left
loops_gone
