#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon-ready-foreground.sh - started with -f, the daemon writes its pid
# file only once the mount is up (checked while it is slowed down by
# creating 200 declared images before mounting), and the file holds the
# daemon's own pid.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))

sidecar a 4M 512n thin 64K
# Creating declared images (each map and backing file made durable) keeps
# the daemon busy between opening the store and mounting: the window a
# premature pid file shows in.  (Eager zeroing no longer does: it runs in
# the background, tests/mount/eager-zeroing-*.sh.)
for ((i = 1; i <= 200; i++)); do sidecar "slow$i" 64K 512n thin 64K; done

rm -f "$T/pid"
"$SECTORFS" -f -o pidfile="$T/pid" "$STORE" "$MNT" 2>>"$T/daemon.log" &
DPID=$!
early=0 ready=0
for ((i = 0; i < 3000; i++)); do
	if [ -e "$T/pid" ]; then
		mountpoint -q "$MNT" || fail "pid file exists but $MNT is not mounted yet"
		ready=1
		break
	fi
	kill -0 "$DPID" 2>/dev/null || { wait "$DPID"; fail "daemon exited with $? before it was ready"; }
	mountpoint -q "$MNT" || early=$((early + 1))
	sleep 0.01
done
[ $ready -eq 1 ] || fail "no pid file after 30 s"
[ "$(cat "$T/pid")" = "$DPID" ] || fail "pid file says $(cat "$T/pid"), the daemon is $DPID"
[ "$(cat "/proc/$DPID/comm")" = sectorfs ] || fail "pid $DPID is $(cat "/proc/$DPID/comm"), not sectorfs"
[ "$(stat -c %s "$MNT/slow200")" = 65536 ] || fail "slow200 not served once ready"
pass "foreground: pid file appears only with the mount up ($early polls saw neither), holds the daemon's pid $DPID"

stop_daemon
