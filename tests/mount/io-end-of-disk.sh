#!/bin/bash
# SPDX-License-Identifier: MIT
# io-end-of-disk.sh - at the end of a 512n, 512e and 4kn disk, thin and
# zeroedthick: a read at or past the end returns 0 bytes, a read
# straddling the end is shortened to the disk; a write straddling or past
# the end fails with ENOSPC and leaves the last sector, the size and the
# allocation as they were; none of it counts as misaligned, and only the
# accepted partial-physical write as a read-modify-write.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-io.sh"

# check_end FORMAT PROVISIONING: the end of the disk $IMG, its counters
# of read-modify-writes and refusals kept to be compared at the end.
check_end() {
	local alloc0 rmw0 mis0
	rmw0=$(stats_key "$IMG" rmw_writes) mis0=$(stats_key "$IMG" misaligned_rejected)
	rd $SIZE $LSS "$T/got" 2>"$T/err" || fail "$IMG: read at the end failed: $(cat "$T/err")"
	[ "$(stat_val %s "$T/got")" -eq 0 ] || fail "$IMG: read at the end returned $(stat_val %s "$T/got") bytes, expected 0"
	rd $((SIZE + BS)) $LSS "$T/got" 2>/dev/null
	[ "$(stat_val %s "$T/got")" -eq 0 ] || fail "$IMG: read past the end returned $(stat_val %s "$T/got") bytes, expected 0"
	pass "$IMG: reads at and past the end return 0 bytes"

	alloc0=$(stats_key "$IMG" allocated_blocks)
	pat_slice $((4 * BS)) > "$T/big"
	expect_errno "No space left on device" dd if="$T/big" of="$MNT/$IMG" bs=$((2 * LSS)) count=1 \
		seek=$((SIZE - LSS)) oflag=direct,seek_bytes conv=notrunc status=none
	[ "$(stats_key "$IMG" allocated_blocks)" -eq "$alloc0" ] || fail "$IMG: a write refused with ENOSPC allocated the last block"
	same_as_model "a write straddling the end into a never-written block"
	wr $((SIZE - LSS)) $LSS
	check_alloc "the last sector written"
	rd $((SIZE - LSS)) $LSS "$T/last.before" || fail "$IMG: cannot read the last sector"
	expect_errno "No space left on device" dd if="$T/big" of="$MNT/$IMG" bs=$((2 * LSS)) count=1 \
		seek=$((SIZE - LSS)) oflag=direct,seek_bytes conv=notrunc status=none
	expect_errno "No space left on device" dd if="$T/big" of="$MNT/$IMG" bs=$((4 * BS)) count=1 \
		seek=$((SIZE - BS)) oflag=direct,seek_bytes conv=notrunc status=none
	expect_errno "No space left on device" dd if="$T/big" of="$MNT/$IMG" bs=$LSS count=1 \
		seek=$SIZE oflag=direct,seek_bytes conv=notrunc status=none
	expect_errno "No space left on device" dd if="$T/big" of="$MNT/$IMG" bs=$LSS count=1 \
		seek=$((SIZE + 16 * BS)) oflag=direct,seek_bytes conv=notrunc status=none
	rd $((SIZE - LSS)) $LSS "$T/last.after" || fail "$IMG: cannot read the last sector"
	cmp -s "$T/last.before" "$T/last.after" || fail "$IMG: a write refused with ENOSPC changed the last sector"
	[ "$(stat_val %s "$MNT/$IMG")" -eq $SIZE ] || fail "$IMG: size changed to $(stat_val %s "$MNT/$IMG") by writes past the end"
	check_alloc "writes past the end"
	same_as_model "writes past the end"
	pass "$IMG: writes straddling or past the end fail ENOSPC and change nothing"

	rd $((SIZE - LSS)) $((4 * LSS)) "$T/got" || fail "$IMG: read straddling the end failed"
	[ "$(stat_val %s "$T/got")" -eq $LSS ] || fail "$IMG: read of $((4 * LSS)) straddling the end returned $(stat_val %s "$T/got") bytes, expected $LSS"
	cmp -s "$T/got" "$T/last.before" || fail "$IMG: shortened read at the end returned wrong data"
	rd $((SIZE - 3 * BS)) $((4 * BS)) "$T/got" || fail "$IMG: read straddling the end failed"
	[ "$(stat_val %s "$T/got")" -eq $((3 * BS)) ] || fail "$IMG: read of $((4 * BS)) straddling the end returned $(stat_val %s "$T/got") bytes, expected $((3 * BS))"
	cmp -s "$T/got" <(tail -c $((3 * BS)) "$T/$IMG.model") || fail "$IMG: shortened read at the end returned wrong data"
	pass "$IMG: reads straddling the end are shortened to the disk"

	[ "$(stats_key "$IMG" rmw_writes)" -eq $((rmw0 + EXP_RMW)) ] ||
		fail "$IMG: rmw_writes went from $rmw0 to $(stats_key "$IMG" rmw_writes), expected +$EXP_RMW at the end"
	[ "$(stats_key "$IMG" misaligned_rejected)" -eq $((mis0 + NBAD)) ] ||
		fail "$IMG: misaligned_rejected $(stats_key "$IMG" misaligned_rejected) at the end, expected $((mis0 + NBAD)) (ENOSPC and end-of-disk I/O are not misaligned)"
}

io_run check_end
