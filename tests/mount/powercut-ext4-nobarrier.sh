#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-ext4-nobarrier.sh - the same power cuts as powercut-ext4.sh, on
# ext4 mounted -o barrier=0 (nobarrier): without its cache flushes the
# filesystem loses what it fsync'd, and some cuts leave it inconsistent.
# This is the class of bug the failure model exists to catch.
#
# Proves, over POWER_ROUNDS rounds (20), each from a new ext4 mounted
# barrier=0, the fsync_writer.py workload and a cut at a point drawn from
# the round's seed (cut-after-writes:N, policy random:0.5):
#  - some rounds show the damage: fsync'd files lost or wrong, e2fsck -fn
#    errors, or a filesystem that no longer mounts; the table of every
#    round and the totals are printed (what doc/failures.md quotes);
#  - every cut found writes in the cache: fsync on a barrier=0 ext4 sends
#    no flush to the device, so the cache holds everything written since
#    the last destaging (write_cache_size, 32M) when the power goes.
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

bad=0 lostf=0 fsynced=0 fsckbad=0 nomount=0 empty=0
printf '%-6s %-22s %9s %8s %5s %6s %6s\n' round trigger unflushed fsynced lost e2fsck mount
for ((r = 1; r <= ROUNDS; r++)); do
	round_budget "$r"
	seed=$((5000 + r))
	RANDOM=$seed
	trig="cut-after-writes:$((RANDOM % 800 + 20))"
	ext4_round d "barrier=0" "$seed" "$trig" random:0.5
	printf '%-6s %-22s %9s %8s %5s %6s %6s\n' "$r" "$trig" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_FSCK" \
		"$([ "$R_MOUNT" = 0 ] && echo ok || echo FAILED)"
	[ "$R_UNFLUSHED" -gt 0 ] || empty=$((empty + 1))
	fsynced=$((fsynced + R_FSYNCED))
	lostf=$((lostf + R_LOST))
	[ "$R_FSCK" = 0 ] || fsckbad=$((fsckbad + 1))
	[ "$R_MOUNT" = 0 ] || nomount=$((nomount + 1))
	if [ "$R_LOST" != 0 ] || [ "$R_FSCK" != 0 ] || [ "$R_MOUNT" != 0 ]; then bad=$((bad + 1)); fi
done
echo "barrier=0: $bad of $ROUNDS rounds damaged: $lostf of $fsynced fsync'd files lost or wrong," \
	"e2fsck -fn errors in $fsckbad, no mount in $nomount"
[ "$empty" = 0 ] || fail "$empty cuts found nothing in the cache: barrier=0 should leave everything there"
[ "$bad" -gt 0 ] || fail "no round lost fsync'd data or left ext4 inconsistent: the model missed barrier=0"
pass "barrier=0 is caught: $bad of $ROUNDS rounds damaged"
loops_gone
