#!/bin/bash
# SPDX-License-Identifier: MIT
# first-write-race.sh - "first writes to the same block from several
# threads are serialised" (SPEC.md, Provisioning): many writers racing on
# the first write of the same fresh blocks lose nothing.
#
# Each round uses a fresh thin image with 1M blocks and lets 16 or 32
# writers hit the same 2-4 never-written blocks at once, each writer its own
# sectors, so a writer that zeroed "the rest of the block" after another
# one had written there would wipe that one's data:
#  - fio rounds (O_DIRECT, thread=1): job k of N writes every N-th chunk
#    starting at chunk k (rw=write:hole, offset_increment), with
#    verify=crc32c headers; only when all jobs are done does a second fio
#    run (verify_only) read every chunk back: no chunk lost or misplaced;
#  - dd rounds: 16 GNU dd oflag=direct, one per range, all released at
#    once, then each range compared byte for byte with what its dd wrote;
#  - in every round the stats agree: every write arrived, exactly one first
#    write per block (first_writes = allocated_blocks = blocks) and each
#    block zeroed exactly once (zeroed_bytes = blocks x (1M - first write
#    size)).
# Sector formats and zero offload vary between rounds.
#
# Last, "I/O to different blocks runs in parallel": a 4K write must not
# wait for a slow first write (64M of zeros) to another block of the same
# image.  Without that, the kernel hands the daemon one write per image at
# a time and the rounds above cannot race inside the daemon at all.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd fio

BS=$((1024 * 1024))
BASE=$((2 * BS))            # the racing region: NB fresh blocks from block 2
NB=0 REGION=0

# check_stats IMG WRITES FIRST_IO_SIZE: the stats after one round.
check_stats() {
	local img=$1 w fw zb ab
	w=$(stats_key "$img" writes) fw=$(stats_key "$img" first_writes)
	zb=$(stats_key "$img" zeroed_bytes) ab=$(stats_key "$img" allocated_blocks)
	[ "$w" -eq "$2" ] || fail "$img: writes $w, expected $2 (a write was lost before the daemon?)"
	[ "$fw" -eq "$NB" ] || fail "$img: first_writes $fw, expected $NB (one per fresh block, the others must find it allocated)"
	[ "$zb" -eq $((NB * (BS - $3))) ] ||
		fail "$img: zeroed_bytes $zb, expected $((NB * (BS - $3))) (each block zeroed once, around its first $3-byte write)"
	[ "$ab" -eq "$NB" ] || fail "$img: allocated_blocks $ab, expected $NB"
}

# fio_round N SECTOR IOSIZE JOBS ZERO_OFFLOAD NB
fio_round() {
	local img="fio$1" io=$3 nj=$4
	NB=$6 REGION=$(($6 * BS))
	sidecar "$img" 16M "$2" thin 1M "$5"
	cat > "$T/$img.fio" <<-EOF
	[global]
	filename=$MNT/$img
	ioengine=psync
	direct=1
	thread=1
	fallocate=none
	bs=$io
	rw=write:$((io * (nj - 1)))
	offset=$BASE
	offset_increment=$io
	size=$REGION
	numjobs=$nj
	verify=crc32c
	do_verify=\${DO_VERIFY}
	[race]
	EOF
	start_daemon
	DO_VERIFY=0 fio --verify_state_save=0 --output="$T/fio.out" "$T/$img.fio" ||
		fail "$img: fio writers failed: $(grep -i 'err' "$T/fio.out" | head -5)"
	grep -q "err= *[1-9]" "$T/fio.out" && fail "$img: fio reported errors: $(grep -i 'err' "$T/fio.out" | head -5)"
	check_stats "$img" $((REGION / io)) "$io"
	DO_VERIFY=1 fio --verify_state_save=0 --verify_only --output="$T/fio.out" "$T/$img.fio" ||
		fail "$img: fio verify after the race failed: $(grep -i 'verify\|err' "$T/fio.out" | head -5)"
	grep -qi "verify:" "$T/fio.out" && fail "$img: fio verify: $(grep -i 'verify:' "$T/fio.out" | head -5)"
	stop_daemon
	pass "round $1: $nj fio threads, $io-byte O_DIRECT writes interleaved over $NB fresh 1M blocks ($2, zero_offload $5): crc32c verify clean, stats exact"
}

