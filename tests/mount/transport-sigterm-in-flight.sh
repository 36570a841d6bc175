#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-sigterm-in-flight.sh - SIGTERM with requests in flight ends the
# daemon cleanly, on each transport.
#
# Proves: SIGTERM while 4 fio jobs write at QD 32 ends the daemon (exit 0)
# within seconds and fio gets errors, not a hang.  Over /dev/fuse, and over
# io_uring where fuse.enable_uring is Y (on_each_transport).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"
requires_cmd fio

# sigterm_in_flight LABEL [options...]
sigterm_in_flight() {
	local label=$1 rc
	shift
	start_daemon "$@"
	inflight_writers 30
	kill -TERM "$DPID"
	STOP_TIMEOUT=20 wait_daemon "SIGTERM with fio's writes in flight ($label)"
	wait_gone "$FIO" 20 || fail "$label: fio still running 20 s after the daemon ended"
	rc=0
	wait "$FIO" || rc=$?
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	pass "$label: SIGTERM with 4 x QD32 writes in flight: daemon exit 0, fio exit $rc"
}

on_each_transport sigterm_in_flight
