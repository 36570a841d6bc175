# SPDX-License-Identifier: MIT
# ext4_check.sh CHECKER - a crash explorer check (sectorfs-bench crash
# --loop): after the cut, mount the ext4 on $SECTORFS_CRASH_DISK (its
# journal replayed), run python3 CHECKER (fsync_check.py or
# sqlite_check.py, given DIR and the workload's LOG), unmount, e2fsck -fn.
# Exit 0 when the filesystem mounts, nothing the workload logged as
# durable is lost, the database (if any) checks ok and e2fsck is clean;
# else 1, the last line saying why.
D=$SECTORFS_CRASH_DIR
mkdir -p "$D/fs"
touch "$D/log"
mount "$SECTORFS_CRASH_DISK" "$D/fs" 2>"$D/mount.err" || { echo "ext4 does not mount: $(cat "$D/mount.err")"; exit 1; }
python3 "$(dirname "$0")/$1" "$D/fs/w" "$D/log" > "$D/check.out"
rc=$?
umount "$D/fs" || { echo "cannot unmount"; exit 1; }
read -r durable lost integrity < "$D/check.out"
[ $rc = 0 ] || { echo "$1 failed (exit $rc)"; exit 1; }
e2fsck -fn "$SECTORFS_CRASH_DISK" > "$D/fsck.out" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$D/fsck.out"; echo "e2fsck -fn: exit $rc"; exit 1; }
[ "$lost" = 0 ] || { echo "$lost of $durable durable items lost or wrong"; exit 1; }
case ${integrity:-ok} in
ok) ;;
empty) [ "$durable" = 0 ] || { echo "no database left, $durable rows committed"; exit 1; } ;;
*) echo "PRAGMA integrity_check: $integrity"; exit 1 ;;
esac
echo "$durable durable items intact; e2fsck clean"
