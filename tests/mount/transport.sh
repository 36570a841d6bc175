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
#    count every byte), and what was written reads back; and 1 MiB reads
#    take no memory of their own in the daemon: the reply is read into the
#    buffer its request came in (the daemon's minor page faults stay far
#    below the 256 a read a fresh 1 MiB buffer would cost);
#  - the transport, -o io_uring=auto|on|off: with fuse.enable_uring=N
#    auto serves over /dev/fuse and says so in one line naming the module
#    parameter (nothing else is logged), on refuses to start with a message
#    naming it; with Y auto and on serve over io_uring (the start-up line
#    and the stats JSON say which transport is in use), off over /dev/fuse;
#    through the ring the checks above hold too (bounced_bytes 0, data read
#    back, no memory per read), and fio verifies 4 jobs x QD 16 of mixed sizes;
#  - ending with requests in flight, on each transport: SIGTERM while 4
#    fio jobs write at QD 32 ends the daemon (exit 0) within seconds and
#    fio gets errors, not a hang; a lazy unmount (fusermount3 -uz) with I/O
#    in flight lets it finish, then the daemon exits 0; so does a lazy
#    unmount while a process holds 900 opens of an image and then closes
#    them all at once (the last close tears the connection down while the
#    daemon reads the RELEASEs: a read that had taken one fails with
#    ECONNABORTED, which ended the daemon with exit 1 in 25 of 30 such
#    rounds before the daemon took it as the end of the session).
#  The module parameter is changed only where it exists, as root, outside
#  .ci/run's io_uring pass (whose daemons need it Y), and is put back.
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

# minflt PID: the minor page faults of a process so far (/proc/PID/stat, field 10).
minflt() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f8; }

# reads_in_place IMG: 128 O_DIRECT reads of 1 MiB cost the daemon under 32 page faults each
# (a reply buffer of its own, made and freed per read, costs 256: one a page).
reads_in_place() {
	local img=$1 f0 f1 i
	dd if=/dev/urandom of="$MNT/$img" bs=1M count=16 oflag=direct conv=notrunc status=none ||
		fail "$img: writing 16 MiB failed"
	dd if="$MNT/$img" of=/dev/null bs=1M count=16 iflag=direct status=none   # the buffers' first use
	f0=$(minflt "$DPID")
	for i in 1 2 3 4 5 6 7 8; do
		dd if="$MNT/$img" of=/dev/null bs=1M count=16 iflag=direct status=none || fail "$img: 1 MiB reads failed"
	done
	f1=$(minflt "$DPID")
	[ $((f1 - f0)) -lt $((128 * 32)) ] ||
		fail "$img: 128 reads of 1 MiB cost the daemon $((f1 - f0)) page faults (a buffer per read?)"
	pass "$img: 128 reads of 1 MiB, $((f1 - f0)) page faults in the daemon"
}

: > "$T/daemon.log"
start_daemon
no_bounce k4 4096 8192 65536 131072 $M
reads_in_place k4
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

# ---- the transport ----
PARAM=/sys/module/fuse/parameters/enable_uring

# transport_of NAME: the transport the stats JSON of an image names.
transport_of() { grep -o '"transport":"[^"]*"' "$MNT/.stats/$1.json" | cut -d'"' -f4; }

# expect_transport WANT [options...]: mount with the options; the stats say WANT, I/O works.
expect_transport() {
	local want=$1 got
	shift
	: > "$T/daemon.log"
	start_daemon "$@"
	got=$(transport_of k4)
	[ "$got" = "$want" ] || fail "${*}: transport '$got', expected '$want'; log: $(cat "$T/daemon.log")"
	head -c $((64 * 1024)) /dev/urandom > "$T/src"
	dd if="$T/src" of="$MNT/k4" bs=64K seek=3 oflag=direct conv=notrunc status=none || fail "${*}: write failed"
	dd if="$MNT/k4" of="$T/back" bs=64K skip=3 count=1 iflag=direct status=none || fail "${*}: read failed"
	cmp -s "$T/src" "$T/back" || fail "${*}: data read back differs"
}