# dd_round N SECTOR ZERO_OFFLOAD NB: 16 dd processes, one range of REGION/16 each.
dd_round() {
	NB=$4 REGION=$(($4 * BS))
	local img="dd$1" k pids=() n=16 chunk=$((REGION / 16))
	sidecar "$img" 16M "$2" thin 1M "$3"
	for ((k = 0; k < n; k++)); do
		head -c $chunk /dev/urandom > "$T/src.$k"
	done
	start_daemon
	rm -f "$T/go"
	for ((k = 0; k < n; k++)); do
		(
			until [ -e "$T/go" ]; do :; done
			exec dd if="$T/src.$k" of="$MNT/$img" bs=4k seek=$(((BASE + k * chunk) / 4096)) \
				oflag=direct conv=notrunc status=none
		) &
		pids+=($!)
	done
	sleep 0.3
	touch "$T/go"
	for k in "${!pids[@]}"; do
		wait "${pids[$k]}" || fail "$img: dd writer $k failed"
	done
	for ((k = 0; k < n; k++)); do
		dd if="$MNT/$img" of="$T/got" bs=4k count=$((chunk / 4096)) skip=$(((BASE + k * chunk) / 4096)) \
			iflag=direct status=none || fail "$img: read back of range $k failed"
		cmp -s "$T/got" "$T/src.$k" ||
			fail "$img: range $k (offset $((BASE + k * chunk))) lost data in the race: $(cmp "$T/got" "$T/src.$k" 2>&1)"
	done
	check_stats "$img" $((REGION / 4096)) 4096
	stop_daemon
	pass "round $1: 16 concurrent dd oflag=direct writers on $NB fresh 1M blocks ($2, zero_offload $3): every range byte-exact, stats exact"
}

# in_write PID: PID (a dd with bs=4k) is inside its write(2) to the mount
# (/proc/PID/syscall: fd 0x1, count 0x1000, whatever the architecture).
in_write() {
	local fd len
	read -r _ fd _ len _ 2>/dev/null < "/proc/$1/syscall" || return 1
	[ "$fd" = 0x1 ] && [ "$len" = 0x1000 ]
}

# overlaps IMG_B OFF_B: start a first write to a fresh 64M block of image
# par-a (zero offload off: the daemon writes 64M of zeros, tens of ms),
# wait until its dd is inside write(2), then do a 4K write to IMG_B at
# OFF_B.  True if the first write was still in flight when that returned.
PAR_NEXT=1
overlaps() {
	local a i r=1
	dd if="$T/w" of="$MNT/par-a" bs=4k seek=$((PAR_NEXT * 16384 + 5)) oflag=direct conv=notrunc status=none &
	a=$!
	PAR_NEXT=$((PAR_NEXT + 1))
	for ((i = 0; i < 2000; i++)); do in_write $a && break; done
	if in_write $a; then
		dd if="$T/w" of="$MNT/$1" bs=4k seek="$2" oflag=direct conv=notrunc status=none || fail "$1: write failed"
		in_write $a && r=0
	fi
	wait $a || fail "par-a: first write failed"
	return $r
}

# parallel_check: "I/O to different blocks runs in parallel" (SPEC.md), which
# is also what lets the rounds above race in the daemon at all.  A 4K write
# to an allocated block must not wait for a first write to another block
# of the same image.  Control: the same pair on two images must overlap,
# else this host cannot show it and the check is skipped.
parallel_check() {
	local ok=0
	sidecar par-a 1G 4kn thin 64M false
	sidecar par-b 1G 4kn thin 64M false
	start_daemon
	head -c 4096 /dev/urandom > "$T/w"
	dd if="$T/w" of="$MNT/par-a" bs=4k seek=1 oflag=direct conv=notrunc status=none || fail "par-a: write failed"
	dd if="$T/w" of="$MNT/par-b" bs=4k seek=1 oflag=direct conv=notrunc status=none || fail "par-b: write failed"
	for _ in 1 2 3; do
		if overlaps par-b 3; then ok=1; break; fi
	done
	if [ $ok -eq 0 ]; then
		stop_daemon
		pass "writes to different blocks run in parallel # SKIP not even writes to two images overlapped here"
		return 0
	fi
	ok=0
	for _ in 1 2 3; do
		if overlaps par-a 3; then ok=1; break; fi
	done
	stop_daemon
	[ $ok -eq 1 ] || fail "a 4K write to an allocated block of an image waited, 3 times out of 3, for a first write \
to another block of the same image to finish (the same pair of writes on two images overlaps): writes to one image \
are serialised, not parallel (SPEC.md: I/O to different blocks runs in parallel), and the rounds above never \
raced in the daemon.  The kernel takes the inode lock for every FUSE direct_io write unless the open reply sets \
FOPEN_PARALLEL_DIRECT_WRITES (fuse_file_info.parallel_direct_writes, libfuse >= 3.15)"
	pass "a 4K write does not wait for a slow first write to another block of the same image: writes run in parallel"
}

fio_round 1 4kn 4096 16 true 4
fio_round 2 512n 512 16 false 2
fio_round 3 512e 4096 16 false 4
fio_round 4 4kn 4096 32 false 4
fio_round 5 512e 512 16 true 2
fio_round 6 512n 4096 32 true 4
dd_round 7 4kn false 4
dd_round 8 512n true 4
dd_round 9 512e false 4
parallel_check
