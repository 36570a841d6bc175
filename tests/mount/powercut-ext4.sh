#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-ext4.sh - ext4 over a loop device on a 4Kn image with a volatile
# write cache survives power cuts at random points: after each, the
# journal replays, every fsync'd file is intact and e2fsck -fn is clean.
#
# Proves, over POWER_ROUNDS rounds (20), each from a new ext4 (mkfs, mount
# with barriers, the default), a writer of files that fsyncs each file
# and its directory (tests/mount/power/fsync_writer.py) and a cut at a
# point drawn from the round's seed (cut-after-writes:N, or
# cut-after-flushes:N every third round; policy random:0.5, or lose-all
# every other round):
#  - after the power comes back the filesystem mounts, every file the
#    writer had fsync'd holds its data, and e2fsck -fn finds nothing;
#  - the cuts did take writes that were not yet flushed (the writer keeps
#    the cache busy with unsynced appends), so the rounds tested something.
# A failing round is named with its seed and trigger, which reproduce it.
# On a machine too slow for the rounds within POWER_BUDGET seconds (300)
# the test skips, saying so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_loop
requires_cmd python3 mkfs.ext4 e2fsck setfattr getfattr timeout

ROUNDS=${POWER_ROUNDS:-20}
fail_sidecar d 256M 4kn '"write_cache": "volatile"'
start_daemon
rounds_begin "${POWER_BUDGET:-300}"

lostw=0 unflushed=0
printf '%-6s %-22s %-10s %9s %8s %5s %6s\n' round trigger policy unflushed fsynced lost e2fsck
for ((r = 1; r <= ROUNDS; r++)); do
	round_budget "$r"
	seed=$((4000 + r))
	RANDOM=$seed
	if ((r % 3 == 0)); then trig="cut-after-flushes:$((RANDOM % 40 + 1))"
	else trig="cut-after-writes:$((RANDOM % 800 + 20))"; fi
	if ((r % 2)); then policy=random:0.5; else policy=lose-all; fi
	ext4_round d "barrier=1" "$seed" "$trig" "$policy"
	printf '%-6s %-22s %-10s %9s %8s %5s %6s\n' "$r" "$trig" "$policy" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_FSCK"
	[ "$R_MOUNT" = 0 ] || fail "round $r (seed $seed, $trig, $policy): ext4 does not mount after the cut: $(cat "$T/mount.err")"
	[ "$R_LOST" = 0 ] || fail "round $r (seed $seed, $trig, $policy): $R_LOST of $R_FSYNCED fsync'd files lost or damaged"
	[ "$R_FSCK" = 0 ] || fail "round $r (seed $seed, $trig, $policy): e2fsck -fn exit $R_FSCK: $(cat "$T/e2fsck.$seed.out")"
	lostw=$((lostw + R_LOSTW))
	unflushed=$((unflushed + R_UNFLUSHED))
done
[ "$unflushed" -gt 0 ] || fail "no cut found a write in the cache: the rounds tested nothing"
pass "$ROUNDS cuts ($unflushed unflushed writes, $lostw lost): every fsync'd file intact, e2fsck -fn clean"
loops_gone
