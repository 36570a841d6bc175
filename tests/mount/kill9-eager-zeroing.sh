#!/bin/bash
# SPDX-License-Identifier: MIT
# kill9-eager-zeroing.sh - kill -9 while the daemon eager-zeroes a new
# image in the background: `sectorfs-img check` is clean but for a note
# saying so, --repair finishes it (exit 1, then clean), the image then
# serves zeros.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp

# kill -9 while the daemon eager-zeroes a new image in the background
sidecar ezbig 512M 512n eagerzeroedthick 1M false
start_daemon
stat "$MNT/ezbig" > /dev/null || fail "ezbig is not served"
for ((i = 0; i < 3000; i++)); do
	[ "$(stats_key ezbig allocated_blocks)" -gt 0 ] && break
	sleep 0.01
done
tr -d ' \n' < "$MNT/.stats/ezbig.json" | grep -q '"zeroing":"running"' ||
	fail "test bug: ezbig was zeroed before the eager zeroing could be interrupted"
kill9_daemon
rc=0
"$SECTORFS_IMG" check "$STORE/ezbig" >"$T/check-ez.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "check after kill -9 during eager zeroing exited $rc (want 0, with a note): $(cat "$T/check-ez.out")"
grep -q "note: eager zeroing not finished" "$T/check-ez.out" ||
	fail "check after kill -9 during eager zeroing does not note it: $(cat "$T/check-ez.out")"
sed "s|$T|\$T|g; s/^/# check: /" "$T/check-ez.out"
rc=0
"$SECTORFS_IMG" check --repair "$STORE/ezbig" >"$T/repair.out" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "check --repair ezbig exited $rc (want 1, repaired): $(cat "$T/repair.out")"
check_clean ezbig "after --repair"
grep -q "note: eager zeroing" "$T/check.out" && fail "after --repair check still notes unfinished zeroing: $(cat "$T/check.out")"
start_daemon
[ "$(stats_key ezbig allocated_blocks)" = 512 ] || fail "ezbig: allocated_blocks $(stats_key ezbig allocated_blocks) after repair, want 512"
dd if="$MNT/ezbig" bs=1M iflag=direct status=none | cmp -s - <(head -c $((512 * M)) /dev/zero) || fail "ezbig does not read as zeros after repair"
pass "kill -9 during eager zeroing: check exits 0 with a note ($(grep -m1 note "$T/check-ez.out" | sed 's/.*note: //; s/:.*//')), --repair exits 1, then clean; the image reads as zeros"
stop_daemon
