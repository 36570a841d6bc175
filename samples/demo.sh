#!/bin/bash
# SPDX-License-Identifier: MIT
# demo.sh - a tour of sectorfs on the sample store (run by "make demo").
#
#   demo.sh SECTORFS SAMPLES
#
# Copies the sidecars of SAMPLES into a store in a temporary directory,
# mounts it (the daemon creates the backing files the sidecars declare),
# does direct I/O on the 4kn and the 512e disk, shows a
# misaligned write being refused, puts ext4 on a loop device with the
# image's sector size, shows the statistics, and takes everything down
# again, the temporary store with it: SAMPLES is left as it was.  Needs
# root for the loop device and the ext4 mount.
set -euo pipefail

SECTORFS=${1:?usage: demo.sh SECTORFS SAMPLES}
SAMPLES=$(cd "${2:?usage: demo.sh SECTORFS SAMPLES}" && pwd)
WORK=$(mktemp -d /tmp/sectorfs-demo.XXXXXX)
STORE=$WORK/store
MNT=$WORK/mnt
FSMNT=$WORK/ext4
mkdir -p "$STORE" "$MNT" "$FSMNT"
cp "$SAMPLES"/boot.json "$SAMPLES"/data.json "$SAMPLES"/redo.json "$STORE"/
DPID= LOOP=

cleanup() {
	set +e
	mountpoint -q "$FSMNT" && umount "$FSMNT"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; fi
	[ -n "$DPID" ] && wait "$DPID"
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B= N=; fi
say() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "Mount a store made of the sample sidecars ($STORE)"
"$SECTORFS" -f -o pidfile="$WORK/pid" "$STORE" "$MNT" 2>"$WORK/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -s "$WORK/pid" ] && break; sleep 0.1; done
[ -s "$WORK/pid" ] || { cat "$WORK/daemon.log"; echo "daemon did not come up"; exit 1; }
run ls -l "$MNT"
for d in redo data boot; do
	printf '%-5s logical %-5s physical %-5s %-17s block %s\n' "$d" \
		"$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/$d")" \
		"$(getfattr --absolute-names --only-values -n user.sectorfs.physical_sector_size "$MNT/$d")" \
		"$(getfattr --absolute-names --only-values -n user.sectorfs.provisioning "$MNT/$d")" \
		"$(getfattr --absolute-names --only-values -n user.sectorfs.block_size "$MNT/$d")"
done

say "Write and read 4 KiB with O_DIRECT on the 4kn redo disk"
head -c 4096 /dev/urandom > "$WORK/block"
run dd if="$WORK/block" of="$MNT/redo" bs=4096 seek=10 oflag=direct conv=notrunc status=none
run dd if="$MNT/redo" of="$WORK/back" bs=4096 skip=10 count=1 iflag=direct status=none
cmp "$WORK/block" "$WORK/back" && echo "read back: identical"

say "A 512-byte write on the 4kn disk is refused, as a 4Kn drive refuses it"
if dd if="$WORK/block" of="$MNT/redo" bs=512 count=1 oflag=direct conv=notrunc status=none; then
	echo "unexpected: the misaligned write succeeded"; exit 1
fi

say "A 512-byte write on the 512e data disk is accepted (a read-modify-write)"
run dd if="$WORK/block" of="$MNT/data" bs=512 count=1 seek=3 oflag=direct conv=notrunc status=none
run dd if="$MNT/data" of="$WORK/back" bs=512 skip=3 count=1 iflag=direct status=none
cmp <(head -c 512 "$WORK/block") "$WORK/back" && echo "read back: identical"

say "ext4 on a loop device with 4096-byte sectors over the 4kn disk"
LOOP=$(losetup -f --show -b 4096 --direct-io=on "$MNT/redo")
run blockdev --getss "$LOOP"
run mkfs.ext4 -q -F "$LOOP"
run mount "$LOOP" "$FSMNT"
for i in $(seq 1 20); do head -c $((RANDOM * 4)) /dev/urandom > "$FSMNT/file$i"; done
(cd "$FSMNT" && sha256sum file* > "$WORK/sums")
run df -h "$FSMNT"
run umount "$FSMNT"
run e2fsck -fn "$LOOP"
run losetup -d "$LOOP"
LOOP=

say "Statistics of the data disk and the redo disk"
run cat "$MNT/.stats/data"
run cat "$MNT/.stats/redo"

say "Unmount the store"
run fusermount3 -u "$MNT"
wait "$DPID"
DPID=
echo "demo finished (the temporary store $STORE goes with it; $SAMPLES is unchanged)"
