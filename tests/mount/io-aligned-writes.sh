#!/bin/bash
# SPDX-License-Identifier: MIT
# io-aligned-writes.sh - O_DIRECT writes at logical-sector granularity
# (1, 2, 3 sectors, a whole block, across blocks) on 512n, 512e and 4kn,
# thin and zeroedthick, succeed and read back byte-exact; the whole disk
# always equals a model file kept beside it (so nothing else changed and
# never-written sectors read zero); st_blocks of a thin image grows by
# whole blocks on first writes only; rmw_writes counts exactly the writes
# that cover a physical sector only in part (512e), and stays 0 on 512n
# and 4kn.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-io.sh"

# check_aligned FORMAT PROVISIONING: the checks on $IMG.
check_aligned() {
	local fmt=$1 rmw0 r
	# Aligned writes at logical-sector granularity.
	rmw0=$(stats_key "$IMG" rmw_writes)
	wr $LSS $LSS
	check_alloc "one sector written"
	if [ "$PROV" = thin ] && [ "$(stat_val %b "$MNT/$IMG")" -ne $((BS / 512)) ]; then
		fail "$IMG: st_blocks $(stat_val %b "$MNT/$IMG") after writing one $LSS-byte sector, expected $((BS / 512)) (one whole block)"
	fi
	wr $((5 * LSS)) $LSS
	check_alloc "a second sector in the same block"
	wr $((3 * BS - LSS)) $((2 * LSS))
	wr $((10 * BS)) $BS
	wr $((20 * BS + 7 * LSS)) $((3 * LSS))
	wr $((30 * BS + 2 * LSS)) $((BS - 2 * LSS))
	check_alloc "writes across blocks"
	same_as_model "aligned writes"
	pass "$IMG: aligned writes of 1, 2, 3 sectors and a whole block read back byte-exact; st_blocks follows whole blocks"

	# On 512e: 512-byte writes are read-modify-writes, 4K-aligned 4K ones are not.
	if [ "$fmt" = 512e ]; then
		wr $((40 * BS + 512)) 512
		wr $((40 * BS + 4096)) 512
		wr $((41 * BS + 3 * 512)) 512
		r=$(stats_key "$IMG" rmw_writes)
		wr $((42 * BS)) 4096
		wr $((42 * BS + 8192)) 4096
		[ "$(stats_key "$IMG" rmw_writes)" -eq "$r" ] || fail "$IMG: 4K-aligned 4K writes on 512e counted as read-modify-writes"
		wr $((43 * BS + 512)) 4096
		[ $EXP_RMW -eq 9 ] || fail "test bug: expected 9 read-modify-writes, counted $EXP_RMW"
		same_as_model "512-byte writes on 512e"
		pass "$IMG: 512-byte writes on 512e accepted and read back"
	fi
	[ "$(stats_key "$IMG" rmw_writes)" -eq $((rmw0 + EXP_RMW)) ] ||
		fail "$IMG: rmw_writes went from $rmw0 to $(stats_key "$IMG" rmw_writes), expected +$EXP_RMW"
	pass "$IMG: rmw_writes counts exactly the $EXP_RMW writes that cover a physical sector in part"
}

io_run check_aligned
