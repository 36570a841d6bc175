#!/bin/bash
# SPDX-License-Identifier: MIT
# trim.sh - the workers' buffers given back while requests come lose no
# request's bytes.
#
# Proves: with the daemon asked to drop its workers' buffer pages every
# 2 ms whatever the load (SFS_XP_TRIM_EVERY_MS, for tests only; normally
# only once the mount is quiet), two rounds of fio over two images
# (libaio QD16, O_DIRECT, random writes of 4 KiB to 1 MiB, crc32c verified
# as they go and read back again in a pass of their own) find every byte
# they wrote.  Over /dev/fuse a worker drops its request buffer's pages
# between two reads of /dev/fuse; over io_uring (.ci/run's second pass) a
# ring worker drops its entry's payload buffer while the entry waits in the
# kernel with no request in it (fs/uring/worker.c, "Idle").  Where strace is
# there, it shows the pages were dropped during the load.  Runs in about
# 15 s.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd fio

sidecar a 128M 4kn thin
sidecar b 128M 4kn thin
SFS_XP_TRIM_EVERY_MS=2 start_daemon
if command -v strace >/dev/null 2>&1; then
	timeout 4 strace -f -c -e trace=madvise -o "$T/strace.out" -p "$DPID" >/dev/null 2>&1 &
	STRACE=$!
fi
job=(--filename="$MNT/a:$MNT/b" --rw=randwrite --bssplit=4k/30:64k/30:256k/20:1m/20 --direct=1
	--ioengine=libaio --iodepth=16 --size=256m --verify=crc32c --verify_fatal=1 --verify_state_save=0)
for r in 1 2; do
	fio --output="$T/w.out" --name="w$r" "${job[@]}" --verify_backlog=64 --randseed=$r >/dev/null 2>&1 ||
		fail "round $r: fio's writes, verified as they went: $(grep -E 'err=|verify|bad' "$T/w.out" | head -n 5)"
	fio --output="$T/v.out" --name="w$r" "${job[@]}" --verify_only --randseed=$r >/dev/null 2>&1 ||
		fail "round $r: reading the writes back: $(grep -E 'err=|verify|bad' "$T/v.out" | head -n 5)"
done
pass "2 rounds of 256 MiB of 4K-1M writes, verified as they went and read back, with the buffers dropped every 2 ms"
if [ -n "${STRACE:-}" ]; then
	wait "$STRACE"
	n=$(awk '$NF == "madvise" { print $(NF - 1) }' "$T/strace.out")
	[ "${n:-0}" -gt 0 ] || fail "no madvise seen under the load: $(cat "$T/strace.out")"
	pass "the workers dropped their buffers' pages $n times in the first 4 s of the load"
fi
stop_daemon
