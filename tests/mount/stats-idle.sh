#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-idle.sh - the statistics of an idle image are packed (its memory
# given back) with every figure kept, and come back to life at its next I/O.
#
# 200 512e images each get reads, writes, first writes, an fsync, a
# misaligned write (refused: the recent refused list) and a partial
# physical-sector write (the recent read-modify-write list).  Proves: their
# NAME.json files read after 6 s of quiet (two idle looks: packed) are
# those read right after the I/O, key for key (every counter, histogram,
# latency percentile, recent list, reset generation), elapsed_seconds
# aside, which goes on from the same start; the daemon's RSS fell by more
# than 2 MiB meanwhile (the live stats of 200 touched images, some
# 12-16 KiB each, given back); the next read of an image counts on from
# its figures in the same generation; "reset" on a packed image gives
# zeros of a new generation.  (Under AddressSanitizer, whose allocator
# keeps freed memory in quarantine, the RSS is not looked at.)

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3

N=200
for ((i = 0; i < N; i++)); do sidecar "s$i" 1M 512e thin 64K; done
start_daemon

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"; }

python3 - "$MNT" $N <<'EOF' || fail "the I/O failed"
import errno, mmap, os, sys
mnt, n = sys.argv[1], int(sys.argv[2])
buf = mmap.mmap(-1, 65536)
buf.write(os.urandom(65536))
for i in range(n):
    fd = os.open("%s/s%d" % (mnt, i), os.O_RDWR | os.O_DIRECT)
    os.pwritev(fd, [memoryview(buf)[:4096 * (1 + i % 4)]], 0)          # first writes
    os.pwritev(fd, [memoryview(buf)[:4096]], 0)                        # an overwrite
    os.pwritev(fd, [memoryview(buf)[:512]], 65536 + 512 * (i % 8))     # a partial physical sector
    for k in range(1 + i % 5):
        os.preadv(fd, [memoryview(buf)[:512 << k]], 4096 * k)
    try:
        os.pwritev(fd, [memoryview(buf)[:512]], 100)                   # misaligned: refused
    except OSError as e:
        assert e.errno == errno.EINVAL
    os.fsync(fd)
    os.close(fd)
EOF
sleep 0.5
mkdir "$T/before" "$T/after"
for ((i = 0; i < N; i++)); do cat "$MNT/.stats/s$i.json" > "$T/before/s$i.json"; done
r0=$(rss)
sleep 6
r1=$(rss)
for ((i = 0; i < N; i++)); do cat "$MNT/.stats/s$i.json" > "$T/after/s$i.json"; done
python3 - "$T" $N <<'EOF' || fail "a figure changed while the images were idle"
import json, sys
t, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    a = json.load(open("%s/before/s%d.json" % (t, i)))
    b = json.load(open("%s/after/s%d.json" % (t, i)))
    ea, eb = a.pop("elapsed_seconds"), b.pop("elapsed_seconds")
    assert a == b, "s%d: %s" % (i, [k for k in a if a[k] != b.get(k)])
    assert 5.5 < eb - ea < 30, "s%d: elapsed %s then %s" % (i, ea, eb)
    assert a["refused_recent"] and a["rmw_recent"] and a["flushes"] == 1, "s%d: the I/O left no trace" % i
EOF
pass "$N images idle 6 s: every figure of their NAME.json the same, elapsed_seconds going on"
if command -v ldd >/dev/null 2>&1 && ldd "$SECTORFS" 2>/dev/null | grep -q 'libasan'; then
	pass "RSS not looked at: the daemon is built with AddressSanitizer # SKIP"
else
	[ $((r0 - r1)) -gt 2048 ] || fail "RSS $r0 KiB before the quiet, $r1 KiB after: the stats were not given back"
	pass "RSS $((r0 / 1024)) MiB -> $((r1 / 1024)) MiB while they were idle"
fi

gen=$(stats_key s7 reset_generation)
reads=$(stats_key s7 reads)
dd if="$MNT/s7" of=/dev/null bs=4096 count=1 iflag=direct status=none
[ "$(stats_key s7 reads)" = $((reads + 1)) ] || fail "s7: reads $(stats_key s7 reads) after one more, $reads before"
[ "$(stats_key s7 reset_generation)" = "$gen" ] || fail "s7: a new generation at the next I/O"
pass "the next read of an idle image counts on in the same generation"

gen=$(stats_key s9 reset_generation)
echo reset > "$MNT/.stats/s9"
[ "$(stats_key s9 reads)" = 0 ] && [ "$(stats_key s9 writes)" = 0 ] || fail "s9: reset left counts"
[ "$(stats_key s9 reset_generation)" -gt "$gen" ] || fail "s9: reset kept the generation"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(1 if j["refused_recent"] or j["rmw_recent"] else 0)' \
	"$MNT/.stats/s9.json" || fail "s9: reset kept the recent lists"
pass "reset of an idle image: zeros, a new generation, empty lists"
stop_daemon