# ring_checks: with the parameter Y, io_uring in every way it can be asked for.
ring_checks() {
	expect_transport io_uring -o io_uring=on
	grep -q "^sectorfs: info: FUSE over io_uring, [0-9]* queues\? x [0-9]* \(worker threads\?\|entr\(y\|ies\), [0-9]* event loops\?\), .*max_background" \
		"$T/daemon.log" || fail "-o io_uring=on: no start-up line saying io_uring: $(cat "$T/daemon.log")"
	no_bounce k4 4096 65536 $M
	no_bounce e512 512 4096 $M
	reads_in_place k4
	if command -v fio >/dev/null 2>&1; then
		fio --name=rv --filename="$MNT/n512" --direct=1 --size=16M --rw=randwrite --bsrange=512-1m \
			--bs_unaligned=0 --ioengine=libaio --iodepth=16 --numjobs=4 --offset_increment=4M --size=4M \
			--verify=crc32c --verify_fatal=1 --verify_state_save=0 --randrepeat=0 >"$T/fio.out" 2>&1 ||
			fail "fio verify through io_uring: $(grep -i -m5 'err\|verify' "$T/fio.out")"
		[ "$(jkey n512 bounced_bytes)" = 0 ] || fail "n512: $(jkey n512 bounced_bytes) bytes bounced through io_uring"
		pass "io_uring: fio 4 jobs x QD16, 512 B to 1 MiB, crc32c verified, bounced_bytes 0"
	fi
	stop_daemon
	pass "-o io_uring=on: $(sed -n 's/^sectorfs: info: //p' "$T/daemon.log" | head -n1)"
	if [ "${SECTORFS_IO_URING:-}" != on ]; then
		expect_transport io_uring
		stop_daemon
		expect_transport io_uring -o io_uring=auto
		stop_daemon
		expect_transport /dev/fuse -o io_uring=off
		stop_daemon
		pass "with $PARAM Y: auto and the default use io_uring, off /dev/fuse"
	fi
}

# From here on the checks name the transport each daemon gets, except in
# .ci/run's io_uring pass, where lib.sh gives every one -o io_uring=on
# (SECTORFS_IO_URING=off, the first pass, is not meant for them).
[ "${SECTORFS_IO_URING:-}" = on ] || TRANSPORT_OPTS=()
if [ "${SECTORFS_IO_URING:-}" = on ]; then
	# .ci/run's io_uring pass: the parameter is Y and stays so
	ring_checks
elif [ ! -e "$PARAM" ]; then
	echo "# no $PARAM: this kernel has no FUSE over io_uring"
	expect_transport /dev/fuse
	stop_daemon
	rc=0
	"$SECTORFS" -f -o io_uring=on "$STORE" "$MNT" >"$T/on.out" 2>&1 || rc=$?
	[ $rc -ne 0 ] && grep -q "no FUSE over io_uring" "$T/on.out" ||
		fail "-o io_uring=on without kernel support: exit $rc, $(cat "$T/on.out")"
	pass "no FUSE over io_uring in the kernel: auto serves over /dev/fuse, on refuses"
elif [ "$(id -u)" -ne 0 ]; then
	echo "# not root: $PARAM left as it is ($(cat "$PARAM"))"
else
	old=$(cat "$PARAM")
	on_exit "echo $old > $PARAM"
	echo N > "$PARAM"
	expect_transport /dev/fuse -o io_uring=auto
	stop_daemon
	want="sectorfs: info: /dev/fuse (FUSE over io_uring is off in this kernel: $PARAM is N), up to"
	grep -qF "$want" "$T/daemon.log" || fail "auto with $PARAM N: no line '$want...': $(cat "$T/daemon.log")"
	others=$(grep -v -e '^sectorfs: info: /dev/fuse (' -e '^sectorfs: serving ' -e '^sectorfs: up to ' "$T/daemon.log")
	[ -z "$others" ] || fail "auto with $PARAM N: more than the one line: $others"
	pass "auto with $PARAM N: /dev/fuse, and only the line '$(grep -F "$want" "$T/daemon.log" | cut -c1-90)...'"
	rc=0
	timeout 20 "$SECTORFS" -f -o io_uring=on "$STORE" "$MNT" >"$T/on.out" 2>&1 || rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "-o io_uring=on with $PARAM N: exit $rc"
	grep -q "enable_uring" "$T/on.out" || fail "-o io_uring=on with $PARAM N: the message does not name the parameter: $(cat "$T/on.out")"
	! mountpoint -q "$MNT" || fail "-o io_uring=on with $PARAM N left a mount"
	pass "-o io_uring=on with $PARAM N: exit $rc, '$(head -n1 "$T/on.out")'"
	echo Y > "$PARAM"
	ring_checks
	echo "$old" > "$PARAM"
