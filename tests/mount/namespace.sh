#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace.sh - the mount's namespace acts on images, sidecars and maps
# together, as SPEC.md "The mount" says.
#
# Proves: creating a file in the mount makes an image with the mount's
# defaults (-o sector=4kn,provisioning=thin,block_size=64K), size 0, and a
# sidecar saying so; names starting with '.' or ending in '.json' are
# refused; truncate grows (to a multiple of the logical sector, else
# EINVAL), never shrinks, rewrites the sidecar's size and keeps the data,
# and the daemon logs the real cause of each refused truncate (a shrink,
# a size off the sector, growing or shrinking, a size past the 4 EiB
# maximum);
# rename moves image, sidecar and map together (also over an existing
# image, which it replaces); unlink removes all three; sidecars and
# .sectorfs never show in the mount, .stats only with ls -a; fallocate:
# punch hole frees whole thin blocks (stats and st_blocks drop) and reads
# zeros, zero range reads zeros, mode 0 allocates, a misaligned discard is
# EINVAL; and all of it survives unmount + remount.

. "$(dirname "$0")/lib.sh"
requires_fuse

OPTS=(-o sector=4kn,provisioning=thin,block_size=64K)
K=1024
M=$((1024 * 1024))
BS=$((64 * K))   # block_size of images created in this mount
SS=4096          # their logical sector

# range_sum FILE OFF LEN: sha256 of LEN bytes at OFF, read in 4 KiB I/Os.
range_sum() {
	dd if="$1" bs=$SS skip=$(($2 / SS)) count=$(($3 / SS)) status=none | sha256sum | cut -d' ' -f1
}

# zero_sum LEN: sha256 of LEN zero bytes.
zero_sum() { head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1; }

# expect_zeros FILE OFF LEN WHAT
expect_zeros() {
	[ "$(range_sum "$1" "$2" "$3")" = "$(zero_sum "$3")" ] ||
		fail "$4: $3 bytes at $2 of $1 do not read as zeros"
}

# write_random FILE OFF LEN: random data at OFF (O_DIRECT, 64 KiB I/Os).
write_random() {
	dd if=/dev/urandom of="$1" bs=$BS seek=$(($2 / BS)) count=$(($3 / BS)) \
		conv=notrunc oflag=direct status=none || fail "writing $3 bytes at $2 of $1 failed"
}

# json_num FILE KEY: the number KEY holds in a JSON file (sidecars).
json_num() { tr -d ' \n' < "$1" | grep -o "\"$2\":[0-9]*" | head -n1 | cut -d: -f2; }
# json_str FILE KEY
json_str() { tr -d ' \n' < "$1" | grep -o "\"$2\":\"[^\"]*\"" | head -n1 | cut -d'"' -f4; }


# three_files NAME present|absent: image, sidecar and map in the store.
three_files() {
	local f
	for f in "$STORE/$1" "$STORE/$1.json" "$STORE/.sectorfs/$1.map"; do
		if [ "$2" = present ]; then
			[ -f "$f" ] || fail "$f missing"
		else
			[ ! -e "$f" ] || fail "$f still exists"
		fi
	done
}

start_daemon "${OPTS[@]}"

# ---- create ----
: > "$MNT/disk" || fail "creating $MNT/disk failed"
expect_eq "$(stat -c %s "$MNT/disk")" 0 "size of a new image"
three_files disk present
sc="$STORE/disk.json"
expect_eq "$(json_num "$sc" size)" 0 "new sidecar size"
expect_eq "$(json_str "$sc" sector)" 4kn "new sidecar sector"
expect_eq "$(json_str "$sc" provisioning)" thin "new sidecar provisioning"
expect_eq "$(json_num "$sc" block_size)" $BS "new sidecar block_size"
expect_eq "$(stat -c %o "$MNT/disk")" 4096 "st_blksize of the new 4kn image"
if command -v getfattr >/dev/null 2>&1; then
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/disk")" 4096 "xattr logical_sector_size"
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.provisioning "$MNT/disk")" thin "xattr provisioning"
fi
pass "': > MNT/disk' makes a size-0 4kn thin 64K image, its sidecar and its map"
touch "$MNT/other" || fail "touch $MNT/other failed"
three_files other present
pass "touch creates an image too"

# ---- refused names ----
for bad in .hidden x.json; do
	expect_errno "Operation not permitted" touch "$MNT/$bad"
	[ ! -e "$STORE/$bad" ] || fail "refused name $bad left $STORE/$bad"
