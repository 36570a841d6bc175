#!/bin/bash
# SPDX-License-Identifier: MIT
# crash.sh - "the allocation map survives kill -9: after a crash every block
# reads as the data last made durable, or as zeros, never as stale or
# foreign bytes" and "fsync: everything written before is durable, data and
# allocation state" (SPEC.md), by killing the daemon with SIGKILL.
#
# Three images (4kn thin, 512n zeroedthick, 512e thin without zero offload)
# take turns over several rounds, at offsets drawn from $RANDOM (seed
# printed; set CRASH_SEED to replay).  Each round:
#  A. O_DIRECT writes made durable with fsync (dd conv=fsync), more
#     O_DIRECT writes without fsync, a writer still running, kill -9;
#     junk planted in the backing file of blocks never written; remount:
#     every sector reads as the durable state or as the state with the
#     unsynced writes, per sector (so fsynced writes are byte-exact,
#     never-written blocks read zero, junk never shows);
#  B. a range written and fsynced, then partly overwritten without fsync,
#     kill -9, remount: each sector is the old or the new data, never zeros
#     or junk;
#  before each remount: `sectorfs-img check` is clean (exit 0) on every
#  image (junk in never-written blocks included);
#  after each remount: allocated_blocks >= the blocks with fsynced data and
#  <= the blocks ever written, and the other images are exactly as left.
# Finally: a clean unmount keeps everything, and a write made durable by
# O_DSYNC (dd oflag=direct,dsync, no fsync call) survives kill -9.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd cmp awk comm

SEED=${CRASH_SEED:-$$}
RANDOM=$SEED
echo "# CRASH_SEED=$SEED"

SIZE=$((16 * 1024 * 1024))
BS=$((64 * 1024))
NBLK=$((SIZE / BS))
ROUNDS=${CRASH_ROUNDS:-5}
IMAGES=(c4kn c512n c512e)
declare -A LSS=([c4kn]=4096 [c512n]=512 [c512e]=512)
# shellcheck disable=SC2034  # used through namerefs (count_blocks, mark)
declare -A DURABLE TOUCHED        # "IMG:BLOCK" -> 1
head -c $((2 * 1024 * 1024)) /dev/urandom > "$T/src"

# count_blocks IMG ARRAY: how many blocks of IMG the array holds.
count_blocks() {
	local -n arr=$2
	local k n=0
	for k in "${!arr[@]}"; do [ "${k%%:*}" = "$1" ] && n=$((n + 1)); done
	echo $n
}

# mark IMG OFF LEN ARRAY: record the blocks [OFF, OFF+LEN) touches.
mark() {
	local -n arr=$4
	local b
	for ((b = $2 / BS; b <= ($2 + $3 - 1) / BS; b++)); do arr[$1:$b]=1; done
}

# fresh_block IMG: a random block that, like the one after it, was never
# written so far.  (Writes are marked in TOUCHED by put, so writes never
# overlap within a round and each sector has one "old" and one "new".)
fresh_block() {
	local b i
	for ((i = 0; i < 1000; i++)); do
		b=$((RANDOM % (NBLK - 1)))
		if [ -z "${TOUCHED[$1:$b]:-}" ] && [ -z "${TOUCHED[$1:$((b + 1))]:-}" ]; then
			echo $b
			return 0
		fi
	done
	fail "test bug: no fresh block left in $1"
}

# put IMG OFF LEN SRCOFF MODELS [DD_FLAGS...]: O_DIRECT write of LEN bytes of
# the source file at SRCOFF to OFF; mirrored into each model in MODELS.
put() {
	local img=$1 off=$2 len=$3 soff=$4 models=$5 m
	shift 5
	dd if="$T/src" of="$MNT/$img" bs="$len" count=1 skip="$soff" seek="$off" \
		iflag=skip_bytes oflag=direct,seek_bytes conv=notrunc "$@" status=none 2>"$T/err" ||
		fail "$img: write of $len at $off failed: $(cat "$T/err")"
	for m in $models; do
		dd if="$T/src" of="$m" bs="$len" count=1 skip="$soff" seek="$off" \
			iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none
	done
	mark "$img" "$off" "$len" TOUCHED
}

# rand_write IMG: a random offset and length (1-16 sectors, inside one
# fresh block and maybe its neighbour) and source offset, as "OFF LEN SOFF".
rand_write() {
	local l=${LSS[$1]} b off len
	b=$(fresh_block "$1")
	off=$((b * BS + (RANDOM % (BS / l)) * l))
	len=$(((RANDOM % 16 + 1) * l))
	echo "$off $len $(((RANDOM % 1024) * 1024))"
}

