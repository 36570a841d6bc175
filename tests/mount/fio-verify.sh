#!/bin/bash
# SPDX-License-Identifier: MIT
# fio-verify.sh - what an application writes is what it reads back, under
# concurrent asynchronous direct I/O, on every path an image is used
# (SPEC.md: the I/O rules; Provisioning: lazy zeroing, parallel I/O to
# different blocks, discard).
#
# fio writes random data with crc32c verify headers (verify=crc32c,
# do_verify=1: every block written is read back and checked once the job's
# writes are done), 4 jobs in parallel, each in its own region
# (offset_increment), libaio with iodepth 16, O_DIRECT:
#  - through the mount, a thin 512n image with 1M blocks, random writes of
#    512 B .. 128 KiB; the regions are not multiples of the block size, so
#    neighbouring jobs race on the first write of the blocks they share;
#    every block of the written range ends up allocated, nothing else;
#  - through the mount, a zeroedthick 512e image, random writes of 512 B,
#    2 KiB, 4 KiB and 64 KiB (the small ones are read-modify-writes);
#  - through a loop device (losetup -b 4096 --direct-io=on) over a thin 4kn
#    image, random writes of 4 KiB .. 256 KiB;
#  - trim mix, through a loop device over a thin 4kn image with 64K blocks:
#    one randtrimwrite job and three trimwrite jobs (each block is
#    discarded, then written, then verified); afterwards a discard of a
#    range that is not block-aligned (blkdiscard) frees exactly the blocks
#    it covers whole, the range reads zeros, and the data around it
#    (including the parts of the partly covered blocks) is unchanged;
#    blkdiscard -z (ZERO_RANGE) reads zeros and keeps the allocation.
# Each fio run must exit 0, report "error" : 0 for every job, print no
# "verify:" error, and have read back (verified) as many bytes as it wrote.
# The daemon refuses no I/O as misaligned.  fio runs in $T with
# verify_state_save=0, so it leaves no state files behind.
#
# fio 3.33 note: rw=randtrimwrite only writes in a job whose offset is 0
# (jobs at other offsets only trim), so the trim mix uses randtrimwrite for
# the job at offset 0 and trimwrite for the others.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_loop
requires_cmd fio timeout blkdiscard blockdev sha256sum cmp
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio has no libaio engine"

M=$((1024 * 1024))

