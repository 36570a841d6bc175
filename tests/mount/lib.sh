# SPDX-License-Identifier: MIT
# lib.sh - what every mount test shares.  Source it first thing:
#
#   . "$(dirname "$0")/lib.sh"
#   requires_fuse
#   sidecar disk 8M 4kn thin
#   start_daemon
#   ...
#
# It makes one temporary directory per test ($T) with a store ($STORE)
# and a mount point ($MNT), and one EXIT trap that undoes, in reverse
# order, everything the test set up: mounts (fusermount3 -u), loop
# devices it attached (losetup -d), the daemon it started (by PID), the
# temporary directory.  Exit 77 means "skipped", with the reason printed.
# The helpers for loop devices and the filesystems on them are in
# lib-loop.sh, which a test that needs them sources after this file.

set -u

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# The programs under test, one name each (requires_built checks them):
SECTORFS="$top_builddir/fs/sectorfs"                # the daemon
SECTORFS_IMG="$top_builddir/tools/sectorfs-img"     # create, info, check, repair, resize, map an image
SECTORFS_STAT="$top_builddir/tools/sectorfs-stat"   # a mount's stats as a table or JSON lines
SECTORFS_BENCH="$top_builddir/tools/sectorfs-bench" # sweeps, probes and scale runs on a disk
TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "/tmp/sectorfs-$TEST_NAME.XXXXXX")
STORE="$T/store"
MNT="$T/mnt"
mkdir -p "$STORE" "$MNT"
DPID=
_cleanups=()
NOT_OK=()

# Register a command to run at exit (last registered runs first).
on_exit() { _cleanups+=("$*"); }

