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

rows=0
printf '%-6s %-22s %-10s %9s %9s %5s %9s\n' round trigger policy unflushed committed lost integrity
for ((r = 1; r <= ROUNDS; r++)); do
	round_seed "$r" 6000
	trig="cut-after-writes:$((RANDOM % 600 + 20))"
	ext4_round d "barrier=1" "$seed" "$trig" "$policy" sqlite_writer.py sqlite_check.py FULL
	printf '%-6s %-22s %-10s %9s %9s %5s %9s\n' "$r" "$trig" "$policy" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_CHECK"
	what="round $r (seed $seed, $trig, $policy)"
	round_intact "$what" "committed rows lost or wrong"
	[ "$R_CHECK" = ok ] || [ "$R_CHECK/$R_FSYNCED" = empty/0 ] || fail "$what: PRAGMA integrity_check: $R_CHECK"
	rows=$((rows + R_FSYNCED))
done
rounds_tested
pass "$ROUNDS cuts ($ROUNDS_UNFLUSHED unflushed writes): all $rows committed rows kept, integrity_check ok"
loops_gone
