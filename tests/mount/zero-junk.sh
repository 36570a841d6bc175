#!/bin/bash
# SPDX-License-Identifier: MIT
# zero-junk.sh - "a block never written reads as zeros without touching the
# backing file, whatever the backing file holds" and "the rest of the block
# is zeroed on its first write" (SPEC.md, Provisioning), for thin and
# zeroedthick images, with zero offload on and off.
#
# Random junk is planted straight into the backing file STORE/NAME: over the
# whole file while unmounted, and, while mounted, into blocks never written
# through the mount.  Through the mount:
#  - every never-written block reads zeros;
#  - after a partial first write (4K inside a 64K block, at the head, in the
#    middle, at the tail, and one write straddling two fresh blocks) the
#    rest of each block reads zero although junk was there before;
#  - first_writes counts each write that touches a never-written block (once
#    per write, as sectorfs.stats(5) defines it, also for a write
#    straddling two fresh blocks) and zeroed_bytes grows by exactly block
#    size - bytes written, for each fresh block; an overwrite of an already
#    written block counts as an overwrite and zeroes nothing;
#  - all of it survives an unmount and a remount, and junk planted again
#    while unmounted still does not show through.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

SIZE=$((8 * 1024 * 1024))
BS=$((64 * 1024))
K=1024
IMG=

# plant OFF LEN: random junk straight into the backing file.
plant() {
	dd if=/dev/urandom of="$STORE/$IMG" bs="$2" count=1 seek="$1" \
		oflag=seek_bytes conv=notrunc,fsync status=none || fail "$IMG: cannot plant junk at $1"
}

# wr OFF LEN: O_DIRECT write of random bytes through the mount, mirrored
# into the model (zeros + everything written).
wr() {
	head -c "$2" /dev/urandom > "$T/want"
	dd if="$T/want" of="$MNT/$IMG" bs="$2" count=1 seek="$1" \
		oflag=direct,seek_bytes conv=notrunc status=none 2>"$T/err" ||
		fail "$IMG: write of $2 at $1 failed: $(cat "$T/err")"
	dd if="$T/want" of="$T/$IMG.model" bs="$2" count=1 seek="$1" \
		oflag=seek_bytes conv=notrunc status=none
}

# reads_zero OFF LEN WHAT: that range of the disk reads as zeros.
reads_zero() {
	dd if="$MNT/$IMG" of="$T/got" bs="$2" count=1 skip="$1" iflag=direct,skip_bytes status=none ||
		fail "$IMG: read of $2 at $1 failed"
	[ "$(stat_val %s "$T/got")" -eq "$2" ] || fail "$IMG: short read at $1"
	cmp -s -n "$2" "$T/got" /dev/zero || fail "$IMG: $3 (offset $1, $2 bytes) does not read zero: $(cmp -n "$2" "$T/got" /dev/zero 2>&1)"
}

# same_as_model WHAT: the whole disk equals the model.
same_as_model() {
	dd if="$MNT/$IMG" of="$T/whole" bs=1M iflag=direct status=none || fail "$IMG: reading the disk failed"
	cmp -s "$T/whole" "$T/$IMG.model" ||
		fail "$IMG: disk differs from zeros + written data after $1: $(cmp "$T/whole" "$T/$IMG.model" 2>&1)"
}

# expect_delta KEY BEFORE DELTA WHAT
expect_delta() {
	local now
	now=$(stats_key "$IMG" "$1")
	[ "$now" -eq $(($2 + $3)) ] || fail "$IMG: $1 went from $2 to $now, expected +$3 ($4)"
}

# first_write OFF LEN ZEROED WHAT: a write that touches fresh blocks:
# first_writes +1, zeroed_bytes +ZEROED, overwrites unchanged.
first_write() {
	local fw zb ow
	fw=$(stats_key "$IMG" first_writes)
	zb=$(stats_key "$IMG" zeroed_bytes)
	ow=$(stats_key "$IMG" overwrites)
	wr "$1" "$2"
	expect_delta first_writes "$fw" 1 "$4"
	expect_delta zeroed_bytes "$zb" "$3" "$4"
	expect_delta overwrites "$ow" 0 "$4"
}

