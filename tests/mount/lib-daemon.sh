# SPDX-License-Identifier: MIT
# lib-daemon.sh - the daemon of a mount test: started on $STORE and $MNT
# and waited for, stopped (it must exit 0), restarted, killed with -9,
# found by its command line; and a store that is a filesystem of its own
# unmounted after the daemon.  lib.sh sources it (every mount test uses
# it); it uses lib.sh's $T, $STORE, $MNT, $SECTORFS, DPID and fail.

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
		if [ -s "$T/pid" ] && timeout -k 1 "${READY_TIMEOUT:-10}" mountpoint -q "$MNT"; then   # a daemon that answers nothing must not hang the test
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
