#!/bin/bash
# SPDX-License-Identifier: MIT
# loop.sh - images in the mount work as loop block devices, with a real
# filesystem on them, across a daemon restart.
#
# Proves: a 512e thin image and a 4kn zeroedthick image (256 MiB each),
# attached with `losetup -b <logical> --direct-io=on`, report the logical
# sector as the device's logical block size; mkfs.ext4 + mount + 50 files
# of random content + umount give a filesystem e2fsck -fn finds clean; after
# the daemon is stopped and started again, the same filesystems mount and
# every file has its checksum, and e2fsck is still clean; no I/O the loop
# driver sends is refused as misaligned; fstrim on ext4 over the thin
# image reaches the daemon as discards and frees blocks (skipped, with a
# message, only when the loop device offers no discard).  Every step runs
# under a timeout, so a hang (loop devices over direct_io FUSE files have
# hung on some kernels) fails the test instead of hanging CI.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_loop
requires_cmd mkfs.ext4 e2fsck blockdev mount umount timeout sha256sum

FS="$T/ext4"
mkdir -p "$FS"

# make_files NAME: 50 files of random content; their checksums in $T/NAME.sums.
make_files() {
	local i
	for ((i = 1; i <= 50; i++)); do
		head -c $(((RANDOM % 256 + 1) * 1024 + RANDOM % 4096)) /dev/urandom > "$FS/f$i" ||
			fail "writing $FS/f$i failed"
	done
	(cd "$FS" && sha256sum f*) > "$T/$1.sums" || fail "sha256sum failed"
	step "sync $FS" sync -f "$FS"
}

check_files() {
	local out
	out=$(cd "$FS" && timeout "$STEP_TIMEOUT" sha256sum --quiet -c "$T/$1.sums" 2>&1) ||
		fail "$1: files differ after restart: $out"
	[ "$(ls "$FS" | grep -c '^f[0-9]*$')" -eq 50 ] || fail "$1: expected 50 files, found $(ls "$FS")"
}

# The thin image gets 64K blocks, so files ext4 frees cover whole blocks.
sidecar d512e 256M 512e thin 64K
sidecar d4kn 256M 4kn zeroedthick 1M
IMAGES="d512e:512:4096 d4kn:4096:4096"
start_daemon

# ---- first life: mkfs, files, fsck ----
# first_life NAME SECTOR PSS (the loop device attached): geometry, mkfs, files, fstrim, fsck.
first_life() {
	local name=$1 lss=$2 pss=$3
	ss=$(timeout 10 blockdev --getss "$DEV")
	pbsz=$(timeout 10 blockdev --getpbsz "$DEV")
	size=$(timeout 10 blockdev --getsize64 "$DEV")
	dio=$(cat "/sys/block/${DEV#/dev/}/loop/dio" 2>/dev/null || echo "?")
	[ "$ss" = "$lss" ] || fail "$name: blockdev --getss says $ss, want $lss"
	[ "$size" = $((256 * 1024 * 1024)) ] || fail "$name: blockdev --getsize64 says $size"
	[ "$pbsz" -ge "$ss" ] || fail "$name: physical block size $pbsz < logical $ss"
	pass "$name on $DEV: logical $ss; physical reported $pbsz (image's is $pss); direct I/O $dio"

	step "mkfs.ext4 on $name" mkfs.ext4 -q -F "$DEV"
	mount_loop ext4
	make_files "$name"

	if [ "$name" = d512e ]; then
		# fstrim: free a big file, trim, the daemon must see discards and free blocks.
		qdir="/sys/block/${DEV#/dev/}/queue"
		if [ "$(cat "$qdir/discard_max_bytes" 2>/dev/null || echo 0)" -eq 0 ]; then
			echo "# skip fstrim check: $DEV has no discard support (discard_max_bytes 0)"
		else
			requires_cmd fstrim
			step "write junk" dd if=/dev/urandom of="$FS/junk" bs=1M count=32 conv=fsync status=none
			step "sync $FS" sync -f "$FS"
			step "first fstrim" fstrim "$FS"      # trims what mkfs and the files left free
			d0=$(stats_key "$name" discards)
			a0=$(stats_key "$name" allocated_blocks)
			rm "$FS/junk"
			step "sync $FS" sync -f "$FS"
			step "fstrim" fstrim -v "$FS"
			d1=$(stats_key "$name" discards)
			a1=$(stats_key "$name" allocated_blocks)
			[ "$d1" -gt "$d0" ] || fail "fstrim: stats discards did not rise ($d0 -> $d1)"
			# 32 MiB freed = 512 blocks of 64K; ext4 may keep a few for metadata
			[ $((a0 - a1)) -ge 400 ] ||
				fail "fstrim after deleting 32 MiB freed only $((a0 - a1)) blocks ($a0 -> $a1)"
			pass "fstrim on ext4 over the thin image: discards $d0 -> $d1, allocated_blocks $a0 -> $a1"
		fi
	fi

	release_loop "$name" ext4 "first mount"
	pass "$name: mkfs.ext4, 50 files, umount, e2fsck -fn clean, detach"
}
each_loop first_life $IMAGES

# ---- restart the daemon, second life: the files are there ----
restart_daemon
# second_life NAME SECTOR (attached again): the same sector size, the files, fsck clean.
second_life() {
	local name=$1 lss=$2
	[ "$(timeout 10 blockdev --getss "$DEV")" = "$lss" ] || fail "$name: logical sector changed after restart"
	mount_loop ext4
	check_files "$name"
	release_loop "$name" ext4 "after restart"
	pass "$name after restart: 50 checksums match, e2fsck -fn clean"
}
each_loop second_life $IMAGES
loops_gone
