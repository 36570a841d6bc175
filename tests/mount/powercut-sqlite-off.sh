#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-sqlite-off.sh - SQLite in WAL mode with synchronous=OFF loses
# committed rows at power cuts: it never asks for a flush, so its commits
# sit in the page cache and the disk's volatile write cache.
#
# Proves, over POWER_ROUNDS rounds (20), each from a new ext4 over a loop
# device on a 4Kn image with a volatile write cache, python3's sqlite3
# committing with synchronous=OFF (tests/mount/power/sqlite_writer.py)
# and the power cut 0.1 to 1.9 s (drawn from the round's seed) after it
# starts, the writer killed with it (random:0.5, or lose-all every other
# round):
#  - some rounds lose rows whose COMMIT had returned; the table of every
#    round and the totals are printed (what doc/failures.md quotes),
#    with the rounds whose integrity_check failed and those that left no
#    table at all (nothing of the database was ever flushed).
# On a machine too slow for the rounds within POWER_BUDGET seconds (300)
# it skips.
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

rows=0 lost=0 losing=0 badcheck=0 empty=0
printf '%-6s %-10s %-10s %9s %9s %6s %9s\n' round cut policy unflushed committed lost integrity
for ((r = 1; r <= ROUNDS; r++)); do
	round_budget "$r"
	seed=$((7000 + r))
	RANDOM=$seed
	trig="off@$((RANDOM % 2)).$((RANDOM % 9 + 1))"
	if ((r % 2)); then policy=random:0.5; else policy=lose-all; fi
	ext4_round d "barrier=1" "$seed" "$trig" "$policy" sqlite_writer.py sqlite_check.py OFF
	printf '%-6s %-10s %-10s %9s %9s %6s %9s\n' "$r" "$trig" "$policy" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_CHECK"
	[ "$R_MOUNT" = 0 ] || fail "round $r (seed $seed): ext4 does not mount after the cut: $(cat "$T/mount.err")"
	rows=$((rows + R_FSYNCED))
	lost=$((lost + R_LOST))
	[ "$R_LOST" = 0 ] || losing=$((losing + 1))
	[ "$R_CHECK" = bad ] && badcheck=$((badcheck + 1))
	[ "$R_CHECK" = empty ] && empty=$((empty + 1))
done
echo "synchronous=OFF: $losing of $ROUNDS rounds lost committed rows ($lost of $rows);" \
	"integrity_check failed in $badcheck, no table left in $empty"
[ "$losing" -gt 0 ] || fail "no round lost a committed row: the model missed synchronous=OFF"
pass "synchronous=OFF is caught: $losing of $ROUNDS rounds lost committed rows"
loops_gone
