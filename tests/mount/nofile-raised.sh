#!/bin/bash
# SPDX-License-Identifier: MIT
# nofile-raised.sh - the daemon started with a soft descriptor limit of
# 256 below a hard one of 4096 raises the soft one to the hard one: its
# start-up report says 4096, and so does /proc/PID/limits.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd prlimit

LIMIT=256
sidecar a 64K 4kn thin 4K
DAEMON_WRAPPER=(prlimit --nofile=$LIMIT:4096 --)
start_daemon
grep -qF "open at once (descriptor limit 4096)" "$T/daemon.log" ||
	fail "the soft limit was not raised to the hard one: $(grep 'open at once' "$T/daemon.log" | tail -n 1)"
[ "$(sed -n 's/^Max open files *\([0-9]*\).*/\1/p' "/proc/$DPID/limits")" -eq 4096 ] ||
	fail "the daemon's soft limit is not 4096: $(grep 'open files' "/proc/$DPID/limits")"
stop_daemon
pass "a soft limit of $LIMIT below a hard one of 4096 is raised to 4096"