done
expect_errno "Operation not permitted" mv "$MNT/other" "$MNT/y.json"
expect_errno "Operation not permitted" mv "$MNT/other" "$MNT/.y"
three_files other present
pass "names starting with '.' or ending in '.json' are refused (create and rename)"

# ---- truncate grows ----
truncate -s 1M "$MNT/disk" || fail "truncate -s 1M failed"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after truncate -s 1M"
expect_eq "$(json_num "$sc" size)" $M "sidecar size after truncate -s 1M"
write_random "$MNT/disk" 0 $M
before=$(range_sum "$MNT/disk" 0 $M)
pass "truncate -s 1M grows a new image and its sidecar"

log_mark
expect_errno "Invalid argument" truncate -s $((2 * M + 512)) "$MNT/disk"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a non-multiple grow"
logged_since "disk: size $((2 * M + 512)) is not a multiple of the logical sector size 4096" "a non-multiple grow"
pass "growing to a size that is not a multiple of 4096 fails with EINVAL, and the log says why"

# 5 EiB: a multiple of the sector, past the 4 EiB maximum
log_mark
expect_errno "Invalid argument" truncate -s $((5 << 60)) "$MNT/disk"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a grow past the maximum"
logged_since "disk: size $((5 << 60)) is larger than the maximum $((1 << 62)) (4 EiB)" "a grow past the maximum"
pass "growing past 4 EiB fails with EINVAL, and the log says the maximum, not the sector"

log_mark
expect_errno "Invalid argument" truncate -s 512K "$MNT/disk"
logged_since "disk: refusing to shrink from $M to $((512 * K)) bytes (a disk that holds data only grows)" \
	"a shrink to 512K"
log_mark
expect_errno "Invalid argument" truncate -s $((512 * K + 512)) "$MNT/disk"
logged_since "disk: size $((512 * K + 512)) is not a multiple of the logical sector size 4096" \
	"a shrink to a size off the sector"
log_mark
expect_errno "Invalid argument" truncate -s 0 "$MNT/disk"
logged_since "disk: refusing to shrink from $M to 0 bytes (a disk that holds data only grows)" "a shrink to 0"
expect_eq "$(stat -c %s "$MNT/disk")" $M "size after a refused shrink"
expect_eq "$(json_num "$sc" size)" $M "sidecar size after a refused shrink"
pass "shrinking fails with EINVAL, the size is unchanged, and the log says why"

truncate -s 4M "$MNT/disk" || fail "truncate -s 4M failed"
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "size after truncate -s 4M"
expect_eq "$(json_num "$sc" size)" $((4 * M)) "sidecar size after truncate -s 4M"
expect_eq "$(range_sum "$MNT/disk" 0 $M)" "$before" "data written before the grow"
expect_zeros "$MNT/disk" $M $((3 * M)) "grown part"
expect_eq "$(stats_key disk total_blocks)" 64 "total_blocks after growing to 4M"
pass "truncate -s 4M: sidecar follows, old data intact, new part reads zeros"

# A grow from a size inside a block: the allocated part block keeps its
# data, and what grows into it reads zeros.
: > "$MNT/tail" || fail "creating tail failed"
truncate -s $((BS + 4 * K)) "$MNT/tail" || fail "growing tail to 68K failed"
dd if=/dev/urandom of="$MNT/tail" bs=$SS count=$(((BS + 4 * K) / SS)) conv=notrunc oflag=direct status=none ||
	fail "writing tail failed"
tail_sum=$(range_sum "$MNT/tail" 0 $((BS + 4 * K)))
truncate -s $((4 * BS)) "$MNT/tail" || fail "growing tail failed"
expect_eq "$(range_sum "$MNT/tail" 0 $((BS + 4 * K)))" "$tail_sum" "data before a grow from inside a block"
expect_zeros "$MNT/tail" $((BS + 4 * K)) $((3 * BS - 4 * K)) "part grown into a partial block"
rm "$MNT/tail" || fail "rm tail failed"
pass "growing from inside an allocated block keeps the data; the grown part reads zeros"

