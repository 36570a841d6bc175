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
requires_fuse
requires_loop
requires_cmd python3 mkfs.ext4 e2fsck setfattr getfattr timeout
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

ROUNDS=${POWER_ROUNDS:-20}
fail_sidecar d 256M 4kn '"write_cache": "volatile"'
start_daemon
rounds_begin "${POWER_BUDGET:-300}"

rows=0 unflushed=0
printf '%-6s %-22s %-10s %9s %9s %5s %9s\n' round trigger policy unflushed committed lost integrity
for ((r = 1; r <= ROUNDS; r++)); do
	round_budget "$r"
	seed=$((6000 + r))
	RANDOM=$seed
	trig="cut-after-writes:$((RANDOM % 600 + 20))"
	if ((r % 2)); then policy=random:0.5; else policy=lose-all; fi
	ext4_round d "barrier=1" "$seed" "$trig" "$policy" sqlite_writer.py sqlite_check.py FULL
	printf '%-6s %-22s %-10s %9s %9s %5s %9s\n' "$r" "$trig" "$policy" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_CHECK"
	what="round $r (seed $seed, $trig, $policy)"
	[ "$R_MOUNT" = 0 ] || fail "$what: ext4 does not mount after the cut: $(cat "$T/mount.err")"
	[ "$R_CHECK" = ok ] || [ "$R_CHECK/$R_FSYNCED" = empty/0 ] || fail "$what: PRAGMA integrity_check: $R_CHECK"
	[ "$R_LOST" = 0 ] || fail "$what: $R_LOST of $R_FSYNCED committed rows lost or wrong"
	[ "$R_FSCK" = 0 ] || fail "$what: e2fsck -fn exit $R_FSCK: $(cat "$T/e2fsck.$seed.out")"
	rows=$((rows + R_FSYNCED))
	unflushed=$((unflushed + R_UNFLUSHED))
done
[ "$unflushed" -gt 0 ] || fail "no cut found a write in the cache: the rounds tested nothing"
pass "$ROUNDS cuts ($unflushed unflushed writes): all $rows committed rows kept, integrity_check ok"
loops_gone
