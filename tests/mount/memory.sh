#!/bin/bash
# SPDX-License-Identifier: MIT
# memory.sh - the daemon's memory under a heavy load is bounded and given
# back when the load ends.
#
# Proves: four images under 8 seconds of fio (4 jobs x QD8, 1 MiB and
# 4 KiB random reads and writes, O_DIRECT, and a buffered job whose
# unaligned writes are read-modify-writes) take the daemon's RSS to at most
# 128 MiB plus 2 MiB per worker thread (request buffer, and a read reply or
# a pool buffer), and within 20 s after the load the RSS is back within
# 32 MiB of what it was idle before (the quiet mount gives workers'
# request buffers, pool buffers and the allocator's free pages back;
# sectorfs-bench scale measures the figure, the bound here is generous).
# The same bound holds over FUSE over io_uring (.ci/run's second pass):
# there each ring entry's worker drops its payload buffer's pages (1 MiB)
# between requests once the mount is quiet.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd fio
# AddressSanitizer's allocator keeps freed memory in quarantine: RSS is its own
if command -v ldd >/dev/null 2>&1 && ldd "$SECTORFS" 2>/dev/null | grep -q 'libasan'; then
	skip "the daemon is built with AddressSanitizer, whose allocator sets the RSS"
fi

rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$DPID/status"; }
threads() { ls "/proc/$DPID/task" | wc -l; }

for d in d0 d1 d2 d3; do sidecar "$d" 256M 4kn thin; done
start_daemon
ls -l "$MNT" >/dev/null
for d in d0 d1 d2 d3; do
	dd if="$MNT/$d" of=/dev/null bs=4096 count=1 iflag=direct status=none || fail "read of $d"
done
sleep 3
IDLE=$(rss_kib)

cat > "$T/load.fio" <<EOF
[global]
direct=1
ioengine=libaio
iodepth=8
rw=randrw
bssplit=4k/40:1m/60
time_based
runtime=8
size=256m
allow_file_create=0
[j0]
filename=$MNT/d0
[j1]
filename=$MNT/d1
[j2]
filename=$MNT/d2
[j3]
filename=$MNT/d3
[buffered]
direct=0
ioengine=psync
iodepth=1
bs=1536
rw=randwrite
filename=$MNT/d0
EOF
fio --output="$T/fio.out" "$T/load.fio" >/dev/null 2>&1 &
FIO=$!
on_exit "kill $FIO"
PEAK=0 PEAKT=0
while kill -0 $FIO 2>/dev/null; do
	r=$(rss_kib)
	t=$(threads)
	[ "${r:-0}" -gt $PEAK ] && PEAK=$r
	[ "${t:-0}" -gt $PEAKT ] && PEAKT=$t
	sleep 0.1
done
wait $FIO || fail "fio failed: $(tail -n 5 "$T/fio.out")"
BOUND=$(( (128 + 2 * PEAKT) * 1024 ))
[ $PEAK -le $BOUND ] || fail "RSS peaked at $((PEAK / 1024)) MiB under the load, bound $((BOUND / 1024)) MiB ($PEAKT threads)"
pass "RSS $((IDLE / 1024)) MiB idle, $((PEAK / 1024)) MiB at the peak of the load ($PEAKT threads; bound $((BOUND / 1024)) MiB)"

SLACK=$((32 * 1024))
grep -q '^sectorfs: info: FUSE over io_uring' "$T/daemon.log" && echo "# over io_uring: the ring entries' payload buffers are given back too"
for ((i = 0; i < 200; i++)); do
	AFTER=$(rss_kib)
	[ "$AFTER" -le $((IDLE + SLACK)) ] && break
	sleep 0.1
done
[ "$AFTER" -le $((IDLE + SLACK)) ] ||
	fail "RSS still $((AFTER / 1024)) MiB 20 s after the load, $((IDLE / 1024)) MiB before it (peak $((PEAK / 1024)) MiB)"
pass "RSS back to $((AFTER / 1024)) MiB $((i / 10)).$((i % 10)) s after the load ($((IDLE / 1024)) MiB idle before)"
stop_daemon
