#!/bin/bash
# SPDX-License-Identifier: MIT
# backing-io.sh - O_DIRECT on the backing file, and what it cannot carry.
#
# The daemon does its backing I/O with O_DIRECT (doc/design.md, Backing I/O), but a
# store on a disk with 4096-byte sectors takes O_DIRECT only in 4 KiB
# units, while a 512n or 512e image must accept any 512-byte I/O.  Those
# transfers go through a second, buffered descriptor, and the kernel must
# keep the two coherent.  Here the store is an ext4 on a loop device with
# 4096-byte logical sectors, and in it a 512n thin image and a 512e
# zeroedthick one (64K blocks).  Through the mount, with GNU dd O_DIRECT:
#  - the text stats say "backing I/O   O_DIRECT";
#  - a fixed sequence that crosses the two paths on one page: 512 B at
#    sector 1 (buffered), 4 KiB at 0 (direct), 512 B at sector 3
#    (buffered), each read back at once both ways (4 KiB and 512 B);
#  - 300 seeded random writes of 1 to 256 sectors at any sector offset,
#    each read back right after it, mirrored into a model file: both
#    images equal their model read in 1 MiB (direct) and in 512-byte
#    (buffered) pieces, and again after a restart with the page cache
#    dropped; no I/O refused, writes counted exactly.
# With -o buffered the text stats say "buffered" and the images still
# read back as their models.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_loop
requires_gnu_dd
requires_cmd mkfs.ext4 mount umount cmp timeout

SEED=${SEED:-4242}
SECTORS=$((16 * 2048))          # 16 MiB images

truncate -s 96M "$T/disk4k" || fail "truncate $T/disk4k failed"
attach_loop "$T/disk4k" 4096
on_exit unmount_store
step "mkfs.ext4 on $DEV" mkfs.ext4 -q -F "$DEV"
step "mount $DEV" mount "$DEV" "$STORE"

sidecar n512 16M 512n thin 64K
sidecar e512 16M 512e zeroedthick 64K
for img in n512 e512; do truncate -s 16M "$T/$img.model"; done
start_daemon

for img in n512 e512; do
	grep -q '^backing I/O *O_DIRECT' "$MNT/.stats/$img" ||
		fail "$img: the stats do not say O_DIRECT: $(grep -i backing "$MNT/.stats/$img")"
done
pass "a store on a 4096-byte-sector disk: images use O_DIRECT"

WRITES=0
# put IMG SECTOR COUNT: COUNT sectors of random data at SECTOR, into the image and its model.
put() {
	head -c $(($3 * 512)) /dev/urandom > "$T/rec"
	timeout 20 dd if="$T/rec" of="$MNT/$1" bs=$(($3 * 512)) seek=$(($2 * 512)) oflag=direct,seek_bytes \
		conv=notrunc status=none || fail "$1: write of $3 sectors at sector $2 failed"
	dd if="$T/rec" of="$T/$1.model" bs=$(($3 * 512)) seek=$(($2 * 512)) oflag=seek_bytes conv=notrunc \
		status=none
	WRITES=$((WRITES + 1))
}

# check IMG SECTOR COUNT BS WHAT: COUNT sectors at SECTOR read back as the model, in BS pieces.
check() {
	cmp -s <(timeout 30 dd if="$MNT/$1" bs="$4" skip=$(($2 * 512)) count=$(($3 * 512)) \
			iflag=direct,skip_bytes,count_bytes status=none) \
		<(dd if="$T/$1.model" bs=1M skip=$(($2 * 512)) count=$(($3 * 512)) \
			iflag=skip_bytes,count_bytes status=none) ||
		fail "$1: $5: sectors $2..$(($2 + $3 - 1)) do not read back as written (read in $4 pieces)"
}

for img in n512 e512; do
	put "$img" 1 1;  check "$img" 0 8 4096 "512 B at sector 1"; check "$img" 0 8 512 "512 B at sector 1"
	put "$img" 0 8;  check "$img" 1 1 512 "4 KiB over it";      check "$img" 0 8 4096 "4 KiB over it"
	put "$img" 3 1;  check "$img" 0 8 4096 "512 B at sector 3"; check "$img" 0 8 512 "512 B at sector 3"
done
pass "512-byte buffered and 4 KiB direct writes to one page read back either way"

RANDOM=$SEED
for ((i = 0; i < 300; i++)); do
	img=n512; [ $((i % 2)) -eq 1 ] && img=e512
	n=$((RANDOM % 256 + 1))
	s=$(((RANDOM * 32768 + RANDOM) % (SECTORS - n)))
	put "$img" "$s" "$n"
	check "$img" "$s" "$n" 512 "random write $i"
done

whole() {
	local img
	for img in n512 e512; do
		check "$img" 0 "$SECTORS" 1M "$1"
		check "$img" 0 "$SECTORS" 512 "$1"
	done
}
whole "after 300 random writes"
for img in n512 e512; do
	[ "$(stats_key "$img" misaligned_rejected)" = 0 ] || fail "$img: I/O refused: $(stats_key "$img" misaligned_rejected)"
done
w=$(($(stats_key n512 writes) + $(stats_key e512 writes)))
[ "$w" -eq "$WRITES" ] || fail "the stats count $w writes, $WRITES were made"
pass "$WRITES writes of 1 to 256 sectors at any sector (seed $SEED) read back exactly in 1 MiB and 512 B pieces"

stop_daemon
sync
echo 3 > /proc/sys/vm/drop_caches
start_daemon
whole "after a restart with the page cache dropped"
pass "both images equal their models after a restart with the page cache dropped"
stop_daemon

start_daemon -o buffered
grep -q '^backing I/O *buffered' "$MNT/.stats/n512" ||
	fail "-o buffered: the stats say $(grep -i backing "$MNT/.stats/n512")"
put n512 5 3
put e512 100 17
whole "with -o buffered"
pass "-o buffered: the stats say buffered, and the images read back as written"
stop_daemon
