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
# Sector formats and zero offload vary between rounds.  (That the rounds
# race inside the daemon at all, parallel-blocks.sh shows.)
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

fio_round 1 4kn 4096 16 true 4
fio_round 2 512n 512 16 false 2
fio_round 3 512e 4096 16 false 4
fio_round 4 4kn 4096 32 false 4
fio_round 5 512e 512 16 true 2
fio_round 6 512n 4096 32 true 4
dd_round 7 4kn false 4
dd_round 8 512n true 4
dd_round 9 512e false 4

