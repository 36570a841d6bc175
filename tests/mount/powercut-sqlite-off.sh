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
ext4_rounds_start sqlite

lost=0 losing=0 badcheck=0 empty=0
# count_round R: the round's losses counted (ext4 must still mount)
count_round() {
	[ "$R_MOUNT" = 0 ] || fail "round $1 (seed $seed): ext4 does not mount after the cut: $(cat "$T/mount.err")"
	lost=$((lost + R_LOST))
	[ "$R_LOST" = 0 ] || losing=$((losing + 1))
	[ "$R_CHECK" = bad ] && badcheck=$((badcheck + 1))
	[ "$R_CHECK" = empty ] && empty=$((empty + 1))
	return 0
}
sqlite_rounds OFF 7000 time count_round
echo "synchronous=OFF: $losing of $ROUNDS rounds lost committed rows ($lost of $ROWS);" \
	"integrity_check failed in $badcheck, no table left in $empty"
[ "$losing" -gt 0 ] || fail "no round lost a committed row: the model missed synchronous=OFF"
pass "synchronous=OFF is caught: $losing of $ROUNDS rounds lost committed rows"
loops_gone
