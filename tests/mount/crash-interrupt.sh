#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-interrupt.sh - Ctrl-C (SIGINT) or SIGTERM stops the crash explorer
# at once, whatever it is doing, and it undoes everything it made.
#
# Proves, with --loop on a 4Kn image with ext4, a workload that mounts the
# filesystem and then sleeps (in the rounds after the dry run) and a
# check that sleeps (in the second run):
#  - SIGINT while a round's workload holds the filesystem mounted: exit
#    130 within 10 s, "interrupted" said, the JSON printed with what ran;
#  - SIGTERM while a check runs: the same;
#  - after each: no process of the commands, no mount, no loop device on
#    the store, no round image in the store or the mount, no scratch
#    directory; the user's image untouched.
# Needs root (a loop device, mount).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

ext4_image d
before=$(md5sum < "$MNT/d")
MOUNT='mkdir -p $SECTORFS_CRASH_DIR/fs && mount $SECTORFS_CRASH_DISK $SECTORFS_CRASH_DIR/fs'

# interrupt SIGNAL PHASE WORKLOAD CHECK N: start the explorer, wait until the command of PHASE
# has written its pid to $T/PHASE.pid (round 1 on: it then runs sleep 61.N), send SIGNAL,
# check what is left.
interrupt() {
	local sig=$1 phase=$2 pid rc=0 i
	rm -f "$T/$phase.pid"
	TMPDIR=$T "$SECTORFS_BENCH" crash --loop --json --on end --points 3 --workload "$3" --check "$4" "$MNT/d" \
		> "$T/$sig.json" 2> "$T/$sig.err" &
	pid=$!
	for ((i = 0; i < 400; i++)); do [ -s "$T/$phase.pid" ] && break; sleep 0.05; done
	[ -s "$T/$phase.pid" ] || fail "$sig: the $phase never started: $(cat "$T/$sig.err")"
	kill -"$sig" "$pid"
	for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "$sig: the explorer still runs 10 s later"; }
	wait "$pid" || rc=$?
	expect_eq "$rc" 130 "$sig in the $phase: exit status"
	grep -q interrupted "$T/$sig.err" || fail "$sig: it does not say it was interrupted: $(cat "$T/$sig.err")"
	expect_eq "$(crash_fig "$T/$sig.json" 'd["interrupted"]')" True "$sig: the JSON's interrupted"
	kill -0 "$(cat "$T/$phase.pid")" 2>/dev/null && fail "$sig: the $phase (pid $(cat "$T/$phase.pid")) still runs"
	pgrep -f "sleep 61\.$5" > /dev/null && fail "$sig: the $phase's sleep still runs"
	nothing_left
	expect_eq "$(md5sum < "$MNT/d")" "$before" "$sig: the user's image"
	pass "$sig in the $phase: exit 130 within 10 s, nothing left"
}

interrupt INT workload "$MOUNT && echo \$\$ > $T/workload.pid.\$SECTORFS_CRASH_ROUND &&
	{ [ \$SECTORFS_CRASH_ROUND = 0 ] || { mv $T/workload.pid.\$SECTORFS_CRASH_ROUND $T/workload.pid; sleep 61.1; }; }" true 1
interrupt TERM check true "echo \$\$ > $T/check.pid.\$SECTORFS_CRASH_ROUND &&
	{ [ \$SECTORFS_CRASH_ROUND = 0 ] || { mv $T/check.pid.\$SECTORFS_CRASH_ROUND $T/check.pid; sleep 61.2; }; }" 2
loops_gone
