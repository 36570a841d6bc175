#!/bin/bash
# SPDX-License-Identifier: MIT
# pidfile-pipe.sh - a caller that reads the output of a background start
# through a pipe gets end of file when sectorfs returns (the daemon does
# not keep the pipe open), and the daemon serves.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K

rm -f "$PIDF"
rc=0
timeout 20 bash -c 'set -o pipefail; "$1" -o pidfile="$2" "$3" "$4" 2>&1 | cat >"$5"' _ \
	"$SECTORFS" "$PIDF" "$STORE" "$MNT" "$T/piped.out" || rc=$?
[ -s "$PIDF" ] && DPID=$(cat "$PIDF")
[ $rc -ne 124 ] || fail "sectorfs 2>&1 | cat: still no end of file after 20 s (the daemon keeps the pipe open)"
[ $rc -eq 0 ] || fail "sectorfs 2>&1 | cat exited $rc: $(cat "$T/piped.out")"
check_serving pipe "$DPID"
stop_bg pipe
pass "sectorfs 2>&1 | cat: end of file as sectorfs returns, daemon serving"

