#!/bin/bash
# SPDX-License-Identifier: MIT
# startup.sh - what a start tells its user, and the mount points it refuses.
#
# Proves: started in the background (no -f), sectorfs has printed on
# stderr by the time it returns 0 one line for each image it refuses (a
# sidecar with a misspelt key names the file and the key) and the summary
# "sectorfs: serving N images from STORE at MNT (K refused: see above)";
# with nothing refused the summary has no parenthesis, and a foreground
# start prints it too.  A mount point that is not an empty directory, that
# is not a directory, or that is already a mount point (even an empty-
# looking one: another sectorfs, of another store, serving there) is
# refused before anything is mounted: exit non-zero, a message naming it
# and the way out (-o nonempty), no mount, no process left, the mount that
# was there untouched.  -o nonempty mounts over a non-empty directory and
# over a mount point (the mount below comes back at unmount), and is taken
# by sectorfs, not handed to libfuse (which no longer knows it).

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout

PIDF="$T/pid"

sidecar a 4M 512n thin 64K
sidecar b 8M 4kn thin
printf '{ "size": "1M", "sectr": "4kn" }\n' > "$STORE/typo.json"

# bg_start ERRFILE ARGS...: a background start with the pid file; sets RC and DPID.
bg_start() {
	local err=$1
	shift
	rm -f "$PIDF"
	RC=0
	timeout 30 "$SECTORFS" -o pidfile="$PIDF" "$@" 2>"$err" || RC=$?
	[ -s "$PIDF" ] && DPID=$(cat "$PIDF")
	return 0
}

# stop_bg MNTPOINT: unmount; the daemon exits within 10 s.
stop_bg() {
	fusermount3 -u "$1" || fail "fusermount3 -u $1 failed"
	wait_gone "$DPID" 10 || fail "daemon $DPID still running 10 s after unmounting $1"
	DPID=
}

# ---- the report of a background start ----
bg_start "$T/start.err" "$STORE" "$MNT"
[ $RC -eq 0 ] || fail "background start with a misspelt sidecar exited $RC: $(cat "$T/start.err")"
mountpoint -q "$MNT" || fail "$MNT not mounted after sectorfs returned 0"
line=$(grep -F typo.json "$T/start.err")
[ "$(printf '%s\n' "$line" | grep -c sectr)" -eq 1 ] ||
	fail "expected one line naming typo.json and the key 'sectr' on stderr, got: $(cat "$T/start.err")"
want="sectorfs: serving 2 images from $STORE at $MNT (1 refused: see above)"
grep -qxF "$want" "$T/start.err" || fail "no summary '$want' on stderr, got: $(cat "$T/start.err")"
[ "$(grep -c '^sectorfs: serving' "$T/start.err")" -eq 1 ] || fail "the summary is printed more than once: $(cat "$T/start.err")"
[ "$(grep -n typo.json "$T/start.err" | head -n1 | cut -d: -f1)" -lt "$(grep -n '^sectorfs: serving' "$T/start.err" | cut -d: -f1)" ] ||
	fail "the summary comes before the line it points at: $(cat "$T/start.err")"
[ -e "$MNT/a" ] && [ -e "$MNT/b" ] && [ ! -e "$MNT/typo" ] || fail "served images are not a and b: $(ls "$MNT")"
stop_bg "$MNT"
pass "background start, misspelt sidecar: exit 0; stderr: $(sed "s|$T|\$T|g" "$T/start.err" | tr '\n' '|')"

rm "$STORE/typo.json"
bg_start "$T/start.err" "$STORE" "$MNT"
[ $RC -eq 0 ] || fail "background start exited $RC: $(cat "$T/start.err")"
want="sectorfs: serving 2 images from $STORE at $MNT"
grep -qxF "$want" "$T/start.err" || fail "no summary '$want' on stderr, got: $(cat "$T/start.err")"
stop_bg "$MNT"
pass "nothing refused: '$(sed "s|$T|\$T|g" "$T/start.err")'"

start_daemon
grep -qxF "sectorfs: serving 2 images from $STORE at $MNT" "$T/daemon.log" ||
	fail "foreground start: no summary in its log: $(cat "$T/daemon.log")"
stop_daemon
pass "foreground start prints the summary too"

# ---- mount points that are refused ----
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"

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

# -o nonempty: mounts over the directory's contents, which come back at unmount
bg_start "$T/start.err" -o nonempty "$STORE" "$MNT2"
[ $RC -eq 0 ] || fail "-o nonempty on a non-empty directory exited $RC: $(cat "$T/start.err")"
mountpoint -q "$MNT2" || fail "-o nonempty: $MNT2 not mounted"
[ -e "$MNT2/a" ] && [ ! -e "$MNT2/note" ] || fail "-o nonempty: $MNT2 does not show the store: $(ls "$MNT2")"
grep -q "unknown option" "$T/start.err" && fail "-o nonempty reached libfuse: $(cat "$T/start.err")"
stop_bg "$MNT2"
[ "$(cat "$MNT2/note")" = hello ] || fail "-o nonempty: the directory's own file is gone after unmount"
pass "-o nonempty mounts over a non-empty directory; its file is back after unmount"
rm "$MNT2/note"

# an empty-looking mount point: another sectorfs, of an empty store, without .stats
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
refused "already a mount point" "$MNT2"
kill -0 $D2 || fail "the daemon already serving $MNT2 died"
mountpoint -q "$MNT2" || fail "$MNT2 is no longer mounted"
[ -z "$(ls -A "$MNT2")" ] || fail "$MNT2 shows another store now: $(ls -A "$MNT2")"
refused "already a mount point" "$MNT2" -o nostats

# -o nonempty stacks on it; unmounting the top one shows the one below again
bg_start "$T/start.err" -o nonempty "$STORE" "$MNT2"
[ $RC -eq 0 ] || fail "-o nonempty on a mount point exited $RC: $(cat "$T/start.err")"
[ -e "$MNT2/a" ] || fail "-o nonempty on a mount point: the store is not shown: $(ls -A "$MNT2")"
stop_bg "$MNT2"
mountpoint -q "$MNT2" || fail "the mount below is gone"
kill -0 $D2 || fail "the daemon below died"
[ -z "$(ls -A "$MNT2")" ] || fail "after unmounting the top mount $MNT2 shows: $(ls -A "$MNT2")"
fusermount3 -u "$MNT2" || fail "fusermount3 -u $MNT2 (the second store) failed"
wait_gone $D2 10 || fail "the daemon of the second store still runs after unmount"
pass "-o nonempty stacks a mount on a mount point; unmounting it shows the one below"
