# SPDX-License-Identifier: MIT
# lib-io.sh - what the tests of the I/O rules of SPEC.md "The mount" share:
# six 8M images (512n, 512e, 4kn; thin and zeroedthick; block_size 64K),
# each with a model file kept beside it that every accepted write is
# mirrored into, and O_DIRECT I/O through GNU dd checked against it.
# Source it after lib.sh, then run a check on every image:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-io.sh"
#   check_something() { ...; }
#   io_run check_something
#
# It requires FUSE and GNU dd.

requires_fuse
requires_gnu_dd
SIZE=$((8 * 1024 * 1024))
BS=$((64 * 1024))
PAT="$T/pattern"
PATSIZE=$((2 * 1024 * 1024))
head -c $PATSIZE /dev/urandom > "$PAT" || fail "cannot make the pattern file"
PATOFF=0

# Per-image state, set by each_image.
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

# io_images: the sidecars of the six images, "FORMAT-PROVISIONING".
IMAGES=()
io_images() {
	local fmt prov
	for fmt in 512n 512e 4kn; do
		for prov in thin zeroedthick; do
			sidecar "$fmt-$prov" 8M $fmt $prov 64K
			IMAGES+=("$fmt $prov")
		done
	done
}

# each_image FN: for each image, set IMG, LSS, PSS and PROV, empty the
# record of what was written (TOUCHED, EXP_RMW, NBAD), start its model (a
# file of zeros), then run FN FORMAT PROVISIONING.
each_image() {
	local i fmt prov
	for i in "${IMAGES[@]}"; do
		read -r fmt prov <<<"$i"
		IMG="$fmt-$prov" PROV=$prov EXP_RMW=0 NBAD=0
		TOUCHED=()
		case $fmt in
		512n) LSS=512 PSS=512 ;;
		512e) LSS=512 PSS=4096 ;;
		4kn) LSS=4096 PSS=4096 ;;
		esac
		truncate -s $SIZE "$T/$IMG.model"
		"$1" "$fmt" "$prov"
	done
}

# io_run FN: the six images served, FN run on each (each_image), the
# daemon stopped (it must exit 0).
io_run() {
	io_images
	start_daemon
	each_image "$1"
	stop_daemon
	pass "daemon unmounted and exited 0"
}
