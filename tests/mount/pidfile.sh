#!/bin/bash
# SPDX-License-Identifier: MIT
# pidfile.sh - starting in the background: when `sectorfs -o pidfile=F
# STORE MNT` (no -f) returns, the daemon is up, or it has failed and said why.
#
# Proves: 20 starts in a row each return 0 with F already written, holding
# the pid of a live sectorfs (its /proc cmdline names STORE and MNT) that
# serves MNT, whose lock on the store names the same pid, whose stdio is
# /dev/null and whose working directory is /; after fusermount3 -u that
# process exits, F is gone and no temporary file is left beside it.  A
# caller that reads the command's output through a pipe gets end of file
# when it returns (the daemon does not keep the pipe open).  A relative F
# names a file in the directory sectorfs was started from.  A start that
# fails -- store already served by another daemon, mount point missing,
# pid file in a missing directory, unknown option -- exits non-zero with
# the reason on stderr and leaves no pid file, no mount and no process,
# the serving daemon untouched.  A bad sidecar's error line reaches the
# stderr of a background start, once.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout

M=$((1024 * 1024))
PIDF="$T/pid"
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"   # if a start that should fail mounted it

sidecar a 4M 512n thin 64K

# check_serving N PID: PID (from the pid file) is a live sectorfs serving $MNT.
check_serving() {
	local n=$1 pid=$2 args
	[[ $pid =~ ^[0-9]+$ ]] || fail "start $n: pid file holds '$pid', not a pid"
	kill -0 "$pid" 2>/dev/null || fail "start $n: pid $pid from the pid file is not running"
	args=$(tr '\0' ' ' < "/proc/$pid/cmdline")
	case "$args" in
	"$SECTORFS "*" $STORE $MNT ") ;;
	*) fail "start $n: pid $pid is not the sectorfs serving $MNT: $args" ;;
	esac
	mountpoint -q "$MNT" || fail "start $n: $MNT is not mounted"
	[ "$(stat -c %s "$MNT/a")" = $((4 * M)) ] || fail "start $n: image a not served"
	[ "$(lock_text)" = "pid $pid, mounted at $MNT" ] ||
		fail "start $n: store lock says '$(lock_text)', pid file says $pid"
}

# stop_bg N PID: unmount; PID exits within 10 s, taking its pid file with it.
stop_bg() {
	fusermount3 -u "$MNT" || fail "start $1: fusermount3 -u failed"
	wait_gone "$2" 10 || fail "start $1: daemon $2 still running 10 s after unmount"
	DPID=
	[ ! -e "$PIDF" ] || fail "start $1: pid file still there after the daemon exited"
	! ls "$PIDF".* >/dev/null 2>&1 || fail "start $1: temporary files left beside the pid file: $(ls "$PIDF".*)"
}

# ---- 20 background starts: everything holds right when the command returns ----
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
	stop_bg "$n" "$pid"
done
pass "20 background starts: each returns 0 with the pid file written, naming the live sectorfs that serves and holds the lock; stdio /dev/null, cwd /; unmount ends it and removes the pid file"

# ---- output read through a pipe: end of file when sectorfs returns ----
rm -f "$PIDF"
rc=0
timeout 20 bash -c 'set -o pipefail; "$1" -o pidfile="$2" "$3" "$4" 2>&1 | cat >"$5"' _ \
	"$SECTORFS" "$PIDF" "$STORE" "$MNT" "$T/piped.out" || rc=$?
[ -s "$PIDF" ] && DPID=$(cat "$PIDF")
[ $rc -ne 124 ] || fail "sectorfs 2>&1 | cat: still no end of file after 20 s (the daemon keeps the pipe open)"
[ $rc -eq 0 ] || fail "sectorfs 2>&1 | cat exited $rc: $(cat "$T/piped.out")"
check_serving pipe "$DPID"
stop_bg pipe "$DPID"
pass "sectorfs 2>&1 | cat: end of file as sectorfs returns, daemon serving"

# ---- a relative pid file ----
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

