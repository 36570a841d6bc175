#!/bin/bash
# SPDX-License-Identifier: MIT
# lock-file.sh - sectorfs-img check and the daemon agree on the store's
# lock file, whatever is there (one rule: sfs_store_lock_check).
#
# For a FIFO, a directory, a symbolic link and a socket put where
# STORE/.sectorfs/lock belongs: check STORE answers within 20 s (a FIFO
# opened to read would hang it), exits 4 and names what is there; the
# daemon refuses to serve the store, naming the same, and leaves no mount
# or process; check --repair removes it (1); then the daemon serves the
# store, and check says so.  A regular lock file of a dead holder is no
# problem for either.
. "$(dirname "$0")/lib.sh"
requires_fuse

requires_built "$SECTORFS_IMG"
sidecar a 1M 512n thin 64K
start_daemon
stop_daemon
LOCK="$STORE/.sectorfs/lock"

# chk RC ARGS...: sectorfs-img check ARGS within 20 s, exit RC; output in $T/out
chk() {
	local want=$1 rc=0
	shift
	timeout 20 "$SECTORFS_IMG" check "$@" >"$T/out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "check $* hung with $what as the lock file"
	[ $rc -eq "$want" ] || fail "check $* exited $rc with $what as the lock file, want $want: $(cat "$T/out")"
}

chk 0 "$STORE"
pass "a regular lock file left by a holder that is gone: check 0"

for what in FIFO directory "symbolic link" socket; do
	rm -rf "$LOCK"
	case $what in
	FIFO) mkfifo "$LOCK" ;;
	directory) mkdir "$LOCK" ;;
	"symbolic link") ln -s /etc/hostname "$LOCK" ;;
	socket) python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$LOCK" ||
		skip "cannot make a socket (python3)" ;;
	esac
	chk 4 "$STORE"
	grep -qE "lock( file)? is a $what" "$T/out" || fail "check did not name the $what: $(cat "$T/out")"
	rc=0
	timeout 20 "$SECTORFS" -f "$STORE" "$MNT" >"$T/d.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "the daemon hung with a $what as the lock file"
	[ $rc -ne 0 ] || fail "the daemon served the store with a $what as the lock file"
	grep -qE "lock( file)? is a $what" "$T/d.out" ||
		fail "the daemon's refusal does not name the $what: $(cat "$T/d.out")"
	mountpoint -q "$MNT" && fail "a mount was left by the refused daemon"
	chk 1 --repair "$STORE"
	grep -qF "repaired: removed .sectorfs/lock" "$T/out" || fail "--repair did not say it removed it: $(cat "$T/out")"
	start_daemon
	chk 0 "$STORE"
	grep -qF "served by sectorfs" "$T/out" || fail "check does not see the daemon: $(cat "$T/out")"
	stop_daemon
	pass "a $what as the lock file: check 4 and the daemon refuses, both naming it; --repair removes it, then served"
done
