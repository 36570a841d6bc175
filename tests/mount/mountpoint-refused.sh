#!/bin/bash
# SPDX-License-Identifier: MIT
# mountpoint-refused.sh - a mount point that is not an empty directory,
# that is not a directory, or that is already a mount point (even an
# empty-looking one: another sectorfs, of another store, serving there) is
# refused before anything is mounted, in the background and in the
# foreground: exit non-zero, a message naming it and the way out (-o
# nonempty), no mount, no process left, the mount that was there
# untouched.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K

# refused WANT MOUNTPOINT [ARGS...]: a start, background and foreground, on
# MOUNTPOINT must exit non-zero, say WANT and MOUNTPOINT (and, unless
# NO_HINT=1, that -o nonempty mounts there anyway), mount nothing new there
# and leave no sectorfs of its own running.
refused() {
	local want=$1 mnt=$2 mode rc before after left
	shift 2
	before=$(grep -c " $mnt " /proc/self/mounts)
	for mode in background foreground; do
		rc=0
		if [ $mode = foreground ]; then
			timeout 30 "$SECTORFS" -f "$@" "$STORE" "$mnt" >"$T/bad.out" 2>&1 || rc=$?
		else
			timeout 30 "$SECTORFS" "$@" "$STORE" "$mnt" >"$T/bad.out" 2>&1 || rc=$?
		fi
		[ $rc -ne 124 ] || fail "$mode start on $mnt hung"
		left=$(sectorfs_pids "$STORE"$'\n')   # this store, not store2
		[ -z "$left" ] || { DPID=${left%%$'\n'*}; fail "$mode start on $mnt: process(es) $left still running"; }
		[ $rc -ne 0 ] || fail "$mode start on $mnt exited 0: $(cat "$T/bad.out")"
		grep -qF -- "$want" "$T/bad.out" || fail "$mode start on $mnt: expected '$want', got: $(cat "$T/bad.out")"
		grep -qF -- "$mnt" "$T/bad.out" || fail "$mode start on $mnt: the message does not name it: $(cat "$T/bad.out")"
		[ "${NO_HINT:-0}" = 1 ] || grep -qF -- "-o nonempty" "$T/bad.out" || fail "$mode start on $mnt: the message does not say -o nonempty: $(cat "$T/bad.out")"
		after=$(grep -c " $mnt " /proc/self/mounts)
		[ "$after" = "$before" ] || fail "$mode start on $mnt: $after mounts there, $before before"
	done
	pass "refused, exit $rc: $(head -n1 "$T/bad.out" | sed "s|$T|\$T|g")"
}

echo hello > "$MNT2/note"
refused "not empty" "$MNT2"
: > "$T/plainfile"
NO_HINT=1 refused "not a directory" "$T/plainfile"
rm "$MNT2/note"

# an empty-looking mount point: another sectorfs, of an empty store, without .stats
mount_store2
refused "already a mount point" "$MNT2"
kill -0 $D2 || fail "the daemon already serving $MNT2 died"
mountpoint -q "$MNT2" || fail "$MNT2 is no longer mounted"
[ -z "$(ls -A "$MNT2")" ] || fail "$MNT2 shows another store now: $(ls -A "$MNT2")"
refused "already a mount point" "$MNT2" -o nostats
fusermount3 -u "$MNT2" || fail "fusermount3 -u $MNT2 (the second store) failed"
wait_gone $D2 10 || fail "the daemon of the second store still runs after unmount"
