#!/bin/bash
# SPDX-License-Identifier: MIT
# pidfile-starts.sh - starting in the background: 20 starts in a row
# (`sectorfs -o pidfile=F STORE MNT`, no -f) each return 0 with F already
# written, holding the pid of a live sectorfs (its /proc cmdline names
# STORE and MNT) that serves MNT, whose lock on the store names the same
# pid, whose stdio is /dev/null and whose working directory is /; after
# fusermount3 -u that process exits, F is gone and no temporary file is
# left beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K

for ((n = 1; n <= 20; n++)); do
	rm -f "$PIDF"
	rc=0
	timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$STORE" "$MNT" 2>>"$T/daemon.log" || rc=$?
	# first, before anything else can give the daemon time: the pid file
	[ -e "$PIDF" ] || fail "start $n: sectorfs returned $rc and there is no pid file"
	pid=$(cat "$PIDF")
	DPID=$pid   # for lib.sh's cleanup
	[ $rc -eq 0 ] || fail "start $n: sectorfs exited $rc"
	check_serving "$n" "$pid"
	[ $n -eq 1 ] || [ "$pid" != "$last" ] || fail "start $n: same pid $pid as the start before"
	if [ $n -eq 1 ]; then
		for fd in 0 1 2; do
			[ "$(readlink "/proc/$pid/fd/$fd")" = /dev/null ] ||
				fail "daemon's fd $fd is $(readlink "/proc/$pid/fd/$fd"), not /dev/null"
		done
		[ "$(readlink "/proc/$pid/cwd")" = / ] || fail "daemon's working directory is $(readlink "/proc/$pid/cwd")"
	fi
	last=$pid
	stop_bg "$n"
done
pass "20 background starts: each returns 0 with the pid file written, naming the live sectorfs that serves and holds the lock; stdio /dev/null, cwd /; unmount ends it and removes the pid file"

