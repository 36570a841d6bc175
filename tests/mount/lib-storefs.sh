# SPDX-License-Identifier: MIT
# lib-storefs.sh - for the tests whose store must fill up: a small
# filesystem of its own mounted on STORE, an ext4 (a loop-mounted image
# file in $T, no reserved blocks) or a tmpfs.  Source it after lib.sh and
# register lib.sh's unmount_store with on_exit:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-storefs.sh"
#   on_exit unmount_store

# mount_store KIND SIZE: a fresh ext4 or tmpfs (KIND) of SIZE (as "64M") on STORE.
mount_store() {
	case $1 in
	ext4)
		rm -f "$T/ext4.img"
		truncate -s "$2" "$T/ext4.img" || fail "truncate $T/ext4.img failed"
		mkfs.ext4 -q -F -m 0 "$T/ext4.img" || fail "mkfs.ext4 $T/ext4.img failed"
		timeout 20 mount -o loop "$T/ext4.img" "$STORE" || fail "mount -o loop $T/ext4.img $STORE failed"
		;;
	tmpfs)
		timeout 20 mount -t tmpfs -o size="$2" sfs-test "$STORE" || fail "mount -t tmpfs -o size=$2 on $STORE failed"
		;;
	esac
}
