#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-sqlite-off.sh - the crash explorer catches SQLite in WAL mode with
# synchronous=OFF losing committed rows.
#
# Proves, with the set-up and check of crash-sqlite-full.sh and the
# writer run with synchronous=OFF, over 20 points, policy random:0.5:
#  - sectorfs-bench crash exits 2: some points fail, each saying rows
#    whose COMMIT had returned are lost (or the database is gone).
# Needs root; skips without python3's sqlite3, and on a machine too slow
# to find one in POWER_BUDGET seconds (300).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

ext4_image d
crash_json "$T/run.json" --loop --workload "sh $POWER_PY/ext4_workload.sh barrier=1 sqlite_writer.py 7 OFF 40" \
	--check "sh $POWER_PY/ext4_check.sh sqlite_check.py" --points 20 --policy random:0.5 "$MNT/d"
crash_some_failed "$T/run.json" "SQLite WAL synchronous=OFF"
pass "SQLite WAL, synchronous=OFF: $(crash_fig "$T/run.json" 'd["points_failed"]') of 20 points fail:" \
	"$(crash_fig "$T/run.json" '[r["check_says"] for r in d["results"] if r["failed"]][0]')"
nothing_left
loops_gone