# ---- fallocate ----
alloc0=$(stats_key disk allocated_blocks)
blocks0=$(stat -c %b "$MNT/disk")
expect_eq "$alloc0" 16 "allocated_blocks after writing 1M of 64K blocks"
fallocate -p -o $BS -l $((2 * BS)) "$MNT/disk" || fail "fallocate -p (discard of 2 blocks) failed"
alloc1=$(stats_key disk allocated_blocks)
blocks1=$(stat -c %b "$MNT/disk")
expect_eq "$alloc1" $((alloc0 - 2)) "allocated_blocks after discarding 2 whole blocks"
[ "$blocks1" -lt "$blocks0" ] || fail "st_blocks did not drop after the discard ($blocks0 -> $blocks1)"
[ "$(stats_key disk discards)" -ge 1 ] || fail "stats discards not counted"
expect_zeros "$MNT/disk" $BS $((2 * BS)) "discarded range"
pass "fallocate -p frees whole thin blocks (allocated_blocks $alloc0 -> $alloc1, st_blocks $blocks0 -> $blocks1) and reads zeros"

head_before=$(range_sum "$MNT/disk" 0 $BS)
tail_before=$(range_sum "$MNT/disk" $((4 * BS)) $((M - 4 * BS)))
fallocate -z -o $((3 * BS + 8 * K)) -l $((16 * K)) "$MNT/disk" || fail "fallocate -z failed"
expect_zeros "$MNT/disk" $((3 * BS + 8 * K)) $((16 * K)) "zero range"
[ "$(range_sum "$MNT/disk" $((3 * BS)) $((8 * K)))" != "$(zero_sum $((8 * K)))" ] ||
	fail "fallocate -z zeroed data before its range"
expect_eq "$(range_sum "$MNT/disk" 0 $BS)" "$head_before" "data before the zeroed block"
expect_eq "$(range_sum "$MNT/disk" $((4 * BS)) $((M - 4 * BS)))" "$tail_before" "data after the zeroed block"
[ "$(stats_key disk write_zeroes)" -ge 1 ] || fail "stats write_zeroes not counted"
pass "fallocate -z makes its range read zeros and leaves the rest alone"

alloc2=$(stats_key disk allocated_blocks)
head_before=$(range_sum "$MNT/disk" $((5 * BS)) $((BS / 2)))
tail_before=$(range_sum "$MNT/disk" $((6 * BS + BS / 2)) $((BS / 2)))
fallocate -p -o $((5 * BS + BS / 2)) -l $BS "$MNT/disk" || fail "fallocate -p over two half blocks failed"
expect_eq "$(stats_key disk allocated_blocks)" "$alloc2" "allocated_blocks after discarding no whole block"
expect_zeros "$MNT/disk" $((5 * BS + BS / 2)) $BS "discard of two half blocks"
expect_eq "$(range_sum "$MNT/disk" $((5 * BS)) $((BS / 2)))" "$head_before" "data before a partial discard"
expect_eq "$(range_sum "$MNT/disk" $((6 * BS + BS / 2)) $((BS / 2)))" "$tail_before" "data after a partial discard"
pass "a discard of partial blocks frees none and reads zeros, the rest of those blocks intact"

fallocate -o $((2 * M)) -l $((2 * BS)) "$MNT/disk" || fail "fallocate (mode 0) failed"
alloc3=$(stats_key disk allocated_blocks)
expect_eq "$alloc3" $((alloc2 + 2)) "allocated_blocks after allocating 2 blocks"
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "size after fallocate mode 0 inside the disk"
expect_zeros "$MNT/disk" $((2 * M)) $((2 * BS)) "allocated range"
pass "fallocate (mode 0) allocates blocks (allocated_blocks $alloc2 -> $alloc3) that read zeros"

expect_errno "Invalid argument" fallocate -p -o 100 -l $SS "$MNT/disk"
expect_errno "Invalid argument" fallocate -p -o $SS -l 100 "$MNT/disk"
expect_eq "$(stats_key disk allocated_blocks)" "$alloc3" "allocated_blocks after refused discards"
pass "misaligned discard fails with EINVAL and changes nothing"
disk_sum=$(range_sum "$MNT/disk" 0 $((4 * M)))
disk_alloc=$alloc3

