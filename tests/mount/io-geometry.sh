#!/bin/bash
# SPDX-License-Identifier: MIT
# io-geometry.sh - what stat(2) and the xattrs show of a 512n, 512e and
# 4kn disk, thin and zeroedthick (8M, block_size 64K): st_size = disk size,
# st_blksize = physical sector, the four user.sectorfs.* xattrs; a thin
# image has no block yet, a zeroedthick one is fully reserved from the
# start (st_blocks); a fresh disk reads zero.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-io.sh"

# check_geometry FORMAT PROVISIONING: the checks on $IMG.
check_geometry() {
	local want xv
	# Geometry as stat(2) and the xattrs show it.
	[ "$(stat_val %s "$MNT/$IMG")" -eq $SIZE ] || fail "$IMG: st_size $(stat_val %s "$MNT/$IMG"), expected $SIZE"
	[ "$(stat_val %o "$MNT/$IMG")" -eq $PSS ] || fail "$IMG: st_blksize $(stat_val %o "$MNT/$IMG"), expected $PSS"
	pass "$IMG: st_size $SIZE, st_blksize $PSS"
	if command -v getfattr >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1; then
		for want in logical_sector_size=$LSS physical_sector_size=$PSS provisioning=$PROV block_size=$BS; do
			xv=$(xattr_get "$MNT/$IMG" "user.sectorfs.${want%%=*}") ||
				fail "$IMG: cannot read xattr user.sectorfs.${want%%=*}"
			[ "$xv" = "${want#*=}" ] || fail "$IMG: xattr user.sectorfs.${want%%=*} is '$xv', expected '${want#*=}'"
		done
		pass "$IMG: xattrs logical $LSS, physical $PSS, provisioning $PROV, block_size $BS"
	else
		pass "$IMG: xattrs # SKIP neither getfattr nor python3"
	fi
	check_alloc "before any write"
	same_as_model "mount (a fresh disk reads zero)"
}

io_run check_geometry
