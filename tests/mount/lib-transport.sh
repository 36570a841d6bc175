# SPDX-License-Identifier: MIT
# lib-transport.sh - what the transport-*.sh tests share: how requests
# travel between the kernel and the daemon.  Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-transport.sh"
#
# It makes the tests' requirements (FUSE, GNU dd) and declares three 16 MiB
# thin images with 64 KiB blocks: k4 (4kn), e512 (512e), n512 (512n).
#
# The kernel's switch for FUSE over io_uring, fuse.enable_uring ($PARAM),
# is never changed by a test: a scenario that needs it N or Y says so and
# skips (77) when it is not (.ci/run sets it Y, as root, for its second
# pass of the mount tests, with SECTORFS_IO_URING=on).
requires_fuse
requires_gnu_dd

M=$((1024 * 1024))
PARAM=/sys/module/fuse/parameters/enable_uring
sidecar k4 16M 4kn thin 64K
sidecar e512 16M 512e thin 64K
sidecar n512 16M 512n thin 64K

# jkey NAME KEY: a number from the image's JSON stats.
jkey() { grep -o "\"$2\":[0-9]*" "$MNT/.stats/$1.json" | head -n1 | cut -d: -f2; }

# uring_param: the value of $PARAM (N or Y), or "none" where this kernel has no FUSE over io_uring.
uring_param() { if [ -e "$PARAM" ]; then cat "$PARAM"; else echo none; fi; }

# requires_uring_param VALUE...: skip unless $PARAM is one of the VALUEs (none: not there).
requires_uring_param() {
	local v got
	got=$(uring_param)
	for v in "$@"; do [ "$got" = "$v" ] && return 0; done
	skip "needs $PARAM $* (it is $got; a test never sets it, .ci/run's io_uring pass sets Y)"
}

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

# inflight_writers SECONDS: 4 fio jobs of 4 KiB random O_DIRECT writes at QD 32 on k4, in the background (FIO).
inflight_writers() {
	fio --name=fl --filename="$MNT/k4" --direct=1 --size=16M --rw=randwrite --bs=4k --ioengine=libaio \
		--iodepth=32 --numjobs=4 --time_based --runtime="$1" --randrepeat=0 >"$T/fl.out" 2>&1 &
	FIO=$!
	on_exit "kill $FIO"
	sleep 1
}

# on_each_transport FUNCTION: FUNCTION LABEL OPTIONS... on each transport
# this kernel serves as it is: in .ci/run's io_uring pass (SECTORFS_IO_URING=on,
# which lib.sh gives every daemon) over io_uring alone; else over /dev/fuse
# (-o io_uring=off, no other transport option), then over io_uring too
# when $PARAM is already Y.
on_each_transport() {
	if [ "${SECTORFS_IO_URING:-}" = on ]; then
		"$1" "-o io_uring=on"
		return
	fi
	TRANSPORT_OPTS=()
	"$1" /dev/fuse -o io_uring=off
	if [ "$(uring_param)" = Y ]; then
		"$1" io_uring -o io_uring=on
	else
		echo "# $PARAM is $(uring_param): io_uring is left to .ci/run's io_uring pass"
	fi
}
