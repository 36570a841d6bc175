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
# lib-loop.sh, which a test that needs them sources after this file;
# the daemon's (start_daemon, stop_daemon and their kin) in lib-daemon.sh,
# which this file sources.

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
FAILED_WHY=
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
		# said again last: a log shown by its head and tail still shows why
		[ -n "$FAILED_WHY" ] && echo "FAIL (again, after the logs): $TEST_NAME: $FAILED_WHY" >&2
	fi
	rm -rf "$T"
	exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

skip() { echo "SKIP: $TEST_NAME: $*"; exit 77; }
fail() { FAILED_WHY="$*"; echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
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

# device_profile FILE NAME CHANNELS 'SIZE:US ...' 'SIZE:US ...' FLUSH_US [MORE]: a device profile
# (doc/profiles.md) in FILE, its source this test: the service time of a read, then of a write,
# of each size, the flush's, and MORE, its other keys ('"zero_offload_mb_s": 60, ...').
device_profile() {
	local kind list p sep keys=
	for kind in read write; do
		if [ "$kind" = read ]; then list=$4; else list=$5; fi
		keys+=", \"$kind\": [" sep=
		for p in $list; do keys+="$sep{\"size\": \"${p%%:*}\", \"us\": ${p#*:}}" sep=", "; done
		keys+="]"
	done
	printf '{ "name": "%s", "source": "%s.sh", "channels": %s%s, "flush_us": %s%s }\n' \
		"$2" "$TEST_NAME" "$3" "$keys" "$6" "${7:+, $7}" > "$1"
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

# The daemon: start_daemon, wait_daemon, stop_daemon, restart_daemon,
# kill9_daemon, wait_gone, sectorfs_pids, lock_text, unmount_store.
. "$(dirname "${BASH_SOURCE[0]}")/lib-daemon.sh"

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
