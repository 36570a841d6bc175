#!/bin/bash
# SPDX-License-Identifier: MIT
# pidfile-relative.sh - a relative pid file (-o pidfile=rel.pid) names a
# file in the directory sectorfs was started from, removed at a clean
# exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K

mkdir "$T/cwd"
rc=0
(cd "$T/cwd" && exec timeout 30 "$SECTORFS" -o pidfile=rel.pid "$STORE" "$MNT") 2>>"$T/daemon.log" || rc=$?
[ -s "$T/cwd/rel.pid" ] || fail "-o pidfile=rel.pid from $T/cwd: no $T/cwd/rel.pid (exit $rc)"
DPID=$(cat "$T/cwd/rel.pid")
[ $rc -eq 0 ] || fail "-o pidfile=rel.pid: sectorfs exited $rc"
check_serving relative "$DPID"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_gone "$DPID" 10 || fail "daemon $DPID still running 10 s after unmount"
DPID=
[ ! -e "$T/cwd/rel.pid" ] || fail "relative pid file left after a clean exit"
pass "-o pidfile=rel.pid names a file in the directory sectorfs was started from"