junk_image() {
	IMG=$1
	truncate -s $SIZE "$T/$IMG.model"
	# The whole backing file is junk before the first mount that uses it.
	plant 0 $SIZE
	start_daemon
	same_as_model "junk planted over the whole backing file while unmounted"
	[ "$(stats_key "$IMG" first_writes)" -eq 0 ] || fail "$IMG: first_writes not 0 after reads only"
	pass "$IMG: junk planted while unmounted: the whole never-written disk reads zero"

	# Partial first writes: head, middle and tail of three fresh blocks.
	first_write $((3 * BS + 8 * K)) $((4 * K)) $((BS - 4 * K)) "4K in the middle of block 3"
	reads_zero $((3 * BS)) $((8 * K)) "head of block 3 before a 4K first write"
	reads_zero $((3 * BS + 12 * K)) $((BS - 12 * K)) "tail of block 3 after a 4K first write"
	first_write $((5 * BS)) $((4 * K)) $((BS - 4 * K)) "4K at the head of block 5"
	reads_zero $((5 * BS + 4 * K)) $((BS - 4 * K)) "rest of block 5"
	first_write $((8 * BS - 4 * K)) $((4 * K)) $((BS - 4 * K)) "4K at the tail of block 7"
	reads_zero $((7 * BS)) $((BS - 4 * K)) "rest of block 7"
	same_as_model "partial first writes"
	pass "$IMG: after 4K first writes at the head, middle and tail of a 64K block, the rest of each block reads zero; zeroed_bytes +60K each"

	# An overwrite of a written block zeroes nothing.
	local fw zb ow
	fw=$(stats_key "$IMG" first_writes) zb=$(stats_key "$IMG" zeroed_bytes) ow=$(stats_key "$IMG" overwrites)
	wr $((3 * BS + 32 * K)) $((4 * K))
	expect_delta first_writes "$fw" 0 "overwrite of block 3"
	expect_delta zeroed_bytes "$zb" 0 "overwrite of block 3"
	expect_delta overwrites "$ow" 1 "overwrite of block 3"
	same_as_model "an overwrite"
	pass "$IMG: an overwrite of a written block counts as an overwrite and zeroes nothing"

	# Junk planted while mounted into never-written blocks.
	plant $((10 * BS)) $((3 * BS))
	plant $((40 * BS)) $BS
	reads_zero $((10 * BS)) $((3 * BS)) "never-written blocks 10-12 with junk planted while mounted"
	reads_zero $((40 * BS)) $BS "never-written block 40 with junk planted while mounted"
	same_as_model "junk planted while mounted"
	pass "$IMG: junk planted while mounted into never-written blocks does not show through"
	first_write $((10 * BS + 16 * K)) $((4 * K)) $((BS - 4 * K)) "4K inside junk block 10"
	reads_zero $((10 * BS)) $((16 * K)) "head of junk block 10 after its first write"
	reads_zero $((10 * BS + 20 * K)) $((BS - 20 * K)) "tail of junk block 10 after its first write"
	first_write $((12 * BS - 4 * K)) $((8 * K)) $((2 * (BS - 4 * K))) "8K straddling junk blocks 11 and 12"
	reads_zero $((11 * BS)) $((BS - 4 * K)) "head of junk block 11"
	reads_zero $((12 * BS + 4 * K)) $((BS - 4 * K)) "tail of junk block 12"
	first_write $((40 * BS)) $BS 0 "a whole-block first write of junk block 40"
	same_as_model "first writes to blocks with junk planted while mounted"
	pass "$IMG: partial first writes into junk blocks zero the rest of each block (first_writes, zeroed_bytes exact)"

	# It all survives a remount, and junk planted while unmounted stays hidden.
	stop_daemon
	plant $((20 * BS)) $BS
	plant $((SIZE - BS)) $BS
	start_daemon
	same_as_model "unmount, junk planted again, remount"
	reads_zero $((SIZE - BS)) $BS "last block, junk planted while unmounted"
	case $IMG in
	thin*)	[ "$(stats_key "$IMG" allocated_blocks)" -eq 7 ] ||
			fail "$IMG: allocated_blocks $(stats_key "$IMG" allocated_blocks) after remount, expected 7 (blocks 3 5 7 10 11 12 40)" ;;
	esac
	stop_daemon
	pass "$IMG: after remount the written data is intact and never-written blocks still read zero"
}

sidecar thick-zo 8M 512n zeroedthick 64K true
sidecar thick-nozo 8M 512e zeroedthick 64K false
sidecar thin-zo 8M 4kn thin 64K true
sidecar thin-nozo 8M 512n thin 64K false
# Let the daemon create the backing files, then junk them.
start_daemon
stop_daemon
for img in thick-zo thick-nozo thin-zo thin-nozo; do
	[ -f "$STORE/$img" ] || fail "daemon did not create $STORE/$img"
	junk_image $img
done
