#!/bin/bash
# SPDX-License-Identifier: MIT
# io-rules.sh - the I/O rules of SPEC.md "The mount", seen from an
# application doing O_DIRECT I/O with GNU dd, on 512n, 512e and 4kn disks,
# thin and zeroedthick (8M, block_size 64K):
#
#  - aligned writes at logical-sector granularity succeed and read back
#    byte-exact; the whole disk always equals a model file kept beside it
#    (so nothing else changed and never-written sectors read zero);
#  - I/O whose offset or length is not a multiple of the logical sector
#    (512-byte I/O on 4kn included) fails with EINVAL, changes nothing,
#    allocates nothing, and misaligned_rejected counts exactly those;
#  - rmw_writes counts exactly the accepted writes that cover a physical
#    sector only in part (512e), and stays 0 on 512n and 4kn;
#  - a read at the end returns 0 bytes, a read straddling the end is
#    shortened; a write straddling or past the end fails with ENOSPC and
#    leaves the last sector and the allocation as they were;
#  - st_size = disk size, st_blksize = physical sector, st_blocks of a thin
#    image grows by whole blocks on first writes only (zeroedthick: fully
#    reserved from the start); the four user.sectorfs.* xattrs.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

SIZE=$((8 * 1024 * 1024))
BS=$((64 * 1024))
PAT="$T/pattern"
PATSIZE=$((2 * 1024 * 1024))
head -c $PATSIZE /dev/urandom > "$PAT" || fail "cannot make the pattern file"
PATOFF=0

# Per-image state, set by check_image.
IMG='' LSS=0 PSS=0 PROV='' EXP_RMW=0
declare -A TOUCHED

# xattr_get FILE NAME: the value of an xattr, with getfattr (package attr)
# or else python3; the caller checks that one of them exists.
xattr_get() {
	if command -v getfattr >/dev/null 2>&1; then
		getfattr --only-values -n "$2" "$1" 2>/dev/null
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import os, sys; sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$1" "$2" 2>/dev/null
	fi
}

# rd OFF LEN OUT: one O_DIRECT read of LEN bytes at OFF into OUT.
rd() {
	dd if="$MNT/$IMG" of="$3" bs="$2" count=1 skip="$1" iflag=direct,skip_bytes status=none
}

# dump OUT: the whole disk, read with O_DIRECT.
dump() {
	dd if="$MNT/$IMG" of="$1" bs=1M iflag=direct status=none || fail "$IMG: reading the whole disk failed"
}

# pat_slice LEN: the next LEN bytes of the pattern, to stdout.
pat_slice() {
	dd if="$PAT" bs="$1" count=1 skip=$PATOFF iflag=skip_bytes status=none
}

# same_as_model WHAT: the whole disk equals the model file.
same_as_model() {
	dump "$T/whole"
	cmp -s "$T/whole" "$T/$IMG.model" || fail "$IMG: disk differs from the model after $1: $(cmp "$T/whole" "$T/$IMG.model" 2>&1)"
}

# wr OFF LEN: an aligned O_DIRECT write of fresh pattern bytes; it must
# succeed and read back byte-exact.  Mirrored into the model; the blocks it
# touches and whether it is a read-modify-write are recorded.
wr() {
	local off=$1 len=$2 b
	pat_slice "$len" > "$T/want"
	dd if="$T/want" of="$MNT/$IMG" bs="$len" count=1 seek="$off" \
		oflag=direct,seek_bytes conv=notrunc status=none 2>"$T/err" ||
		fail "$IMG: aligned write of $len at $off failed: $(cat "$T/err")"
	dd if="$T/want" of="$T/$IMG.model" bs="$len" count=1 seek="$off" \
		oflag=seek_bytes conv=notrunc status=none
	rd "$off" "$len" "$T/got" 2>"$T/err" || fail "$IMG: aligned read of $len at $off failed: $(cat "$T/err")"
	cmp -s "$T/want" "$T/got" || fail "$IMG: read back of $len at $off differs from what was written"
	PATOFF=$(((PATOFF + len + 512) % (PATSIZE / 2)))
	for ((b = off / BS; b <= (off + len - 1) / BS; b++)); do TOUCHED[$b]=1; done
	if ((off % PSS || len % PSS)); then EXP_RMW=$((EXP_RMW + 1)); fi
}

# check_alloc: thin st_blocks and allocated_blocks match the blocks written.
check_alloc() {
	local n=${#TOUCHED[@]} blocks
	blocks=$(stat_val %b "$MNT/$IMG")
	if [ "$PROV" = thin ]; then
		# Whole blocks, plus at most the backing filesystem's own metadata
		# (ext4 counts an extent-tree block once a file has > 4 extents;
		# the same holds for zeroedthick below).
		[ $((blocks * 512 / BS)) -eq "$n" ] ||
			fail "$IMG: st_blocks $blocks after first writes to $n blocks of 64K, expected $((n * BS / 512)) (+ < 1 block of metadata) ($1)"
		[ "$(stats_key "$IMG" allocated_blocks)" -eq "$n" ] ||
			fail "$IMG: allocated_blocks $(stats_key "$IMG" allocated_blocks), expected $n ($1)"
	else
		[ $((blocks * 512 / BS)) -eq $((SIZE / BS)) ] ||
			fail "$IMG: zeroedthick st_blocks $blocks, expected $((SIZE / 512)) (all reserved, + < 1 block of metadata) ($1)"
	fi
}

# bad_io OFF LEN: a write and a read at OFF of LEN bytes both fail EINVAL.
NBAD=0
bad_io() {
	pat_slice "$2" > "$T/want"
	expect_errno "Invalid argument" dd if="$T/want" of="$MNT/$IMG" bs="$2" count=1 \
		seek="$1" oflag=direct,seek_bytes conv=notrunc status=none
	expect_errno "Invalid argument" dd if="$MNT/$IMG" of="$T/got" bs="$2" count=1 \
		skip="$1" iflag=direct,skip_bytes status=none
	NBAD=$((NBAD + 2))
}

check_image() {
	local fmt=$1 want xv mis0 rmw0 alloc0 blocks0 r
	IMG="$fmt-$2" PROV=$2 EXP_RMW=0 NBAD=0
	TOUCHED=()
	case $fmt in
	512n) LSS=512 PSS=512 ;;
	512e) LSS=512 PSS=4096 ;;
	4kn) LSS=4096 PSS=4096 ;;
	esac
	truncate -s $SIZE "$T/$IMG.model"

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

	# The end of the disk.
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

IMAGES=()
for fmt in 512n 512e 4kn; do
	for prov in thin zeroedthick; do
		sidecar "$fmt-$prov" 8M $fmt $prov 64K
		IMAGES+=("$fmt $prov")
	done
done
start_daemon
for i in "${IMAGES[@]}"; do
	# shellcheck disable=SC2086
	check_image $i
done
stop_daemon
pass "daemon unmounted and exited 0"
