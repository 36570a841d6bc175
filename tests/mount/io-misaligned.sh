#!/bin/bash
# SPDX-License-Identifier: MIT
# io-misaligned.sh - O_DIRECT I/O whose offset or length is not a multiple
# of the logical sector (512-byte I/O on 4kn included) fails with EINVAL,
# changes nothing, allocates nothing, and misaligned_rejected counts
# exactly those; on 512n, 512e and 4kn, thin and zeroedthick.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-io.sh"

# check_misaligned FORMAT PROVISIONING: the checks on $IMG.
check_misaligned() {
	local mis0 alloc0 blocks0
	# Misaligned offsets and lengths: EINVAL, nothing written, nothing allocated.
	mis0=$(stats_key "$IMG" misaligned_rejected)
	alloc0=$(stats_key "$IMG" allocated_blocks)
	blocks0=$(stat_val %b "$MNT/$IMG")
	bad_io $((LSS / 2)) $LSS
	bad_io 0 $((LSS / 2))
	bad_io $LSS $((LSS + LSS / 2))
	bad_io $((50 * BS + 100)) $((2 * LSS))
	bad_io $((51 * BS)) 100
	if [ $LSS -eq 4096 ]; then
		bad_io 0 512
		bad_io 4096 512
		bad_io 512 4096
		bad_io $((52 * BS + 1024)) 1024
	fi
	[ "$(stats_key "$IMG" misaligned_rejected)" -eq $((mis0 + NBAD)) ] ||
		fail "$IMG: misaligned_rejected went from $mis0 to $(stats_key "$IMG" misaligned_rejected), expected +$NBAD"
	[ "$(stats_key "$IMG" allocated_blocks)" -eq "$alloc0" ] || fail "$IMG: a refused write allocated a block"
	[ $(($(stat_val %b "$MNT/$IMG") * 512 / BS)) -eq $((blocks0 * 512 / BS)) ] ||
		fail "$IMG: a refused write changed st_blocks from $blocks0 to $(stat_val %b "$MNT/$IMG")"
	same_as_model "misaligned I/O"
	pass "$IMG: $NBAD misaligned reads and writes fail EINVAL, change nothing, counted exactly in misaligned_rejected"
}

io_run check_misaligned
