#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-namespace.sh - "the namespace survives a crash too: after kill -9
# at any instant, each name is as it was before its last create, grow,
# rename or unlink, or as it is after it, never in between; sectorfs-img
# check is clean on every image; the next start finishes or rolls back
# what was interrupted, removes the daemon's own temporary files" and
# "fsync: everything written before is durable" (SPEC.md).
#
# Each round (CRASH_ROUNDS, 100; SEED printed, settable; ROUNDS is read
# too, so that ROUNDS=100 asks for 100): four threads of
# tests/mount/crashns work through the mount for 20-300 ms, each on six
# names of its own (t0-a .. t0-f ...): create (O_CREAT|O_EXCL, ftruncate
# 64K, pwrite, fsync, close), overwrite + fsync, grow, rename onto a free
# name, rename over an image, renameat2 RENAME_NOREPLACE, unlink; then
# the daemon gets SIGKILL.  Before the restart, sectorfs-img check STORE
# must exit 0: what the start will finish or undo (an interrupted grow,
# unlink, rename, a create cut before its backing file) is named as
# pending, and every image is judged as that start will leave it.
# Remounted (new images thin, zeroedthick or
# eagerzeroedthick by turns, 512n, 64K blocks): every name is as before
# or as after its thread's operation in flight (present or not, size,
# and each sector: every fsynced one as written, the one write not yet
# fsynced old or new per sector); no write's data under two names; no
# file in STORE or STORE/.sectorfs but the image, sidecar and map of the
# names present and the lock; sectorfs-img check clean; every name in the
# listing opens, every name absent from it can be created.  The next
# round starts from what was found.  A failure prints the seed, the round,
# every thread's operation in flight, what was allowed and what was
# found; the test goes on and ends with "N rounds, F failures" (a problem
# that stays, such as a leftover file, counts once).
. "$(dirname "$0")/lib.sh"
requires_fuse

CRASHNS="$top_builddir/tests/mount/crashns/crashns"
[ -x "$CRASHNS" ] || fail "not built: $CRASHNS (make check builds it)"
requires_built "$SECTORFS_IMG"

SEED=${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
ROUNDS=${CRASH_ROUNDS:-${ROUNDS:-100}}
echo "# SEED=$SEED CRASH_ROUNDS=$ROUNDS (set SEED to replay the choices of operations and kill times)"
PROVS=(thin zeroedthick eagerzeroedthick)
STATE="$T/model"
r=0

# lib.sh's fail, naming the round and printing the failures counted so far
fail() {
	echo "FAIL: $TEST_NAME: round $r (SEED=$SEED): $*" >&2
	[ -s "$STATE" ] && "$CRASHNS" summary "$STATE"
	exit 1
}

# crashns ARGS...: 0 and 1 (failures found, already printed) go on; 2 and
# anything else is the test itself broken.
crashns() {
	local rc=0
	"$CRASHNS" "$@" || rc=$?
	[ $rc -le 1 ] || fail "crashns $1 exited $rc"
	return $rc
}

# mount_round R: the store mounted with round R's defaults for new images.
mount_round() {
	start_daemon -o "sector=512n,provisioning=${PROVS[$(($1 % 3))]},block_size=64K"
}

crashns init "$STATE" "$SEED"
mount_round 0
start=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
	# stderr off while the daemon dies, or bash reports "Killed"
	exec 3>&2 2>/dev/null
	rc=0
	"$CRASHNS" run "$STATE" "$MNT" "$DPID" $r 2>&3 || rc=$?
	wait "$DPID"
	drc=$?
	exec 2>&3 3>&-
	DPID=
	[ $rc -le 1 ] || fail "crashns run exited $rc"
	rc=$drc
	# 137: the SIGKILL; anything else means it died before, of itself
	[ $rc -eq 137 ] || crashns fail "$STATE" daemon "the daemon exited with $rc before the kill -9" || true
	fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || true
	mountpoint -q "$MNT" && fail "the dead mount is still there after fusermount3 -uz"
	bad=0
	# before the restart: check STORE exits 0, naming what the start will do as pending
	crashns precheck "$STATE" "$STORE" "$SECTORFS_IMG" || bad=1
	log_mark
	mount_round $r
	crashns verify "$STATE" "$MNT" "$STORE" "$SECTORFS_IMG" || bad=1
	if [ $bad -eq 1 ]; then
		echo "    what the daemon logged when it started again (round $r):"
		log_new | head -n 30 | sed 's/^/      | /'
	fi
done
echo "# $ROUNDS rounds in $((SECONDS - start)) s"

# A clean unmount at the end: the daemon must exit 0.
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
rc=0
for ((i = 0; i < 300; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$DPID" 2>/dev/null; then
	crashns fail "$STATE" daemon "the daemon still runs 30 s after the final unmount" || true
else
	wait "$DPID" || rc=$?
	DPID=
	[ $rc -eq 0 ] || crashns fail "$STATE" daemon "the daemon exited with $rc after the final unmount" || true
fi

"$CRASHNS" summary "$STATE"