fi

# ---- ending with requests in flight ----

# inflight_writers SECONDS: 4 fio jobs of 4 KiB random O_DIRECT writes at QD 32 on k4, in the background (FIO).
inflight_writers() {
	fio --name=fl --filename="$MNT/k4" --direct=1 --size=16M --rw=randwrite --bs=4k --ioengine=libaio \
		--iodepth=32 --numjobs=4 --time_based --runtime="$1" --randrepeat=0 >"$T/fl.out" 2>&1 &
	FIO=$!
	on_exit "kill $FIO"
	sleep 1
}

# in_flight LABEL [options...]: SIGTERM and a lazy unmount, each with I/O in flight.
in_flight() {
	local label=$1 rc
	shift
	command -v fio >/dev/null 2>&1 || return 0
	start_daemon "$@"
	inflight_writers 30
	kill -TERM "$DPID"
	STOP_TIMEOUT=20 wait_daemon "SIGTERM with fio's writes in flight ($label)"
	wait_gone "$FIO" 20 || fail "$label: fio still running 20 s after the daemon ended"
	rc=0
	wait "$FIO" || rc=$?
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	pass "$label: SIGTERM with 4 x QD32 writes in flight: daemon exit 0, fio exit $rc"
	start_daemon "$@"
	inflight_writers 3
	fusermount3 -uz "$MNT" || fail "$label: fusermount3 -uz failed"
	rc=0
	wait "$FIO" || rc=$?
	[ $rc -eq 0 ] || fail "$label: fio failed ($rc) after a lazy unmount: $(tail -n5 "$T/fl.out")"
	STOP_TIMEOUT=20 wait_daemon "the lazy unmount with I/O in flight ($label)"
	pass "$label: lazy unmount with I/O in flight: fio finished (exit 0), then the daemon exited 0"
	local round i
	for round in 1 2 3 4 5; do
		start_daemon "$@"
		rm -f "$T/held"
		python3 -c '
import os, sys, time
fds = [os.open(sys.argv[1], os.O_RDONLY) for _ in range(900)]
open(sys.argv[2], "w").close()
time.sleep(60)
' "$MNT/k4" "$T/held" &
		HOLD=$!
		on_exit "kill $HOLD"
		for ((i = 0; i < 200; i++)); do
			[ -e "$T/held" ] && break
			sleep 0.1
		done
		[ -e "$T/held" ] || fail "$label: 900 opens of k4 not done in 20 s"
		fusermount3 -uz "$MNT" || fail "$label: fusermount3 -uz failed"
		kill "$HOLD"
		wait "$HOLD" 2>/dev/null || true
		STOP_TIMEOUT=20 wait_daemon "the lazy unmount and 900 closes at once, round $round ($label)"
	done
	pass "$label: lazy unmount, then 900 opens of an image closed at once: the daemon exited 0, 5 rounds in 5"
}

if [ "${SECTORFS_IO_URING:-}" = on ]; then
	in_flight "-o io_uring=on"
else
	in_flight /dev/fuse -o io_uring=off
	if [ -e "$PARAM" ] && [ "$(id -u)" -eq 0 ]; then
		old=$(cat "$PARAM")
		echo Y > "$PARAM"
		in_flight io_uring -o io_uring=on
		echo "$old" > "$PARAM"
	fi
fi
