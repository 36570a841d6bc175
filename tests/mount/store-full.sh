#!/bin/bash
# SPDX-License-Identifier: MIT
# store-full.sh - a thin image larger than the free space of its store
# behaves like an over-committed thin LUN: when the backing filesystem is
# full, writes that need new space fail with ENOSPC to the client, nothing
# else breaks, and writing works again once space is freed (SPEC.md:
# provisioning "thin: a block's space is taken on its first write";
# "fallocate PUNCH_HOLE|KEEP_SIZE is a discard (thin: frees whole blocks)";
# statfs reports the store's filesystem).
#
# The store is a small filesystem mounted on STORE: first a 48 MiB ext4
# (a loop-mounted image file in $T, no reserved blocks), then, when the
# kernel allows, a 48 MiB tmpfs (no ZERO_RANGE there: the daemon zeroes by
# writing).  In it: a 256 MiB thin 4kn image with 2M blocks, so that each
# 1 MiB first write also zeroes the other half of its block, and an 8 MiB
# file that is not an image.  Through the mount, with GNU dd oflag=direct:
#  - sequential 1 MiB writes of random data until the store is full: dd
#    stops with "No space left on device" after some N MiB (0 < N < 96),
#    at a first write (N even: the second half of a block is an overwrite);
#    statfs through the mount shows the store full;
#  - the daemon keeps serving: the mount is up, the stats files read, the
#    first N MiB read back exactly, the block whose write failed and those
#    after it read as zeros (a failed first write allocates nothing:
#    allocated_blocks = N/2);
#  - a first write to a far block fails with ENOSPC too, while an
#    overwrite of an allocated block with conv=fsync succeeds: it needs
#    no new space, and what was written before is already allocated;
#  - deleting the other file in the store frees space: writing from MiB N
#    on works again, until the store is full again (ENOSPC at N2);
#  - a discard through the mount (fallocate -p on the first 16 MiB) frees
#    those 8 blocks (allocated_blocks drops by 8, the store's free space
#    grows by about 16 MiB): the range reads zeros and 8 more MiB can be
#    written, with fsync, at N2;
#  - after a clean restart everything reads back as left, and the daemon
#    exits 0 on unmount (FUSE is unmounted before the backing filesystem);
#  - on a fresh store and image, writes until ENOSPC without any fsync,
#    then a clean unmount: the daemon exits 0, and after a restart the N
#    MiB dd reported written read back (doc/design.md, Guarantees: a clean
#    unmount makes every write before it durable).
# A failed expectation that does not spoil the steps after it (the fsync
# and the two restart checks) is printed as "not ok - ..." and the test
# goes on; it fails at the end.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
requires_cmd mkfs.ext4 mount umount fallocate timeout cmp

M=$((1024 * 1024))
SRCMB=96

on_exit unmount_store

head -c $((SRCMB * M)) /dev/urandom > "$T/src" || fail "making $T/src failed"
head -c $((SRCMB * M)) /dev/urandom > "$T/src2" || fail "making $T/src2 failed"


# mount_store KIND: a fresh 48 MiB ext4 (loop-mounted image file) or tmpfs on STORE.
mount_store() {
	case $1 in
	ext4)
		rm -f "$T/ext4.img"
		truncate -s 48M "$T/ext4.img" || fail "truncate $T/ext4.img failed"
		mkfs.ext4 -q -F -m 0 "$T/ext4.img" || fail "mkfs.ext4 $T/ext4.img failed"
		timeout 20 mount -o loop "$T/ext4.img" "$STORE" || fail "mount -o loop $T/ext4.img $STORE failed"
		;;
	tmpfs)
		timeout 20 mount -t tmpfs -o size=48M sfs-test "$STORE" || fail "mount -t tmpfs -o size=48M on $STORE failed"
		;;
	esac
}

# same MNT_OFF_MB COUNT_MB FILE [FILE_OFF_MB]: MiBs of image IMG equal FILE's.
same() {
	cmp -s <(timeout 30 dd if="$MNT/$IMG" iflag=direct bs=1M skip="$1" count="$2" status=none) \
		<(dd if="$3" bs=1M skip="${4:-$1}" count="$2" status=none)
}

# avail: bytes available in the store, as statfs through the mount reports them.
avail() { echo $(($(stat -f -c '%a * %S' "$MNT"))); }

# zeros OFF_MB COUNT_MB: MiBs of image IMG read as zeros.
zeros() {
	timeout 30 dd if="$MNT/$IMG" iflag=direct bs=1M skip="$1" count="$2" status=none |
		cmp -s -n $(($2 * M)) - /dev/zero
}

