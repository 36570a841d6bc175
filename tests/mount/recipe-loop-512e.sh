#!/bin/bash
# SPDX-License-Identifier: MIT
# recipe-loop-512e.sh - the 512e loop-device recipe of doc/recipes.md run
# for real, with the commands it gives (checked first that the page still
# gives them):
#
#  loop-512e  losetup -b 512 --direct-io=on over 512e images: the device's
#             physical block size is reported (512: the loop driver gives
#             its logical size); mkfs.xfs -s size=4096, then a workload of
#             files, fsynced appends and a 16 MiB write: no read-modify-
#             write (rmw_writes 0, mkfs included) and no refused I/O; the
#             same with plain mkfs.xfs, measured and reported; mkfs.ext4 on
#             512 MiB (4 KiB blocks) and with -b 4096 on 256 MiB: no rmw;
#             plain mkfs.ext4 on 256 MiB (1 KiB blocks), measured.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recipes.sh"
. "$(dirname "$0")/lib-loop.sh"

# 512e images; mkfs.xfs needs 300 MiB.
sidecar x4k 512M 512e thin
sidecar x512 512M 512e thin
sidecar e4big 512M 512e thin
sidecar e4b 256M 512e thin
sidecar e4small 256M 512e thin
recipe_serve

# ----------------------------------------------------------- loop, 512e

# fs_workload DIR: files, appends each fsynced (journal/log writes), a
# 16 MiB write with fsync.
fs_workload() {
	local i
	for ((i = 1; i <= 30; i++)); do
		head -c $((RANDOM * 4 + RANDOM % 4096)) /dev/urandom > "$1/f$i" || fail "writing $1/f$i failed"
	done
	for ((i = 1; i <= 20; i++)); do
		echo "line $i" >> "$1/log" || fail "appending to $1/log failed"
		step "fsync $1/log" sync "$1/log"
	done
	step "16 MiB write" dd if=/dev/urandom of="$1/big" bs=1M count=16 conv=fsync status=none
}

# loop_case NAME FSTYPE MKFS...: attach NAME with -b 512, mkfs, mount, the
# workload, umount, detach.  Sets PBSZ, GEOM (sector or block size the
# filesystem took), RMW_MKFS and W_MKFS (read-modify-writes and writes of
# mkfs), RMW_WORK and W_WORK (of the workload) and REJ (refused I/Os).
loop_case() {
	local name=$1 fstype=$2 dir=$T/fs-$1
	shift 2
	mkdir -p "$dir"
	attach_loop "$MNT/$name" 512
	PBSZ=$(timeout 10 blockdev --getpbsz "$DEV")
	echo reset > "$MNT/.stats/$name"
	step "$* on $name" "$@" "$DEV"
	if [ "$fstype" = xfs ]; then
		GEOM=$(timeout 20 xfs_db -r -c 'sb 0' -c 'p sectsize' "$DEV" | sed -n 's/^sectsize = //p')
	else
		GEOM=$(timeout 20 dumpe2fs -h "$DEV" 2>/dev/null | sed -n 's/^Block size: *//p')
	fi
	RMW_MKFS=$(stats_key "$name" rmw_writes) W_MKFS=$(stats_key "$name" writes)
	REJ=$(stats_key "$name" misaligned_rejected)
	echo reset > "$MNT/.stats/$name"
	step "mount $DEV ($name)" mount -t "$fstype" "$DEV" "$dir"
	on_exit "timeout 20 umount $dir || umount -l $dir"
	fs_workload "$dir"
	step "umount $dir" umount "$dir"
	detach_loop "$DEV"
	RMW_WORK=$(stats_key "$name" rmw_writes) W_WORK=$(stats_key "$name" writes)
	REJ=$((REJ + $(stats_key "$name" misaligned_rejected)))
	[ "$REJ" = 0 ] || fail "$name ($*): $REJ I/Os refused as misaligned"
}

recipe_loop() {
	local m
	doc_says loop-512e 'losetup -f --show -b 512 --direct-io=on' 'mkfs.xfs -s size=4096' 'mkfs.ext4 -b 4096'
	if [ "$(id -u)" -ne 0 ]; then
		skip_recipe loop-512e "needs root"
		return
	fi
	if [ ! -e /dev/loop-control ]; then
		skip_recipe loop-512e "no loop devices (/dev/loop-control missing)"
		return
	fi
	if m=$(missing losetup blockdev mount umount sync mkfs.xfs xfs_db mkfs.ext4 dumpe2fs); then
		skip_recipe loop-512e "needs $m"
		return
	fi
	local x4k x512 e4big e4b e4small

	loop_case x4k xfs mkfs.xfs -q -f -s size=4096
	[ "$GEOM" = 4096 ] || fail "mkfs.xfs -s size=4096: sector size '$GEOM'"
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.xfs -s size=4096 on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	x4k="mkfs.xfs -s size=4096: rmw 0 (mkfs and workload)"
	local pbsz=$PBSZ

	loop_case x512 xfs mkfs.xfs -q -f
	x512="plain mkfs.xfs: sector $GEOM, rmw $RMW_MKFS of $W_MKFS writes at mkfs, $RMW_WORK of $W_WORK in the workload"
	[ "$GEOM" = 512 ] && [ "$RMW_WORK" = 0 ] &&
		note "plain mkfs.xfs with 512-byte sectors made no read-modify-write in this workload"

	loop_case e4big ext4 mkfs.ext4 -q -F
	[ "$GEOM" = 4096 ] || fail "mkfs.ext4 on 512 MiB: block size '$GEOM', want 4096"
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.ext4 (4 KiB blocks) on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	e4big="mkfs.ext4 on 512 MiB: block $GEOM, rmw 0"

	loop_case e4b ext4 mkfs.ext4 -q -F -b 4096
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.ext4 -b 4096 on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	e4b="mkfs.ext4 -b 4096 on 256 MiB: rmw 0"

	loop_case e4small ext4 mkfs.ext4 -q -F
	e4small="plain mkfs.ext4 on 256 MiB: block $GEOM, rmw $RMW_MKFS of $W_MKFS writes at mkfs, $RMW_WORK of $W_WORK in the workload"

	pass "loop -b 512 over 512e: physical block size reported $pbsz; $x4k; $x512; $e4big; $e4b; $e4small;" \
		"no I/O refused"
}

recipe_loop
stop_daemon
pass "daemon exits 0"
