# SPDX-License-Identifier: MIT
# lib-start.sh - what the tests of starting the daemon share: a start in
# the background (no -f) with a pid file, the checks that the process it
# names is the sectorfs serving the mount, its stop, a start that must
# fail, and a second store served on a second mount point.  Source it
# after lib.sh; the tests that use check_serving declare an image a of
# 4M:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-start.sh"
#   sidecar a 4M 512n thin 64K

M=$((1024 * 1024))
PIDF="$T/pid"
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"   # if a start that should fail mounted it

# bg_start ERRFILE ARGS...: a background start with the pid file, its
# stderr in ERRFILE; sets RC, and DPID from the pid file (for lib.sh's
# cleanup).
bg_start() {
	local err=$1
	shift
	rm -f "$PIDF"
	RC=0
	timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$@" 2>"$err" || RC=$?
	[ -s "$PIDF" ] && DPID=$(cat "$PIDF")
	return 0
}

# check_serving WHAT PID: PID (from the pid file) is a live sectorfs
# serving $STORE at $MNT, whose lock on the store names it.
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

# start_logged WHAT N: a background start of $STORE at $MNT that must exit
# 0 with its stderr in $T/start.err (fail: "start WHAT exited ..."), then
# check_serving N.
start_logged() {
	bg_start "$T/start.err" "$STORE" "$MNT"
	[ $RC -eq 0 ] || fail "start $1 exited $RC: $(cat "$T/start.err")"
	check_serving "$2" "$DPID"
}

# stop_bg WHAT [MOUNTPOINT]: unmount MOUNTPOINT ($MNT); the daemon DPID
# exits within 10 s, taking its pid file with it, no temporary file left
# beside it.
stop_bg() {
	local mnt=${2:-$MNT}
	fusermount3 -u "$mnt" || fail "start $1: fusermount3 -u $mnt failed"
	wait_gone "$DPID" 10 || fail "start $1: daemon $DPID still running 10 s after unmounting $mnt"
	DPID=
	[ ! -e "$PIDF" ] || fail "start $1: pid file still there after the daemon exited"
	! ls "$PIDF".* >/dev/null 2>&1 || fail "start $1: temporary files left beside the pid file: $(ls "$PIDF".*)"
}

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

# mount_store2: another sectorfs, of an empty store $T/store2, without
# .stats, on $MNT2 (an empty-looking mount point); its pid in D2, killed
# at exit if still running.
mount_store2() {
	local i
	STORE2="$T/store2"
	mkdir -p "$STORE2"
	"$SECTORFS" -f -o nostats,pidfile="$T/pid2" "$STORE2" "$MNT2" 2>>"$T/daemon2.log" &
	D2=$!
	on_exit "kill $D2"
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/pid2" ] && mountpoint -q "$MNT2" && break
		kill -0 $D2 2>/dev/null || fail "the daemon of the second store exited: $(cat "$T/daemon2.log")"
		sleep 0.1
	done
	mountpoint -q "$MNT2" || fail "the daemon of the second store did not mount $MNT2"
	[ -z "$(ls -A "$MNT2")" ] || fail "$MNT2 (an empty store without .stats) is not empty: $(ls -A "$MNT2")"
}
