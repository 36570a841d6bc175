#!/bin/bash
# SPDX-License-Identifier: MIT
# transport.sh - how requests travel between the kernel and the daemon.
#
# Proves:
#  - max_background: the kernel lets the daemon have as many asynchronous
#    requests in flight as it has worker threads (64 by default, at least
#    12), -o max_threads=N gives N, -o max_background=N overrides both;
#    congestion_threshold is three quarters of it.  Read back from the
#    kernel's own view (the fusectl connection directory; mounted for the
#    test and unmounted after when it is not there, skipped as a part when
#    that cannot be done); the start-up line says the same number;
#  - no copy of the data: O_DIRECT reads and writes of whole sectors, 512 B
#    (512n, 512e) and 4 KiB to 1 MiB, synchronous (dd) and asynchronous
#    (fio, libaio, QD 8), reach the backing file without a bounce buffer
#    (the image's bounced_bytes stays 0 while bytes_written and bytes_read
#    count every byte), and what was written reads back.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

M=$((1024 * 1024))
sidecar k4 16M 4kn thin 64K
sidecar e512 16M 512e thin 64K
sidecar n512 16M 512n thin 64K

# jkey NAME KEY: a number from the image's JSON stats.
jkey() { grep -o "\"$2\":[0-9]*" "$MNT/.stats/$1.json" | head -n1 | cut -d: -f2; }

# ---- max_background, in the kernel's view ----
FUSECTL=/sys/fs/fuse/connections
fusectl_ok=
if [ -d "$FUSECTL" ] && [ "$(id -u)" -eq 0 ]; then
	if grep -q " $FUSECTL fusectl " /proc/self/mounts; then
		fusectl_ok=1
	elif mount -t fusectl fusectl "$FUSECTL" 2>/dev/null; then
		on_exit "umount $FUSECTL"
		fusectl_ok=1
	fi
fi

# conn_value FILE: a value of this mount's connection in fusectl.
conn_value() {
	local dev
	dev=$(mountpoint -d "$MNT") || fail "mountpoint -d $MNT failed"
	cat "$FUSECTL/${dev#*:}/$1" || fail "no $FUSECTL/${dev#*:}/$1"
}

# check_bg WANT [options...]: mount with the options; max_background WANT in the kernel and the log line.
check_bg() {
	local want=$1 got cong
	shift
	: > "$T/daemon.log"
	start_daemon "$@"
	grep -q "max_background $want\$" "$T/daemon.log" ||
		fail "${*:-defaults}: no start-up line saying max_background $want: $(cat "$T/daemon.log")"
	if [ -n "$fusectl_ok" ]; then
		got=$(conn_value max_background)
		cong=$(conn_value congestion_threshold)
		[ "$got" = "$want" ] || fail "${*:-defaults}: the kernel has max_background $got, expected $want"
		[ "$cong" = $((want * 3 / 4)) ] ||
			fail "${*:-defaults}: congestion_threshold $cong, expected $((want * 3 / 4))"
	fi
	stop_daemon
	pass "${*:-defaults}: max_background $want${fusectl_ok:+ (kernel: $got, congestion_threshold $cong)}"
}

check_bg 64
check_bg 20 -o max_threads=20
check_bg 12 -o max_threads=4
check_bg 200 -o max_background=200
[ -n "$fusectl_ok" ] || echo "# fusectl not available: max_background checked in the start-up line only"

# ---- no bounce copies ----

# no_bounce IMG SIZES...: O_DIRECT writes then reads of each size (dd, 4 each,
# at offsets that are multiples of the size), compared with what was written.
no_bounce() {
	local img=$1 bs n=4 w0 r0 w1 r1
	shift
	w0=$(jkey "$img" bytes_written) r0=$(jkey "$img" bytes_read)
	for bs in "$@"; do
		head -c $((bs * n)) /dev/urandom > "$T/src"
		dd if="$T/src" of="$MNT/$img" bs="$bs" seek=1 oflag=direct conv=notrunc status=none ||
			fail "$img: O_DIRECT write of $bs-byte blocks failed"
		dd if="$MNT/$img" of="$T/back" bs="$bs" skip=1 count=$n iflag=direct status=none ||
			fail "$img: O_DIRECT read of $bs-byte blocks failed"
		cmp -s "$T/src" "$T/back" || fail "$img: $bs-byte blocks read back differ from what was written"
	done
	w1=$(jkey "$img" bytes_written) r1=$(jkey "$img" bytes_read)
	[ $((w1 - w0)) -eq $((r1 - r0)) ] && [ $((w1 - w0)) -gt 0 ] ||
		fail "$img: bytes_written grew by $((w1 - w0)), bytes_read by $((r1 - r0))"
	[ "$(jkey "$img" bounced_bytes)" = 0 ] ||
		fail "$img: $(jkey "$img" bounced_bytes) bytes bounced for O_DIRECT I/O of $* bytes"
	pass "$img: O_DIRECT ${*} B, $((w1 - w0)) bytes each way, bounced_bytes 0"
}

: > "$T/daemon.log"
start_daemon
no_bounce k4 4096 8192 65536 131072 $M
no_bounce e512 512 4096 65536 $M
no_bounce n512 512 4096 $((512 * 1024)) $M
if command -v fio >/dev/null 2>&1; then
	for rw in randwrite randread; do
		fio --name=nb --filename="$MNT/k4" --direct=1 --size=8M --rw=$rw --bsrange=4k-1m --bs_unaligned=0 \
			--ioengine=libaio --iodepth=8 --numjobs=2 --io_size=16M --randrepeat=0 >"$T/fio.out" 2>&1 ||
			fail "fio $rw: $(tail -n5 "$T/fio.out")"
	done
	[ "$(jkey k4 bounced_bytes)" = 0 ] || fail "k4: $(jkey k4 bounced_bytes) bytes bounced under fio libaio QD8"
	pass "k4: fio libaio QD8 x 2 jobs, 4 KiB to 1 MiB: bounced_bytes 0"
fi
stop_daemon
