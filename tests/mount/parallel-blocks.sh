#!/bin/bash
# SPDX-License-Identifier: MIT
# parallel-blocks.sh - "I/O to different blocks runs in parallel"
# (SPEC.md), which is also what lets the first-write races of
# first-write-race.sh race in the daemon at all: a 4K write to an
# allocated block must not wait for a slow first write (64M of zeros) to
# another block of the same image.  Control: the same pair on two images
# must overlap, else this host cannot show it and the check is skipped.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

# in_write PID: PID (a dd with bs=4k) is inside its write(2) to the mount
# (/proc/PID/syscall: fd 0x1, count 0x1000, whatever the architecture).
in_write() {
	local fd len
	read -r _ fd _ len _ 2>/dev/null < "/proc/$1/syscall" || return 1
	[ "$fd" = 0x1 ] && [ "$len" = 0x1000 ]
}

# overlaps IMG_B OFF_B: start a first write to a fresh 64M block of image
# par-a (zero offload off: the daemon writes 64M of zeros, tens of ms),
# wait until its dd is inside write(2), then do a 4K write to IMG_B at
# OFF_B.  True if the first write was still in flight when that returned.
PAR_NEXT=1
overlaps() {
	local a i r=1
	dd if="$T/w" of="$MNT/par-a" bs=4k seek=$((PAR_NEXT * 16384 + 5)) oflag=direct conv=notrunc status=none &
	a=$!
	PAR_NEXT=$((PAR_NEXT + 1))
	for ((i = 0; i < 2000; i++)); do in_write $a && break; done
	if in_write $a; then
		dd if="$T/w" of="$MNT/$1" bs=4k seek="$2" oflag=direct conv=notrunc status=none || fail "$1: write failed"
		in_write $a && r=0
	fi
	wait $a || fail "par-a: first write failed"
	return $r
}

ok=0
sidecar par-a 1G 4kn thin 64M false
sidecar par-b 1G 4kn thin 64M false
start_daemon
head -c 4096 /dev/urandom > "$T/w"
dd if="$T/w" of="$MNT/par-a" bs=4k seek=1 oflag=direct conv=notrunc status=none || fail "par-a: write failed"
dd if="$T/w" of="$MNT/par-b" bs=4k seek=1 oflag=direct conv=notrunc status=none || fail "par-b: write failed"
for _ in 1 2 3; do
	if overlaps par-b 3; then ok=1; break; fi
done
if [ $ok -eq 0 ]; then
	stop_daemon
	skip "not even writes to two images overlapped here"
fi
ok=0
for _ in 1 2 3; do
	if overlaps par-a 3; then ok=1; break; fi
done
stop_daemon
[ $ok -eq 1 ] || fail "a 4K write to an allocated block of an image waited, 3 times out of 3, for a first write \
to another block of the same image to finish (the same pair of writes on two images overlaps): writes to one image \
are serialised, not parallel (SPEC.md: I/O to different blocks runs in parallel), and the rounds of \
first-write-race.sh never raced in the daemon.  The kernel takes the inode lock for every FUSE direct_io write unless the open reply sets \
FOPEN_PARALLEL_DIRECT_WRITES (fuse_file_info.parallel_direct_writes, libfuse >= 3.15)"
pass "a 4K write does not wait for a slow first write to another block of the same image: writes run in parallel"
