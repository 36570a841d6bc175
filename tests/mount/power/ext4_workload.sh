# SPDX-License-Identifier: MIT
# ext4_workload.sh OPTS WRITER ARG... - a crash explorer workload
# (sectorfs-bench crash --loop): mount the ext4 on $SECTORFS_CRASH_DISK
# with -o OPTS at $SECTORFS_CRASH_DIR/fs, run python3 WRITER (a script of
# this directory) with DIR ($SECTORFS_CRASH_DIR/fs/w) and LOG
# ($SECTORFS_CRASH_DIR/log, outside the disk) and the ARGs, unmount.
set -e
opts=$1 writer=$2
shift 2
D=$SECTORFS_CRASH_DIR
mkdir -p "$D/fs"
mount -o "$opts" "$SECTORFS_CRASH_DISK" "$D/fs"
mkdir -p "$D/fs/w"
python3 "$(dirname "$0")/$writer" "$D/fs/w" "$D/log" "$@"
umount "$D/fs"