# fio_json_sums JSON: "READ WRITE TRIM" io_bytes summed over all jobs.
fio_json_sums() {
	awk '
		/"(read|write|trim)" : \{/ { match($0, /"(read|write|trim)"/); dir = substr($0, RSTART + 1, RLENGTH - 2); next }
		/"io_bytes" :/ && dir != "" { gsub(/[^0-9]/, "", $0); sum[dir] += $0; dir = ""; next }
		END { printf "%d %d %d\n", sum["read"], sum["write"], sum["trim"] }
	' "$1"
}

# run_fio WHAT JOBFILE: run fio in $T, check exit status, JSON errors and
# verify errors; sets RB WB TB (bytes read, written, trimmed).
run_fio() {
	local what=$1 job=$2 rc=0 errs
	(cd "$T" && timeout -k 5 "$STEP_TIMEOUT" fio --output-format=json --output="$T/fio.json" "$job") \
		2>"$T/fio.err" || rc=$?
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$what: fio hung (no end in $STEP_TIMEOUT s)"
	[ $rc -eq 0 ] || fail "$what: fio exited $rc: $(head -c 2000 "$T/fio.err")"
	grep -q '"jobname"' "$T/fio.json" || fail "$what: no JSON report from fio: $(head -c 1000 "$T/fio.json")"
	errs=$(grep '"error" :' "$T/fio.json" | grep -v '"error" : 0,' || true)
	[ -z "$errs" ] || fail "$what: fio job errors: $errs"
	grep -q 'verify:' "$T/fio.err" && fail "$what: fio verify errors: $(grep 'verify:' "$T/fio.err" | head -5)"
	read -r RB WB TB < <(fio_json_sums "$T/fio.json")
	[ "$WB" -gt 0 ] || fail "$what: fio wrote nothing"
	[ "$RB" -eq "$WB" ] || fail "$what: fio verified $RB bytes of the $WB it wrote"
}

# jobfile FILE TARGET RW BLOCKSIZES JOBS REGION: N clones, each on its own region.
jobfile() {
	cat > "$1" <<-EOF
	[global]
	filename=$2
	ioengine=libaio
	direct=1
	iodepth=16
	rw=$3
	$4
	numjobs=$5
	size=$6
	offset_increment=$6
	verify=crc32c
	do_verify=1
	verify_fatal=1
	verify_state_save=0
	randrepeat=0
	[w]
	EOF
}

misaligned_none() {
	local n
	n=$(stats_key "$1" misaligned_rejected)
	[ "$n" = 0 ] || fail "$1: the daemon refused $n I/Os as misaligned"
}

# region_sum DEV OFF LEN: sha256 of a byte range of a block device (O_DIRECT).
region_sum() {
	timeout "$STEP_TIMEOUT" dd if="$1" iflag=direct,skip_bytes,count_bytes bs=1M skip="$2" count="$3" status=none |
		sha256sum | cut -d' ' -f1
}

# is_zero DEV OFF LEN: the range reads as zeros.
is_zero() {
	timeout "$STEP_TIMEOUT" dd if="$1" iflag=direct,skip_bytes,count_bytes bs=1M skip="$2" count="$3" status=none |
		cmp -s -n "$3" - /dev/zero
}

sidecar thin512n 64M 512n thin 1M
sidecar zt512e 64M 512e zeroedthick 1M
sidecar loop4kn 128M 4kn thin 1M
sidecar trim4kn 128M 4kn thin 64K
start_daemon

# ---- through the mount: thin 512n, regions of 12672K (not a multiple of 1M) ----
REG=$((12672 * 1024))
jobfile "$T/thin.fio" "$MNT/thin512n" randwrite "bsrange=512-128k" 4 "$REG"
run_fio "thin 512n via the mount" "$T/thin.fio"
[ "$WB" -eq $((4 * REG)) ] || fail "thin 512n: fio wrote $WB bytes, expected $((4 * REG))"
want=$(((4 * REG + M - 1) / M))
ab=$(stats_key thin512n allocated_blocks)
[ "$ab" -eq "$want" ] || fail "thin 512n: allocated_blocks $ab after writing [0, $((4 * REG))), expected $want"
misaligned_none thin512n
pass "thin 512n via the mount: 4 jobs x libaio QD16 O_DIRECT random 512B-128K writes, $WB bytes written and crc32c-verified; $ab blocks allocated"

# ---- through the mount: zeroedthick 512e, with sub-physical writes ----
REG=$((9984 * 1024))
jobfile "$T/zt.fio" "$MNT/zt512e" randwrite "bssplit=512/20:2k/20:4k/30:64k/30" 4 "$REG"
run_fio "zeroedthick 512e via the mount" "$T/zt.fio"
[ "$WB" -eq $((4 * REG)) ] || fail "zeroedthick 512e: fio wrote $WB bytes, expected $((4 * REG))"
rmw=$(stats_key zt512e rmw_writes)
fw=$(stats_key zt512e first_writes)
[ "$rmw" -gt 0 ] || fail "zeroedthick 512e: no rmw_writes counted for 512 B and 2 KiB writes"
[ "$fw" -gt 0 ] || fail "zeroedthick 512e: no first_writes counted"
misaligned_none zt512e
pass "zeroedthick 512e via the mount: 4 jobs x libaio QD16, 512B/2K/4K/64K random writes, $WB bytes verified ($rmw read-modify-writes, $fw first writes)"

# ---- through a loop device over a 4kn thin image ----
attach_loop "$MNT/loop4kn" 4096
[ "$(timeout 10 blockdev --getss "$DEV")" = 4096 ] || fail "loop4kn: $DEV logical block size is not 4096"
jobfile "$T/loop.fio" "$DEV" randwrite "bsrange=4k-256k" 4 $((24 * M))
run_fio "thin 4kn via $DEV" "$T/loop.fio"
[ "$WB" -eq $((96 * M)) ] || fail "thin 4kn via loop: fio wrote $WB bytes, expected $((96 * M))"
detach_loop "$DEV"
misaligned_none loop4kn
pass "thin 4kn via loop device (-b 4096, direct I/O): 4 jobs x libaio QD16 random 4K-256K writes, $WB bytes verified"

# ---- trim mix through a loop device over a 4kn thin image with 64K blocks ----
attach_loop "$MNT/trim4kn" 4096
[ "$(cat "/sys/block/${DEV#/dev/}/queue/discard_max_bytes" 2>/dev/null || echo 0)" -gt 0 ] ||
	fail "trim4kn: $DEV offers no discard (discard_max_bytes 0), though the image supports PUNCH_HOLE"
cat > "$T/trim.fio" <<-EOF
	[global]
	filename=$DEV
	ioengine=libaio
	direct=1
	iodepth=8
	bsrange=4k-256k
	size=24m
	verify=crc32c
	do_verify=1
	verify_fatal=1
	verify_state_save=0
	[rtw0]
	rw=randtrimwrite
	offset=0
	[tw]
	rw=trimwrite
	numjobs=3
	offset=24m
	offset_increment=24m
EOF
run_fio "trim mix via $DEV" "$T/trim.fio"
[ "$WB" -eq $((96 * M)) ] || fail "trim mix: fio wrote $WB bytes, expected $((96 * M))"
[ "$TB" -gt 0 ] || fail "trim mix: fio trimmed nothing"
d=$(stats_key trim4kn discards)
[ "$d" -gt 0 ] || fail "trim mix: fio trimmed $TB bytes but the daemon counted no discards"
ab0=$(stats_key trim4kn allocated_blocks)
[ "$ab0" -eq $((96 * M / (64 * 1024))) ] ||
	fail "trim mix: allocated_blocks $ab0 after every block of [0, 96M) was written last, expected $((96 * M / (64 * 1024)))"
pass "trim mix via loop device: randtrimwrite + 3 trimwrite jobs, $TB bytes trimmed ($d discards), $WB written and verified"

# Discard [24M+4K, 48M-4K): 382 whole 64K blocks freed, both ends zeroed in place.
K4=4096
h1=$(region_sum "$DEV" 0 $((24 * M + K4)))
h2=$(region_sum "$DEV" $((48 * M - K4)) $((48 * M + K4)))
timeout "$STEP_TIMEOUT" blkdiscard -o $((24 * M + K4)) -l $((24 * M - 2 * K4)) "$DEV" ||
	fail "blkdiscard -o $((24 * M + K4)) -l $((24 * M - 2 * K4)) $DEV failed"
is_zero "$DEV" $((24 * M + K4)) $((24 * M - 2 * K4)) || fail "discarded range [24M+4K, 48M-4K) does not read as zeros"
[ "$(region_sum "$DEV" 0 $((24 * M + K4)))" = "$h1" ] || fail "data before the discarded range changed (incl. the partly discarded block's head)"
[ "$(region_sum "$DEV" $((48 * M - K4)) $((48 * M + K4)))" = "$h2" ] || fail "data after the discarded range changed"
ab1=$(stats_key trim4kn allocated_blocks)
[ $((ab0 - ab1)) -eq 382 ] || fail "discard of [24M+4K, 48M-4K) freed $((ab0 - ab1)) blocks ($ab0 -> $ab1), expected the 382 it covers whole"
pass "blkdiscard of a range not block-aligned: reads zeros, frees exactly 382 whole blocks, neighbours unchanged"

# Write zeroes (ZERO_RANGE) over [4K, 8M): zeros, allocation kept.
wz0=$(stats_key trim4kn write_zeroes)
timeout "$STEP_TIMEOUT" blkdiscard -z -o "$K4" -l $((8 * M - K4)) "$DEV" || fail "blkdiscard -z on $DEV failed"
is_zero "$DEV" "$K4" $((8 * M - K4)) || fail "range zeroed with blkdiscard -z does not read as zeros"
[ "$(stats_key trim4kn write_zeroes)" -gt "$wz0" ] || fail "blkdiscard -z did not reach the daemon as write_zeroes"
[ "$(stats_key trim4kn allocated_blocks)" -eq "$ab1" ] || fail "blkdiscard -z changed allocated_blocks ($ab1 -> $(stats_key trim4kn allocated_blocks))"
detach_loop "$DEV"
misaligned_none trim4kn
pass "blkdiscard -z: range reads zeros, reached the daemon as write_zeroes, allocation kept"

stop_daemon
ls "$T"/*.state >/dev/null 2>&1 && fail "fio left verify state files in $T"
pass "daemon exits 0; no loop device or fio state file left"
