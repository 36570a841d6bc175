#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-lazy-unmount-900-closes.sh - the last close after a lazy
# unmount does not end the daemon with an error, on each transport.
#
# Proves: a lazy unmount (fusermount3 -uz) while a process holds 900 opens
# of an image, which then closes them all at once, ends with the daemon's
# exit 0, five rounds in five.  The last close tears the connection down
# while the daemon reads the RELEASEs: a read that had taken one fails
# with ECONNABORTED, which ended the daemon with exit 1 in 25 of 30 such
# rounds before the daemon took it as the end of the session.  Over
# /dev/fuse, and over io_uring where fuse.enable_uring is Y
# (on_each_transport).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"
requires_cmd python3

# close_storm LABEL [options...]
close_storm() {
	local label=$1 round i
	shift
	for round in 1 2 3 4 5; do
		start_daemon "$@"
		rm -f "$T/held"
		python3 -c '
import os, sys, time
fds = [os.open(sys.argv[1], os.O_RDONLY) for _ in range(900)]
open(sys.argv[2], "w").close()
time.sleep(60)
' "$MNT/k4" "$T/held" &
		HOLD=$!
		on_exit "kill $HOLD"
		for ((i = 0; i < 200; i++)); do
			[ -e "$T/held" ] && break
			sleep 0.1
		done
		[ -e "$T/held" ] || fail "$label: 900 opens of k4 not done in 20 s"
		fusermount3 -uz "$MNT" || fail "$label: fusermount3 -uz failed"
		kill "$HOLD"
		wait "$HOLD" 2>/dev/null || true
		STOP_TIMEOUT=20 wait_daemon "the lazy unmount and 900 closes at once, round $round ($label)"
	done
	pass "$label: lazy unmount, then 900 opens of an image closed at once: the daemon exited 0, 5 rounds in 5"
}

on_each_transport close_storm
