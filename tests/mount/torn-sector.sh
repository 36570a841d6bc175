#!/bin/bash
# SPDX-License-Identifier: MIT
# torn-sector.sh - a write of a sector is atomic to its readers, as on a
# real drive (databases' torn-page detection relies on it), also where the
# daemon's backing I/O goes through the host page cache.
#
# tests/mount/torn_race writes two patterns in turn over one sector of an
# image through the mount (O_DIRECT pwrite, one thread) while another
# thread preads it (O_DIRECT, READS times, 100,000): every read must be
# wholly one pattern or the other (the first is also the initial
# contents), and the reader must have seen both.  Cases:
#  a) -o buffered, the store on /tmp: a 512n image, 512-byte writes and
#     reads; a 512e image, whole 4096-byte physical sectors written and
#     read in 512-byte pieces;
#  b) the store an ext4 on a loop device with 4096-byte sectors (losetup
#     -b 4096), default options: a 512e image, whose 4096-byte transfers
#     go O_DIRECT and whose 512-byte ones through the page cache (its
#     direct I/O needs 4096-byte alignment): 512-byte writes and reads of
#     one sector, then 4096-byte physical sector writes against 512-byte
#     reads inside them.
# Part b needs root and loop devices; without them the test skips (77)
# after part a.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_cmd timeout

RACE="$top_builddir/tests/mount/torn_race"
READS=${READS:-100000}
[ -x "$RACE" ] || fail "not built: $RACE (make check builds it)"

# race WHAT IMG OFFSET WSIZE RSIZE: one torn_race run; its counts are
# printed, and a run with torn reads (or none that raced) is a not_ok,
# so that every case reports its counts before the test fails.
race() {
	local out rc=0
	out=$(timeout -k 5 600 "$RACE" "$MNT/$2" "$3" "$4" "$5" "$READS" 2>"$T/race.err") || rc=$?
	case $rc in
	0) pass "$1: $out"; return 0 ;;
	1) not_ok "$1: torn reads ($out)" ;;
	124 | 137) not_ok "$1: no answer in 600 s ($out)" ;;
	*) not_ok "$1: torn_race exit $rc ($out)" ;;
	esac
	head -n 5 "$T/race.err" >&2
}

# verdict: fail naming every case that failed so far.
verdict() {
	[ ${#NOT_OK[@]} -eq 0 ] && return 0
	printf '%s\n' "${NOT_OK[@]}" >&2
	fail "${#NOT_OK[@]} case(s) failed: a write of a sector is not atomic to its readers"
}

# no_loop: why part b cannot run here (empty when it can).
no_loop() {
	local c
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; return; }
	[ -e /dev/loop-control ] || { echo "no loop devices (/dev/loop-control missing)"; return; }
	for c in losetup mkfs.ext4 mount umount blockdev; do
		command -v "$c" >/dev/null 2>&1 || { echo "needs $c"; return; }
	done
}

# backing_io IMG WANT: the text stats say the image's backing I/O is WANT.
backing_io() {
	grep -q "^backing I/O *$2" "$MNT/.stats/$1" ||
		fail "$1: the stats say $(grep -i '^backing' "$MNT/.stats/$1"), expected $2"
}

# ---- a) -o buffered ----

sidecar n512 8M 512n thin 64K
sidecar e512 8M 512e thin 64K
start_daemon -o buffered
backing_io n512 buffered
race "-o buffered, 512n, 512-byte writes and reads of one sector" n512 $((3 * 65536 + 1536)) 512 512
race "-o buffered, 512e, 4096-byte writes, 512-byte reads inside them" e512 $((3 * 65536 + 8192)) 4096 512
stop_daemon

# ---- b) a store whose direct I/O needs 4096-byte alignment ----

why=$(no_loop)
if [ -n "$why" ]; then
	verdict
	skip "part b (a store on a 4096-byte-sector loop device): $why"
fi
STORE="$T/store4k"
mkdir -p "$STORE"
truncate -s 64M "$T/disk4k" || fail "truncate $T/disk4k failed"
attach_loop "$T/disk4k" 4096
on_exit unmount_store
step "mkfs.ext4 on $DEV" mkfs.ext4 -q -F "$DEV"
step "mount $DEV" mount "$DEV" "$STORE"
sidecar e512 8M 512e thin 64K
start_daemon
backing_io e512 O_DIRECT
race "4096-byte-sector store, 512e, 512-byte writes and reads of one sector" e512 $((3 * 65536 + 1536)) 512 512
race "4096-byte-sector store, 512e, 4096-byte writes, 512-byte reads inside them" e512 $((3 * 65536 + 8192)) 4096 512
stop_daemon
verdict