# ---- rename ----
truncate -s 1M "$MNT/other" || fail "truncate other failed"
write_random "$MNT/other" 0 $M
other_sum=$(range_sum "$MNT/other" 0 $M)
map_ino=$(stat -c %i "$STORE/.sectorfs/other.map")
mv "$MNT/other" "$MNT/moved" || fail "mv other moved failed"
three_files other absent
three_files moved present
expect_eq "$(stat -c %i "$STORE/.sectorfs/moved.map")" "$map_ino" "inode of the moved map"
expect_eq "$(json_num "$STORE/moved.json" size)" $M "moved sidecar size"
[ ! -e "$MNT/other" ] || fail "$MNT/other still visible after rename"
expect_eq "$(range_sum "$MNT/moved" 0 $M)" "$other_sum" "data under the new name"
[ -f "$MNT/.stats/moved.json" ] || fail ".stats/moved.json missing after rename"
[ ! -e "$MNT/.stats/other.json" ] || fail ".stats/other.json still there after rename"
pass "rename moves image, sidecar and map together; data and stats read back under the new name"

: > "$MNT/victim" || fail "creating victim failed"
truncate -s 256K "$MNT/victim" || fail "truncate victim failed"
write_random "$MNT/victim" 0 $((256 * K))
mv "$MNT/moved" "$MNT/victim" || fail "mv moved victim (over an existing image) failed"
three_files moved absent
three_files victim present
expect_eq "$(stat -c %i "$STORE/.sectorfs/victim.map")" "$map_ino" "inode of the map after rename over"
expect_eq "$(stat -c %s "$MNT/victim")" $M "size of the replaced image"
expect_eq "$(json_num "$STORE/victim.json" size)" $M "sidecar size of the replaced image"
expect_eq "$(range_sum "$MNT/victim" 0 $M)" "$other_sum" "data of the replaced image"
expect_eq "$(ls "$MNT" | grep -c '^victim$')" 1 "entries named victim"
pass "rename over an existing image replaces it (data, size, sidecar, map)"

# ---- unlink ----
: > "$MNT/gone" || fail "creating gone failed"
truncate -s 64K "$MNT/gone" || fail "growing gone failed"
three_files gone present
rm "$MNT/gone" || fail "rm $MNT/gone failed"
three_files gone absent
[ ! -e "$MNT/gone" ] || fail "$MNT/gone still visible after unlink"
pass "unlink removes image, sidecar and map"
: > "$MNT/gone" || fail "re-creating gone failed"
expect_eq "$(stat -c %s "$MNT/gone")" 0 "size of an image re-created under an unlinked name"
truncate -s 64K "$MNT/gone" || fail "growing the re-created gone failed"
expect_zeros "$MNT/gone" 0 $((64 * K)) "re-created image"
expect_eq "$(stats_key gone allocated_blocks)" 0 "allocated_blocks of the re-created image"
rm "$MNT/gone" || fail "rm $MNT/gone (second) failed"
three_files gone absent
pass "a name re-created after unlink is a new, empty image (no stale data or map)"

# ---- what the mount shows ----
check_listing() {
	local plain all
	plain=$(ls "$MNT" | tr '\n' ' ')
	all=$(ls -a "$MNT" | tr '\n' ' ')
	expect_eq "$plain" "disk victim " "ls $MNT"
	expect_eq "$all" ". .. .stats disk victim " "ls -a $MNT"
	[ ! -e "$MNT/disk.json" ] || fail "sidecar disk.json visible in the mount"
	[ ! -e "$MNT/.sectorfs" ] || fail ".sectorfs visible in the mount"
	[ -d "$MNT/.stats" ] || fail ".stats missing"
}
check_listing
pass "ls shows only images; ls -a adds .stats; no sidecars or .sectorfs"

# ---- unmount + remount ----
victim_sum=$(range_sum "$MNT/victim" 0 $M)
stop_daemon
start_daemon "${OPTS[@]}"
check_listing
three_files disk present
three_files victim present
expect_eq "$(stat -c %s "$MNT/disk")" $((4 * M)) "disk size after remount"
expect_eq "$(json_num "$STORE/disk.json" size)" $((4 * M)) "disk sidecar size after remount"
expect_eq "$(range_sum "$MNT/disk" 0 $((4 * M)))" "$disk_sum" "disk data after remount"
expect_eq "$(stats_key disk allocated_blocks)" "$disk_alloc" "disk allocated_blocks after remount"
expect_zeros "$MNT/disk" $BS $((2 * BS)) "discarded range after remount"
expect_eq "$(stat -c %s "$MNT/victim")" $M "victim size after remount"
expect_eq "$(range_sum "$MNT/victim" 0 $M)" "$victim_sum" "victim data after remount"
expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.block_size "$MNT/disk" 2>/dev/null || echo $BS)" $BS "block_size after remount"
pass "names, sizes, sidecars, data and allocation survive unmount + remount"
stop_daemon
pass "daemon exits 0 after unmount"