# write_until_full WHAT START_MB: write src into image IMG from START_MB on
# until ENOSPC; sets N.
write_until_full() {
	local rc=0
	LC_ALL=C timeout 60 dd if="$T/src" of="$MNT/$IMG" bs=1M oflag=direct conv=notrunc \
		skip="$2" seek="$2" count=$((SRCMB - $2)) 2>"$T/dd.err" || rc=$?
	[ $rc -ne 0 ] || fail "$1: wrote $((SRCMB - $2)) MiB from block $2 into a store that cannot hold them"
	[ $rc -ne 124 ] || fail "$1: dd hung writing into the full store"
	grep -q "No space left on device" "$T/dd.err" || fail "$1: dd failed without ENOSPC: $(cat "$T/dd.err")"
	N=$(sed -n 's/^\([0-9]*\)+0 records out$/\1/p' "$T/dd.err")
	[ -n "$N" ] || fail "$1: cannot read dd's record count: $(cat "$T/dd.err")"
	N=$(($2 + N))
}

# scenario KIND: mount the small store (ext4 or tmpfs), run it all, unmount.
scenario() {
	local kind=$1 n1 n2 ab av0 av1 d0
	mount_store "$kind"
	IMG=big
	sidecar big 256M 4kn thin 2M
	head -c $((8 * M)) /dev/urandom > "$STORE/filler" || fail "$kind: writing the 8 MiB filler failed"
	start_daemon
	# (the image is 256 MiB, the store 48 MiB)

	# ---- fill it ----
	write_until_full "$kind" 0
	n1=$N
	[ "$n1" -gt 0 ] && [ "$n1" -lt "$SRCMB" ] || fail "$kind: $n1 MiB written before ENOSPC, expected 0 < N < $SRCMB"
	av0=$(avail)
	[ "$av0" -lt $((2 * M)) ] || fail "$kind: store full, but statfs through the mount shows $av0 bytes available"
	pass "$kind store: dd stops with 'No space left on device' after $n1 MiB of a 256 MiB thin image; statfs through the mount shows it full"

	mountpoint -q "$MNT" || fail "$kind: the mount is gone after ENOSPC"
	ab=$(stats_key big allocated_blocks)
	[ -n "$ab" ] || fail "$kind: stats unreadable after ENOSPC"
	grep -q '^' "$MNT/.stats/big" || fail "$kind: text stats unreadable after ENOSPC"
	same 0 "$n1" "$T/src" || fail "$kind: the $n1 MiB written before ENOSPC do not read back as written"
	[ $((n1 % 2)) -eq 0 ] || fail "$kind: ENOSPC at MiB $n1, the second half of an allocated 2M block: it needed no new space"
	zeros "$n1" 16 || fail "$kind: the block whose write failed (MiB $n1) or those after it do not read as zeros"
	[ "$ab" -eq $((n1 / 2)) ] || fail "$kind: allocated_blocks $ab after $n1 MiB written and one failed first write, expected $((n1 / 2))"
	pass "$kind: the daemon keeps serving: stats read, $n1 MiB read back intact, the failed block reads zeros, allocated_blocks $ab"

	expect_errno "No space left on device" dd if="$T/src" of="$MNT/$IMG" bs=1M oflag=direct conv=notrunc seek=200 count=1 status=none
	pass "$kind: a first write to a far block fails with ENOSPC"
	if dd if="$T/src2" of="$MNT/$IMG" bs=1M oflag=direct conv=notrunc,fsync count=1 status=none 2>"$T/dd.err"; then
		pass "$kind: an overwrite of the allocated block 0, with fsync, works in the full store"
	else
		not_ok "$kind: overwrite of the allocated block 0 + fsync in the full store failed: $(cat "$T/dd.err")"
	fi
	same 0 1 "$T/src2" || fail "$kind: the overwritten block 0 does not read back"
	same 1 $((n1 - 1)) "$T/src" || fail "$kind: blocks 1..$((n1 - 1)) changed"

	# ---- free space outside the image: writing works again ----
	rm -f "$STORE/filler"
	sync -f "$STORE"
	write_until_full "$kind, after deleting a file in the store" "$n1"
	n2=$N
	[ "$n2" -ge $((n1 + 4)) ] || fail "$kind: after freeing 8 MiB in the store only $((n2 - n1)) MiB more could be written"
	same "$n1" $((n2 - n1)) "$T/src" || fail "$kind: MiB $n1..$((n2 - 1)), written after the store was freed, do not read back"
	pass "$kind: after deleting an 8 MiB file in the store, $((n2 - n1)) MiB more written (MiB $n1..$((n2 - 1))), then ENOSPC again"

	# ---- discard through the mount frees whole blocks ----
	ab=$(stats_key big allocated_blocks)
	d0=$(stats_key big discards)
	av0=$(avail)
	timeout 30 fallocate -p -o 0 -l $((16 * M)) "$MNT/$IMG" || fail "$kind: fallocate -p -o 0 -l 16M $MNT/big failed"
	sync -f "$STORE"
	av1=$(avail)
	[ "$(stats_key big discards)" -gt "$d0" ] || fail "$kind: fallocate -p not counted as a discard"
	[ "$(stats_key big allocated_blocks)" -eq $((ab - 8)) ] ||
		fail "$kind: discard of 8 whole blocks: allocated_blocks $ab -> $(stats_key big allocated_blocks), expected $((ab - 8))"
	[ $((av1 - av0)) -ge $((15 * M)) ] ||
		fail "$kind: discard of 16 MiB freed only $((av1 - av0)) bytes in the store ($av0 -> $av1 available)"
	zeros 0 16 || fail "$kind: the discarded first 16 MiB do not read as zeros"
	LC_ALL=C timeout 60 dd if="$T/src" of="$MNT/$IMG" bs=1M oflag=direct conv=notrunc,fsync \
		skip="$n2" seek="$n2" count=8 status=none 2>"$T/dd.err" ||
		fail "$kind: writing 8 MiB at MiB $n2 after discarding 16 MiB failed: $(cat "$T/dd.err")"
	same 16 $((n2 + 8 - 16)) "$T/src" || fail "$kind: MiB 16..$((n2 + 7)) do not read back as written"
	pass "$kind: fallocate -p of 16 MiB through the mount frees 8 blocks ($((av1 - av0)) bytes in the store); 8 MiB written at MiB $n2; all data intact"

	# ---- a clean restart keeps it all ----
	stop_daemon
	start_daemon
	zeros 0 16 && same 16 $((n2 + 8 - 16)) "$T/src" ||
		fail "$kind: after a clean restart the image does not read back as written"
	[ "$(stats_key big allocated_blocks)" -eq $(((n2 + 8 - 16) / 2)) ] ||
		fail "$kind: after a clean restart allocated_blocks is $(stats_key big allocated_blocks), expected $(((n2 + 8 - 16) / 2))"
	stop_daemon
	timeout 20 umount "$STORE" || fail "$kind: umount $STORE failed after the daemon stopped"
	pass "$kind: clean restart: MiB 0..15 (discarded) read zeros, MiB 16..$((n2 + 7)) as written; daemon exits 0, store unmounted"
}

