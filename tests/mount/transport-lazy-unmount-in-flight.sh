#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-lazy-unmount-in-flight.sh - a lazy unmount lets the I/O in
# flight finish, then the daemon exits 0, on each transport.
#
# Proves: fusermount3 -uz while 4 fio jobs write at QD 32 lets fio finish
# without an error, then the daemon exits 0.  Over /dev/fuse, and over
# io_uring where fuse.enable_uring is Y (on_each_transport).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"
requires_cmd fio

# lazy_unmount_in_flight LABEL [options...]
lazy_unmount_in_flight() {
	local label=$1 rc
	shift
	start_daemon "$@"
	inflight_writers 3
	fusermount3 -uz "$MNT" || fail "$label: fusermount3 -uz failed"
	rc=0
	wait "$FIO" || rc=$?
	[ $rc -eq 0 ] || fail "$label: fio failed ($rc) after a lazy unmount: $(tail -n5 "$T/fl.out")"
	STOP_TIMEOUT=20 wait_daemon "the lazy unmount with I/O in flight ($label)"
	pass "$label: lazy unmount with I/O in flight: fio finished (exit 0), then the daemon exited 0"
}

on_each_transport lazy_unmount_in_flight
