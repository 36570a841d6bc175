#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-max-background.sh - the kernel lets the daemon have as many
# asynchronous requests in flight as it has worker threads.
#
# Proves: max_background is the number of worker threads (64 by default,
# at least 12), -o max_threads=N gives N, -o max_background=N overrides
# both; congestion_threshold is three quarters of it.  Read back from the
# kernel's own view (the fusectl connection directory; mounted for the
# test and unmounted after when it is not there, checked in the start-up
# line only when that cannot be done); the start-up line says the same
# number.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

FUSECTL=/sys/fs/fuse/connections
fusectl_ok=
if [ -d "$FUSECTL" ] && [ "$(id -u)" -eq 0 ]; then
	if grep -q " $FUSECTL fusectl " /proc/self/mounts; then
		fusectl_ok=1
	elif mount -t fusectl fusectl "$FUSECTL" 2>/dev/null; then
		on_exit "umount $FUSECTL"
		fusectl_ok=1
	fi
fi

# conn_value FILE: a value of this mount's connection in fusectl.
conn_value() {
	local dev
	dev=$(mountpoint -d "$MNT") || fail "mountpoint -d $MNT failed"
	cat "$FUSECTL/${dev#*:}/$1" || fail "no $FUSECTL/${dev#*:}/$1"
}

# check_bg WANT [options...]: mount with the options; max_background WANT in the kernel and the log line.
check_bg() {
	local want=$1 got cong
	shift
	: > "$T/daemon.log"
	start_daemon "$@"
	grep -q "max_background $want\$" "$T/daemon.log" ||
		fail "${*:-defaults}: no start-up line saying max_background $want: $(cat "$T/daemon.log")"
	if [ -n "$fusectl_ok" ]; then
		got=$(conn_value max_background)
		cong=$(conn_value congestion_threshold)
		[ "$got" = "$want" ] || fail "${*:-defaults}: the kernel has max_background $got, expected $want"
		[ "$cong" = $((want * 3 / 4)) ] ||
			fail "${*:-defaults}: congestion_threshold $cong, expected $((want * 3 / 4))"
	fi
	stop_daemon
	pass "${*:-defaults}: max_background $want${fusectl_ok:+ (kernel: $got, congestion_threshold $cong)}"
}

check_bg 64
check_bg 20 -o max_threads=20
check_bg 12 -o max_threads=4
check_bg 200 -o max_background=200
[ -n "$fusectl_ok" ] || echo "# fusectl not available: max_background checked in the start-up line only"