# full_then_restart KIND: fill a fresh image in a fresh store until ENOSPC
# (no fsync), then unmount cleanly: the daemon must exit 0 and, once
# started again, every MiB written before ENOSPC reads back.  (An
# unmount after writes makes them durable: doc/design.md, Guarantees.)
full_then_restart() {
	local kind=$1 rc=0
	mount_store "$kind"
	IMG=fresh
	sidecar fresh 256M 4kn thin 2M
	start_daemon
	write_until_full "$kind, fresh image" 0
	[ "$N" -gt 0 ] || fail "$kind: ENOSPC at the first write into an empty 48 MiB store"
	fusermount3 -u "$MNT" || fail "$kind: fusermount3 -u failed"
	wait "$DPID" || rc=$?
	DPID=
	if [ $rc -eq 0 ]; then
		pass "$kind: clean unmount of a full store after $N MiB written without fsync: daemon exits 0"
	else
		not_ok "$kind: clean unmount of a full store after $N MiB written without fsync: daemon exit status $rc, log: $(tail -n 1 "$T/daemon.log")"
	fi
	start_daemon
	if cmp -s <(timeout 30 dd if="$MNT/fresh" iflag=direct bs=1M count="$N" status=none) \
		<(dd if="$T/src" bs=1M count="$N" status=none); then
		pass "$kind: after the restart the $N MiB written before ENOSPC read back"
	else
		not_ok "$kind: $N MiB written (dd reported success) before ENOSPC and a clean unmount do not read back after restart (allocated_blocks $(stats_key fresh allocated_blocks), expected $((N / 2)))"
	fi
	stop_daemon
	timeout 20 umount "$STORE" || fail "$kind: umount $STORE failed after the daemon stopped"
}

KINDS=ext4
mkdir -p "$T/probe"
if mount -t tmpfs -o size=1M sfs-probe "$T/probe" 2>/dev/null; then
	umount "$T/probe"
	KINDS="ext4 tmpfs"
else
	echo "# skip the tmpfs store: cannot mount tmpfs here"
fi
for kind in $KINDS; do
	scenario "$kind"
	full_then_restart "$kind"
done
fail_if_not_ok