# ---- starts that fail ----
# bad_start WANT MOUNTPOINT ARGS...: a background start that must exit
# non-zero (not hang) with WANT on stderr, and leave no pid file, nothing
# mounted on MOUNTPOINT and no sectorfs whose command line names it.
bad_start() {
	local want=$1 mnt=$2 rc=0 left
	shift 2
	rm -f "$T/pid2"
	timeout 30 "$SECTORFS" -o pidfile="$T/pid2" "$@" >"$T/bad.out" 2>&1 || rc=$?
	left=$(sectorfs_pids "$mnt")
	[ -z "$left" ] || { DPID=${left%%$'\n'*}; fail "sectorfs $*: process(es) $left still running"; }
	[ $rc -ne 124 ] || fail "sectorfs $* hung"
	[ $rc -ne 0 ] || fail "sectorfs $* exited 0"
	grep -qF -- "$want" "$T/bad.out" || fail "sectorfs $*: expected '$want' on stderr, got: $(cat "$T/bad.out")"
	[ ! -e "$T/pid2" ] || fail "sectorfs $*: left a pid file"
	! ls "$T"/pid2.* >/dev/null 2>&1 || fail "sectorfs $*: left temporary files $(ls "$T"/pid2.*)"
	! mountpoint -q "$mnt" 2>/dev/null || fail "sectorfs $* left $mnt mounted"
	pass "fails: exit $rc: $(head -n1 "$T/bad.out" | sed "s|$T|\$T|g")"
}

rc=0
timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$STORE" "$MNT" 2>>"$T/daemon.log" || rc=$?
[ -s "$PIDF" ] || fail "no pid file (exit $rc)"
DPID=$(cat "$PIDF")
check_serving holder "$DPID"
bad_start "already served by another sectorfs (pid $DPID, mounted at $MNT)" "$MNT2" "$STORE" "$MNT2"
check_serving "holder after the refused start" "$DPID"
stop_bg holder "$DPID"

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

# start_logged WHAT N: a background start that must exit 0 with its stderr in $T/start.err
# (fail: "start WHAT exited ..."), then check_serving N.
start_logged() {
	rm -f "$PIDF"
	rc=0
	timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$STORE" "$MNT" 2>"$T/start.err" || rc=$?
	[ -s "$PIDF" ] && DPID=$(cat "$PIDF")
	[ $rc -eq 0 ] || fail "start $1 exited $rc: $(cat "$T/start.err")"
	check_serving "$2" "$DPID"
}

# ---- a bad sidecar, started in the background: its error on stderr ----
echo '{"size": "1M", "sector": "512x"}' > "$STORE/bad.json"
start_logged "with a bad sidecar" "bad sidecar"
[ ! -e "$MNT/bad" ] || fail "image of the bad sidecar is served"
lines=$(grep -F bad.json "$T/start.err")
[ "$(printf '%s\n' "$lines" | grep -c 512x)" -eq 1 ] ||
	fail "expected one line about bad.json and 512x on stderr, got: $(cat "$T/start.err")"
stop_bg "bad sidecar" "$DPID"
pass "bad sidecar, background start: on stderr: $lines"

# ---- what a crash left, repaired at a background start: said on stderr ----
rm -f "$STORE/bad.json"
touch "$STORE/.sectorfs/.tmp.4242.1"
printf 'grow 4194304 8388608 4194304 1\n' > "$STORE/.sectorfs/a.grow"
truncate -s 8M "$STORE/a"
start_logged "after a crash" "after a crash"
grep -qF "removed .sectorfs/.tmp.4242.1: a temporary file left by an interrupted write" "$T/start.err" ||
	fail "the removed temporary file is not reported on stderr: $(cat "$T/start.err")"
grep -qF "a: undid an interrupted grow from 4194304 to 8388608 bytes" "$T/start.err" ||
	fail "the undone grow is not reported on stderr: $(cat "$T/start.err")"
[ "$(stat -c %s "$STORE/a")" -eq $((4 * M)) ] || fail "the undone grow left a $(stat -c %s "$STORE/a") bytes long"
stop_bg "after a crash" "$DPID"
pass "repairs at a background start are reported on stderr"
