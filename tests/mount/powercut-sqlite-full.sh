#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-sqlite-full.sh - SQLite in WAL mode with synchronous=FULL, on
# ext4 over a loop device on a 4Kn image with a volatile write cache,
# keeps every committed row across power cuts at random points.
#
# Proves, over POWER_ROUNDS rounds (20), each from a new ext4, python3's
# sqlite3 committing transactions of 1 to 5 rows
# (tests/mount/power/sqlite_writer.py) and a cut at a point drawn from the
# round's seed (cut-after-writes:N; random:0.5, or lose-all every other
# round):
#  - after the power comes back the database opens, PRAGMA
#    integrity_check says ok (or, cut before its first commit, there is
#    no table yet), every row whose COMMIT had returned is there with its
#    data, and e2fsck -fn is clean;
#  - the cuts found writes in the cache (they tested something).
# A failing round is named with its seed and trigger.  On a machine too
# slow for the rounds within POWER_BUDGET seconds (300) it skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
ext4_rounds_start sqlite

# check_round R TRIGGER: every committed row kept, the database sound
check_round() {
	local what="round $1 (seed $seed, $2, $policy)"
	round_intact "$what" "committed rows lost or wrong"
	[ "$R_CHECK" = ok ] || [ "$R_CHECK/$R_FSYNCED" = empty/0 ] || fail "$what: PRAGMA integrity_check: $R_CHECK"
}
sqlite_rounds FULL 6000 writes check_round
rounds_tested
pass "$ROUNDS cuts ($ROUNDS_UNFLUSHED unflushed writes): all $ROWS committed rows kept, integrity_check ok"
loops_gone
