#!/bin/bash
# SPDX-License-Identifier: MIT
# start-failures.sh - a background start that fails -- store already
# served by another daemon, mount point missing, pid file in a missing
# directory (after mounting), unknown option -- exits non-zero with the
# reason on stderr and leaves no pid file, no mount and no process, the
# serving daemon untouched.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K

rc=0
timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$STORE" "$MNT" 2>>"$T/daemon.log" || rc=$?
[ -s "$PIDF" ] || fail "no pid file (exit $rc)"
DPID=$(cat "$PIDF")
check_serving holder "$DPID"
bad_start "already served by another sectorfs (pid $DPID, mounted at $MNT)" "$MNT2" "$STORE" "$MNT2"
check_serving "holder after the refused start" "$DPID"
stop_bg holder

bad_start "bad mount point" "$T/no-such-mnt" "$STORE" "$T/no-such-mnt"
rm -f "$T/nodir/pid"
rc=0
timeout 30 "$SECTORFS" -o pidfile="$T/nodir/pid" "$STORE" "$MNT2" >"$T/bad.out" 2>&1 || rc=$?
left=$(sectorfs_pids "$MNT2")
[ -z "$left" ] || { DPID=${left%%$'\n'*}; fail "-o pidfile=\$T/nodir/pid: process(es) $left still running"; }
[ $rc -ne 0 ] || fail "-o pidfile=\$T/nodir/pid: sectorfs exited 0"
grep -qF "cannot write pid file" "$T/bad.out" || fail "-o pidfile=\$T/nodir/pid: no reason on stderr: $(cat "$T/bad.out")"
! mountpoint -q "$MNT2" || fail "-o pidfile=\$T/nodir/pid: $MNT2 left mounted"
pass "fails after mounting (pid file in a missing directory): exit $rc, unmounted, gone: $(head -n1 "$T/bad.out" | sed "s|$T|\$T|g")"
bad_start "bogus_option" "$MNT2" -o bogus_option "$STORE" "$MNT2"