_cleanup() {
	local rc=$? i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[$i]}" >/dev/null 2>&1 || true
	done
	if mountpoint -q "$MNT" 2>/dev/null; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || true
	fi
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill "$DPID" 2>/dev/null; sleep 0.5; kill -9 "$DPID" 2>/dev/null || true
	fi
	if { [ $rc -eq 0 ] || [ $rc -eq 77 ]; } && [ ${#NOT_OK[@]} -ne 0 ]; then
		echo "FAIL: $TEST_NAME: ${#NOT_OK[@]} check(s) failed (the 'not ok' lines above)" >&2
		rc=1
	fi
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		for f in "$T/daemon.log" ${FAIL_LOGS:-}; do
			[ -s "$f" ] && { echo "--- $(basename "$f") ---"; cat "$f"; }
		done
	fi
	rm -rf "$T"
	exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

skip() { echo "SKIP: $TEST_NAME: $*"; exit 77; }
fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }

# not_ok WHAT: a failed check that lets the rest of the test run, so that
# the checks after it still report; it prints "not ok - WHAT" and the test
# fails at its end (fail_if_not_ok, or the EXIT trap when the test exits
# 0, or skips: a check that failed is never reported as a skip).
not_ok() { echo "not ok - $*"; NOT_OK+=("$*"); }
# fail_if_not_ok: fail now when any not_ok was counted.
fail_if_not_ok() {
	[ ${#NOT_OK[@]} -eq 0 ] || fail "${#NOT_OK[@]} check(s) failed (the 'not ok' lines above)"
}

# expect_eq GOT WANT WHAT: GOT must be the string WANT; WHAT names it in the failure.
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# log_mark: remember where the daemon's log ends; log_new prints what it
# logged since; logged_since TEXT WHAT fails, naming WHAT, unless a line
# logged since holds TEXT.
LOG_MARK=0
log_mark() { LOG_MARK=$({ wc -l < "$T/daemon.log"; } 2>/dev/null || echo 0); }
log_new() { tail -n +$((LOG_MARK + 1)) "$T/daemon.log"; }
logged_since() { log_new | grep -qF -- "$1" || fail "$2: no log line with '$1'; logged since: $(log_new)"; }

requires_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
# requires_built PROGRAM...: fail (not skip: make check builds them all)
# when one of the programs is not built.
requires_built() {
	local p
	for p in "$@"; do [ -x "$p" ] || fail "not built: $p"; done
}

requires_cmd() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "needs $c"; done
}
requires_fuse() {
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	requires_cmd fusermount3 mountpoint
	requires_built "$SECTORFS"
}
requires_loop() {
	requires_root
	requires_cmd losetup
	[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control missing)"
}
# GNU dd: busybox dd silently retries O_DIRECT I/O without O_DIRECT.
requires_gnu_dd() {
	dd --version 2>/dev/null | grep -q coreutils || skip "needs GNU coreutils dd"
}

# sidecar NAME SIZE SECTOR PROVISIONING [BLOCK_SIZE] [ZERO_OFFLOAD]
sidecar() {
	local extra=""
	[ -n "${5:-}" ] && extra="$extra, \"block_size\": \"$5\""
	[ -n "${6:-}" ] && extra="$extra, \"zero_offload\": $6"
	printf '{ "size": "%s", "sector": "%s", "provisioning": "%s"%s }\n' \
		"$2" "$3" "$4" "$extra" > "$STORE/$1.json"
}

# run_alone: the rest of this test runs while no other shell test runs, in
# this tree or another on the machine: the shared flock on
# /tmp/sectorfs-tests.alone.lock that tests/run-test.sh took for it (make
# check runs every shell test so) turns exclusive, held until the test
# exits; run by hand, the test takes that lock exclusive itself.  The tests
# that measure time (device profiles, the experiments, eager zeroing's
# latencies, the bench) call it, so that no fio load, QEMU guest or other
# daemon shares the CPUs with their figures.
run_alone() {
	local lock=/tmp/sectorfs-tests.alone.lock wait_s=${SFS_TESTS_LOCK_WAIT:-1800}

	requires_cmd flock
	if [ -z "${SFS_TESTS_LOCK_FD:-}" ]; then
		[ -e "$lock" ] || { : >>"$lock" && chmod 0666 "$lock"; } 2>/dev/null
		exec {SFS_TESTS_LOCK_FD}<"$lock" || fail "cannot open $lock"
	fi
	flock -x -w "$wait_s" "$SFS_TESTS_LOCK_FD" || fail "$lock: no exclusive lock in $wait_s s"
}

# start_daemon [sectorfs options...]: mount $STORE on $MNT, wait until ready
# (READY_TIMEOUT seconds, 10).  DAEMON_WRAPPER, an array, runs the daemon
# under another program (valgrind); FAIL_LOGS names more files to print
# when the test fails.  SECTORFS_IO_URING=on|off|auto in the environment
# gives every such daemon -o io_uring=VALUE before the test's own options
# (.ci/run's first pass sets off, its second pass of the mount tests on),
# and SECTORFS_SERVE=loop|threads likewise -o serve=VALUE.
DAEMON_WRAPPER=()
TRANSPORT_OPTS=()
[ -n "${SECTORFS_IO_URING:-}" ] && TRANSPORT_OPTS=(-o "io_uring=$SECTORFS_IO_URING")
[ -n "${SECTORFS_SERVE:-}" ] && TRANSPORT_OPTS+=(-o "serve=$SECTORFS_SERVE")
start_daemon() {
	rm -f "$T/pid"
	"${DAEMON_WRAPPER[@]}" "$SECTORFS" -f -o pidfile="$T/pid" "${TRANSPORT_OPTS[@]}" "$@" "$STORE" "$MNT" \
		2>>"$T/daemon.log" &
	DPID=$!
	local i
	for ((i = 0; i < ${READY_TIMEOUT:-10} * 10; i++)); do
		if [ -s "$T/pid" ] && mountpoint -q "$MNT"; then
			[ "$(cat "$T/pid")" = "$DPID" ] || fail "pid file says $(cat "$T/pid"), daemon is $DPID"
			return 0
		fi
		kill -0 "$DPID" 2>/dev/null || { wait "$DPID"; fail "daemon exited with $? before the mount was ready"; }
		sleep 0.1
	done
	fail "mount not ready after ${READY_TIMEOUT:-10} s"
}

# wait_daemon WHAT: the daemon must exit 0 within STOP_TIMEOUT seconds (30) of WHAT.
wait_daemon() {
	local rc=0 i
	for ((i = 0; i < ${STOP_TIMEOUT:-30} * 10; i++)); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DPID" 2>/dev/null && fail "daemon still running ${STOP_TIMEOUT:-30} s after $1"
	wait "$DPID" || rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "daemon exited with $rc after $1"
}

# stop_daemon: unmount and require the daemon to exit 0.
stop_daemon() {
	fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
	wait_daemon unmount
}

# restart_daemon [OPTS...]: stop the daemon (it must exit 0) and start it again with OPTS.
restart_daemon() {
	stop_daemon
	start_daemon "$@"
	pass "daemon stopped (exit 0) and started again"
}

# wait_gone PID SECONDS: wait until PID has exited; 1 if it is still there.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# lock_text: what the store's lock file says (the holder's description).
lock_text() { head -n1 "$STORE/.sectorfs/lock" 2>/dev/null; }

# sectorfs_pids WORD: pids of the running $SECTORFS processes whose command
# line has an argument containing WORD (a path of this test's $T).
sectorfs_pids() {
	local p args
	for p in /proc/[0-9]*; do
		args=$( { tr '\0' '\n' < "$p/cmdline"; } 2>/dev/null) || continue
		[ "${args%%$'\n'*}" = "$SECTORFS" ] || continue
		case "$args" in *"$1"*) echo "${p#/proc/}" ;; esac
	done
}

# kill9_daemon: what a crash looks like: SIGKILL, then drop the dead mount.
kill9_daemon() {
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || true
}

# stat_val OPTION FILE: one field of stat(1) (e.g. %s size, %o blksize, %b blocks).
stat_val() { stat -c "$1" "$2"; }

# stats_key NAME KEY: a top-level number from $MNT/.stats/NAME.json.
stats_key() {
	tr -d ' \n' < "$MNT/.stats/$1.json" | grep -o "\"$2\":[0-9.]*" | head -n1 | cut -d: -f2
}

# expect_errno TEXT CMD...: CMD must fail and say TEXT (e.g. "Invalid argument").
expect_errno() {
	local want=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "expected '$want' from: $* (it succeeded)"
	fi
	case "$out" in
	*"$want"*) ;;
	*) fail "expected '$want' from: $*; got: $out" ;;
	esac
}

# step WHAT CMD...: run CMD under a timeout of $STEP_TIMEOUT s (60); fail
# naming WHAT when it fails or hangs (a hung loop device must not hang CI).
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
step() {
	local what=$1 rc=0
	shift
	timeout -k 5 "$STEP_TIMEOUT" "$@" >"$T/step.out" 2>&1 || rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		cat "$T/step.out" >&2
		fail "$what: hung (no answer in $STEP_TIMEOUT s): $*"
	fi
	if [ $rc -ne 0 ]; then
		cat "$T/step.out" >&2
		fail "$what: exit $rc: $*"
	fi
}

# unmount_store: for tests whose STORE is a filesystem mounted for them:
# the FUSE mount and the daemon go first, then STORE.  Register it with
# on_exit after whatever STORE sits on (a loop device), so it runs before.
unmount_store() {
	local i
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" || fusermount3 -uz "$MNT"
	fi
	if [ -n "$DPID" ]; then
		for ((i = 0; i < 50; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$DPID" 2>/dev/null
	fi
	if mountpoint -q "$STORE"; then
		timeout 20 umount "$STORE" || umount -l "$STORE"
	fi
}
