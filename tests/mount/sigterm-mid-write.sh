#!/bin/bash
# SPDX-License-Identifier: MIT
# sigterm-mid-write.sh - SIGTERM during a long write (200 MiB, bs=1M,
# oflag=direct): the daemon exits 0 within 30 s, the mount is gone; dd
# fails with ENOTCONN/ECONNABORTED, or through io_uring also ECANCELED (a
# request the kernel was handing to a ring entry as the rings closed), or
# has finished; after remount the N blocks dd reported written read back
# exactly, block N (the one in flight) is the pattern or zeros, everything
# after it zeros; sectorfs-img check is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp

NB=200
sidecar fb 256M 4kn thin 1M
head -c $((NB * M)) /dev/urandom > "$T/src.fb"
start_daemon
dd if="$T/src.fb" of="$MNT/fb" bs=1M count=$NB oflag=direct conv=notrunc 2>"$T/dd.fb" &
DDPID=$!
BG+=("$DDPID")
# signal once 40 MiB have reached the backing file
for ((i = 0; i < 30000; i++)); do
	[ "$(stat -c %b "$STORE/fb")" -ge $((40 * 2048)) ] && break
	kill -0 $DDPID 2>/dev/null || break
done
at=$(($(stat -c %b "$STORE/fb") / 2048))
t0=$(date +%s%N)
kill -TERM "$DPID"
daemon_exit 30 "SIGTERM during a write"
t1=$(date +%s%N)
! mountpoint -q "$MNT" || fail "$MNT still mounted after SIGTERM"
wait_gone $DDPID 10 || fail "dd still running 10 s after the daemon exited"
ddrc=0
wait $DDPID || ddrc=$?
BG=()
out=$(grep -o '^[0-9]*+[0-9]* records out' "$T/dd.fb" | cut -d+ -f1)
[ -n "$out" ] || fail "no record count from dd: $(cat "$T/dd.fb")"
errs="Transport endpoint is not connected|Software caused connection abort"
grep -q "FUSE over io_uring" "$T/daemon.log" && errs="$errs|Operation canceled"
if [ $ddrc -ne 0 ]; then
	grep -qE "$errs" "$T/dd.fb" ||
		fail "dd after SIGTERM: expected ${errs//|/ or }, got: $(cat "$T/dd.fb")"
	how="dd failed after $out MiB: $(grep -oE "$errs" "$T/dd.fb")"
else
	[ "$out" -eq $NB ] || fail "dd exited 0 having written $out of $NB MiB"
	how="dd had finished"
fi
pass "SIGTERM at ~$at MiB of a $NB MiB write: daemon exits 0 in $(((t1 - t0) / 1000000)) ms, mount gone, $how"
check_clean fb "after SIGTERM"
start_daemon
dump fb "$T/got"
for ((b = 0; b < 256; b++)); do
	if ((b < out)); then
		cmp -s -i $((b * M)):$((b * M)) -n $M "$T/got" "$T/src.fb" ||
			fail "fb: MiB $b, written (dd counted it) before SIGTERM, does not read back"
	elif ((b == out && b < NB)) && cmp -s -i $((b * M)):$((b * M)) -n $M "$T/got" "$T/src.fb"; then
		echo "# fb: the write in flight (MiB $b) reads as written"
	elif ! cmp -s -i $((b * M)):0 -n $M "$T/got" /dev/zero; then
		if ((b == out && b < NB)); then
			fail "fb: MiB $b, in flight at SIGTERM, is neither the pattern nor zeros"
		else
			fail "fb: MiB $b, past the $out MiB dd wrote and the one in flight, does not read as zeros"
		fi
	fi
done
pass "SIGTERM: after remount the $out MiB written read back, the rest is zeros; sectorfs-img check clean"
stop_daemon
