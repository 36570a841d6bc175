# SPDX-License-Identifier: MIT
# lib-loop.sh - loop devices on the images of a mount, and the filesystems
# made on them, for the mount tests that use them.  Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-loop.sh"
#   requires_loop
#
# Every device it attaches and every filesystem it mounts is undone by
# lib.sh's EXIT trap unless the test released it first.

# attach_loop FILE SECTOR: a loop device with direct I/O and SECTOR-byte
# logical blocks, in $DEV; detached at exit unless detach_loop did it.
attach_loop() {
	DEV=$(timeout 20 losetup -f --show -b "$2" --direct-io=on "$1") ||
		fail "losetup -b $2 --direct-io=on $1 failed"
	on_exit "losetup -d $DEV"
	[ -b "$DEV" ] || fail "losetup gave no block device: '$DEV'"
	[ "$(timeout 10 blockdev --getss "$DEV")" = "$2" ] || fail "$1: $DEV logical block size is not $2"
}

# detach_loop DEV: detach now, and drop the exit-time detach (by then the
# device number may belong to someone else).
detach_loop() {
	local i
	step "detach $1" losetup -d "$1"
	for i in "${!_cleanups[@]}"; do
		[ "${_cleanups[$i]}" = "losetup -d $1" ] && _cleanups[i]=:
	done
}

# each_loop FN SPEC...: for each SPEC "name:sector:extra", attach a loop
# device on $MNT/name with sector-byte logical blocks (in $DEV), then run
# FN name sector extra.
each_loop() {
	local fn=$1 spec name lss extra
	shift
	for spec in "$@"; do
		IFS=: read -r name lss extra <<< "$spec"
		attach_loop "$MNT/$name" "$lss"
		"$fn" "$name" "$lss" "$extra"
	done
}

# fsck_clean FSTYPE WHEN: the filesystem on $DEV (ext4 or xfs) checks clean, read-only.
fsck_clean() {
	case $1 in
	ext4) step "e2fsck -fn $DEV ($2)" e2fsck -fn "$DEV" ;;
	xfs) step "xfs_repair -n $DEV ($2)" xfs_repair -n "$DEV" ;;
	*) fail "fsck_clean: no check for filesystem '$1'" ;;
	esac
}

# mount_loop FSTYPE: mount the FSTYPE filesystem on $DEV at $FS; unmounted
# at exit unless release_loop did it.
mount_loop() {
	step "mount $1 on $DEV" mount -t "$1" "$DEV" "$FS"
	on_exit "mountpoint -q $FS && { timeout 20 umount $FS || umount -l $FS; }"
}

# release_loop NAME FSTYPE WHEN: umount $FS, check the filesystem on $DEV
# clean, detach $DEV, and fail if the daemon refused any I/O on image NAME
# as misaligned.
release_loop() {
	local bad
	step "umount $FS" umount "$FS"
	fsck_clean "$2" "$1, $3"
	detach_loop "$DEV"
	bad=$(stats_key "$1" misaligned_rejected)
	[ "$bad" = 0 ] || fail "$1, $3: the daemon refused $bad I/Os of $2 as misaligned"
}

# loops_gone: stop the daemon (it must exit 0); no loop device is left on a file under $T.
loops_gone() {
	stop_daemon
	losetup -a | grep -q "$T" && fail "loop devices still attached: $(losetup -a | grep "$T")"
	pass "no loop device left on the store; daemon exits 0"
}