# sectors_between IMG GOT OLD NEW: every sector of GOT is that sector of OLD
# or of NEW; fails naming the first sector that is neither.
sectors_between() {
	local img=$1 l=${LSS[$1]} bad
	bad=$(comm -12 \
		<(cmp -l "$2" "$3" 2>/dev/null | awk -v L="$l" 'BEGIN { last = -1 } { s = int(($1 - 1) / L); if (s != last) { print s; last = s } }' | sort) \
		<(cmp -l "$2" "$4" 2>/dev/null | awk -v L="$l" 'BEGIN { last = -1 } { s = int(($1 - 1) / L); if (s != last) { print s; last = s } }' | sort) |
		sort -n | head -n1)
	[ -z "$bad" ] || fail "$img: after kill -9 and remount, sector $bad (offset $((bad * l)), block $((bad * l / BS))) is neither the durable data nor the unsynced data (zeros: $(cmp -s -n "$l" <(dd if="$2" bs="$l" skip="$bad" count=1 status=none) /dev/zero && echo yes || echo no))"
}

dump() {
	dd if="$MNT/$1" of="$2" bs=1M iflag=direct status=none || fail "$1: reading the disk failed"
	[ "$(stat_val %s "$2")" -eq $SIZE ] || fail "$1: short read of the disk"
}

# check_after_crash IMG WHAT: remounted; IMG within {old, new}, the others
# exactly as left; IMG's allocation within bounds; adopt what IMG reads.
check_after_crash() {
	local img=$1 o d t a
	for o in "${IMAGES[@]}"; do
		[ "$o" = "$img" ] && continue
		dump "$o" "$T/got"
		cmp -s "$T/got" "$T/$o.old" || fail "$o: changed by a crash of $img's round: $(cmp "$T/got" "$T/$o.old" 2>&1)"
	done
	dump "$img" "$T/got"
	sectors_between "$img" "$T/got" "$T/$img.old" "$T/$img.new"
	d=$(count_blocks "$img" DURABLE) t=$(count_blocks "$img" TOUCHED) a=$(stats_key "$img" allocated_blocks)
	[ "$a" -ge "$d" ] || fail "$img: allocated_blocks $a after kill -9, but $d blocks hold fsynced data ($2)"
	[ "$a" -le "$t" ] || fail "$img: allocated_blocks $a after kill -9, but only $t blocks were ever written ($2)"
	cp "$T/got" "$T/$img.old"
	cp "$T/got" "$T/$img.new"
}

# check_store WHEN: with no daemon running, sectorfs-img check on every
# image must exit 0 (clean): a crash leaves sidecar, map and backing file
# agreeing.
check_store() {
	local img rc
	for img in "${IMAGES[@]}"; do
		rc=0
		"$SECTORFS_IMG" check "$STORE/$img" >"$T/check.out" 2>&1 || rc=$?
		[ $rc -eq 0 ] || fail "$img: sectorfs-img check after kill -9 ($1) exited $rc, want 0 (clean): $(cat "$T/check.out")"
	done
}

crash_and_remount() {
	kill9_daemon
	mountpoint -q "$MNT" && fail "mount still there after kill -9"
	check_store "$1"
	start_daemon
}

