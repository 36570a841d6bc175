# SPDX-License-Identifier: MIT
# rename_check.sh - the check of rename_workload.sh: the ext4 mounts; f
# holds "new" when the workload noted "committed", else "old" or "new"
# (never nothing, never a mix).  Exit 1 saying what f holds.
D=$SECTORFS_CRASH_DIR
mkdir -p "$D/fs"
mount "$SECTORFS_CRASH_DISK" "$D/fs" 2>"$D/mount.err" || { echo "ext4 does not mount: $(cat "$D/mount.err")"; exit 1; }
c=$(cat "$D/fs/f" 2>&1)
umount "$D/fs"
if [ -e "$D/committed" ]; then
	[ "$c" = new ] || { echo "the rename was committed, yet f holds '$c'"; exit 1; }
else
	[ "$c" = old ] || [ "$c" = new ] || { echo "f holds '$c'"; exit 1; }
fi
echo "f holds '$c'"
