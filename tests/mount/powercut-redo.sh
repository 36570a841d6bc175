#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-redo.sh - the seed case: 512-byte redo writes on a 512e drive
# without power-loss protection.  A power cut in the middle of the
# drive's read-modify-write of a 4 KiB physical sector destroys the other
# seven logical sectors in it, blocks the database flushed long before.
#
# Proves, over POWER_ROUNDS rounds (20) of each configuration, a writer
# of redo blocks (tests/mount/power/redo_writer.py: write, fdatasync,
# next; each round in a region of its own, starting at a sector drawn
# from the round's seed) and a cut after a number of writes drawn from
# the seed (cut-after-writes:N, policy random:0.5, so the last write,
# never flushed, is lost in some rounds and kept in others):
#  - 512e, rmw_power_safe false, 512-byte blocks: some rounds leave
#    blocks that had been flushed unreadable (EIO), and the stats count
#    their sectors as damaged;
#  - 512e, rmw_power_safe true, 512-byte blocks; 4kn, 4096-byte blocks;
#    512e, 4096-byte aligned blocks: no flushed block is ever lost or
#    unreadable, over every round;
#  - the table (configuration, rounds, rounds with damage, flushed blocks
#    lost, flushed blocks unreadable) is printed: doc/failures.md quotes it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_cmd python3 setfattr getfattr

ROUNDS=${POWER_ROUNDS:-20}
fail_sidecar e512 4M 512e '"write_cache": "volatile", "rmw_power_safe": false'
fail_sidecar e512safe 4M 512e '"write_cache": "volatile", "rmw_power_safe": true'
fail_sidecar k4 4M 4kn '"write_cache": "volatile"'
fail_sidecar e512big 4M 512e '"write_cache": "volatile", "rmw_power_safe": false'
start_daemon
rounds_begin "${POWER_BUDGET:-300}"

# config NAME BS: ROUNDS rounds on image NAME with BS-byte blocks; sets C_DAMAGED (rounds with a
# flushed block lost or unreadable), C_LOST, C_UNREADABLE (flushed blocks), C_SECTORS (damaged).
config() {
	local name=$1 bs=$2 img="$MNT/$1" r seed n off log flushed lost unreadable
	C_DAMAGED=0 C_LOST=0 C_UNREADABLE=0
	for ((r = 0; r < ROUNDS; r++)); do
		seed=$((9000 + r))
		RANDOM=$seed
		n=$((RANDOM % 48 + 1))
		off=$((r * 65536 + (RANDOM % 8) * 512 / bs * bs))
		log="$T/$name.$r.log"
		: > "$log"
		arm_cut "$img" "cut-after-writes:$n" "$seed" random:0.5
		python3 "$POWER_PY/redo_writer.py" "$img" "$off" "$bs" 64 "$log"
		[ "$(power_of "$img")" = off ] || fail "$name round $r: no cut after $n writes"
		set_attr "$img" power on
		read -r flushed lost unreadable < <(python3 "$POWER_PY/redo_check.py" "$img" "$off" "$bs" "$log")
		[ "$flushed" -ge $((n - 1)) ] || fail "$name round $r: only $flushed blocks flushed before a cut after $n"
		C_LOST=$((C_LOST + lost))
		C_UNREADABLE=$((C_UNREADABLE + unreadable))
		[ $((lost + unreadable)) = 0 ] || C_DAMAGED=$((C_DAMAGED + 1))
	done
	C_SECTORS=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failures"]["damaged_sectors"])' \
		"$MNT/.stats/$name.json")
	printf '%-38s %6s %14s %13s %17s %15s\n' "$3" "$ROUNDS" "$C_DAMAGED" "$C_LOST" "$C_UNREADABLE" "$C_SECTORS"
}

printf '%-38s %6s %14s %13s %17s %15s\n' configuration rounds "damaged rounds" "flushed lost" \
	"flushed unreadable" "sectors damaged"
config e512 512 "512e, rmw_power_safe false, 512 B"
[ "$C_UNREADABLE" -gt 0 ] || fail "512e without power-loss protection: no flushed block was ever damaged"
[ "$C_SECTORS" -gt 0 ] || fail "512e: the stats counted no damaged sector"
[ "$C_LOST" = 0 ] || fail "512e: $C_LOST flushed blocks hold other data (only damage, EIO, is expected)"
hurt=$C_UNREADABLE
config e512safe 512 "512e, rmw_power_safe true, 512 B"
[ $((C_LOST + C_UNREADABLE + C_SECTORS)) = 0 ] || fail "512e with rmw_power_safe: flushed blocks hurt"
config k4 4096 "4kn, 4096 B"
[ $((C_LOST + C_UNREADABLE + C_SECTORS)) = 0 ] || fail "4kn: flushed blocks hurt"
config e512big 4096 "512e, rmw_power_safe false, 4096 B"
[ $((C_LOST + C_UNREADABLE + C_SECTORS)) = 0 ] || fail "512e with whole physical sectors: flushed blocks hurt"
pass "512-byte redo on a 512e drive without power-loss protection: $hurt flushed blocks unreadable; none elsewhere"
stop_daemon
