# SPDX-License-Identifier: MIT
# rename_workload.sh [fsync] - a crash explorer workload over ext4 on
# $SECTORFS_CRASH_DISK: replace file f (it holds "old") with "new" by
# writing f.tmp and renaming it over f, then note "committed" in
# $SECTORFS_CRASH_DIR (outside the disk), then unmount.  Without fsync it
# notes the change before anything is durable: the classic bug.  With
# fsync: f.tmp fsync'd before the rename, the directory after it.
set -e
D=$SECTORFS_CRASH_DIR
mkdir -p "$D/fs"
mount "$SECTORFS_CRASH_DISK" "$D/fs"
cd "$D/fs"
printf 'new\n' > f.tmp
if [ "${1:-}" = fsync ]; then sync f.tmp; fi
mv f.tmp f
if [ "${1:-}" = fsync ]; then sync .; fi
echo committed > "$D/committed"
cd /
umount "$D/fs"