round() {
	local r=$1 img=${IMAGES[$(( $1 % 3 ))]} l i off len soff doff dlen dsoff b ifb fl0 bg
	l=${LSS[$img]}

	# A: durable writes, unsynced writes, a writer in flight, kill -9.
	fl0=$(stats_key "$img" flushes)
	for i in 1 2 3; do
		read -r off len soff < <(rand_write "$img")
		put "$img" "$off" "$len" "$soff" "$T/$img.old $T/$img.new" conv=notrunc,fsync
		mark "$img" "$off" "$len" DURABLE
	done
	[ "$(stats_key "$img" flushes)" -ge $((fl0 + 3)) ] || fail "$img: dd conv=fsync did not reach the daemon as a flush"
	# A durable range, and on odd rounds 2 durable blocks for the writer below.
	read -r doff dlen dsoff < <(rand_write "$img")
	put "$img" "$doff" "$dlen" "$dsoff" "$T/$img.old $T/$img.new" conv=notrunc,fsync
	mark "$img" "$doff" "$dlen" DURABLE
	ifb=$(fresh_block "$img")
	mark "$img" $((ifb * BS)) $((2 * BS)) TOUCHED
	if ((r % 2)); then
		put "$img" $((ifb * BS)) $((2 * BS)) $((1024 * 1024)) "$T/$img.old $T/$img.new" conv=notrunc,fsync
		mark "$img" $((ifb * BS)) $((2 * BS)) DURABLE
	fi
	# From here on no fsync: writes to fresh blocks, the durable range
	# overwritten (old or new per sector)...
	for i in 1 2 3; do
		read -r off len soff < <(rand_write "$img")
		put "$img" "$off" "$len" "$soff" "$T/$img.new"
	done
	put "$img" "$doff" "$dlen" $(((dsoff + 4096) % (1024 * 1024))) "$T/$img.new"
	# ... and a writer still going when the daemon dies, sector by sector,
	# over 2 fresh blocks (even rounds) or 2 blocks of fsynced data (odd).
	dd if="$T/src" of="$T/$img.new" bs="$l" count=$((2 * BS / l)) seek=$((ifb * BS / l)) conv=notrunc status=none
	dd if="$T/src" of="$MNT/$img" bs="$l" count=$((2 * BS / l)) seek=$((ifb * BS / l)) \
		oflag=direct conv=notrunc,nocreat status=none 2>/dev/null &   # nocreat: never a file in the bare mount point
	bg=$!
	sleep 0.0$((RANDOM % 3))$((RANDOM % 9 + 1))
	kill9_daemon
	wait $bg 2>/dev/null
	# Junk in the backing file of blocks never written, while no daemon runs.
	for i in 1 2 3; do
		b=$(fresh_block "$img")
		dd if=/dev/urandom of="$STORE/$img" bs=$BS count=1 seek="$b" conv=notrunc status=none
	done
	check_store "round $r A"
	start_daemon
	check_after_crash "$img" "round $r A"
	echo "# round $r: $(($(cmp -l <(dd if="$T/got" bs=$BS skip="$ifb" count=2 status=none) \
		<(dd if="$T/src" bs=$BS count=2 status=none) 2>/dev/null |
		awk -v L="$l" 'BEGIN { last = -1 } { s = int(($1 - 1) / L); if (s != last) { n++; last = s } } END { print -n }') + 2 * BS / l)) of \
$((2 * BS / l)) sectors of the in-flight writer ($( ((r % 2)) && echo "over fsynced data" || echo "fresh blocks")) read as written after kill -9"
	pass "round $r ($img): after kill -9, fsynced writes byte-exact, unsynced and in-flight writes old or new per sector, never-written blocks zero despite junk, allocation consistent, sectorfs-img check clean"

	# B: a fsynced range crossing a block boundary, overwritten in part, kill -9.
	b=$(fresh_block "$img")
	off=$((b * BS + BS - 4 * l))
	soff=$(((RANDOM % 512) * 1024))
	put "$img" $off $((8 * l)) "$soff" "$T/$img.old $T/$img.new" conv=notrunc,fsync
	mark "$img" $off $((8 * l)) DURABLE
	put "$img" $((off + 2 * l)) $((4 * l)) $(((soff + 700 * 1024) % (1024 * 1024))) "$T/$img.new"
	cmp -s "$T/$img.old" "$T/$img.new" && fail "test bug: the overwrite did not change the model"
	crash_and_remount "round $r B"
	check_after_crash "$img" "round $r B"
	pass "round $r ($img): a fsynced range overwritten in part without fsync reads old or new data per sector after kill -9; sectorfs-img check clean"
}

for img in "${IMAGES[@]}"; do
	truncate -s $SIZE "$T/$img.old" "$T/$img.new"
done
sidecar c4kn 16M 4kn thin 64K
sidecar c512n 16M 512n zeroedthick 64K
sidecar c512e 16M 512e thin 64K false
start_daemon
for ((r = 1; r <= ROUNDS; r++)); do
	round $r
done

# A clean unmount keeps everything.
stop_daemon
start_daemon
for img in "${IMAGES[@]}"; do
	dump "$img" "$T/got"
	cmp -s "$T/got" "$T/$img.old" || fail "$img: changed by a clean unmount and remount"
done
pass "a clean unmount and remount keep every image as it was"

# O_DSYNC: each write is durable when it returns, as if followed by fdatasync.
img=c4kn
b=$(fresh_block $img)
put $img $((b * BS + 4096)) 8192 12288 "$T/$img.old $T/$img.new" oflag=dsync
crash_and_remount "O_DSYNC"
dump $img "$T/got"
cmp -s "$T/got" "$T/$img.old" || fail "$img: a write made with O_DSYNC (dd oflag=direct,dsync, 8K at $((b * BS + 4096)), first write to block $b) is lost after kill -9: $(cmp "$T/got" "$T/$img.old" 2>&1); allocated_blocks $(stats_key $img allocated_blocks)"
pass "an O_DSYNC write survives kill -9"
stop_daemon
