#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-redo.sh - sectorfs-bench redo: --redo-block 512 on 4kn exits 1
# saying "smaller than the disk's logical sector 4096" and writes nothing;
# fixed:4096 records on 4096-byte redo blocks waste nothing (padding 0,
# bytes written = redo bytes = commits * 4096); every log write is one
# write and one flush for the daemon, and bytes_written equals its delta;
# uniform records on 512-byte blocks waste something, less than
# everything; on 512e it warns about read-modify-writes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"
run_alone

bench_serve

w0=$(stats_key k4 writes)
rc=0
"$SECTORFS_BENCH" redo --redo-block 512 --time 0.2 "$MNT/k4" > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 1 "redo --redo-block 512 on 4kn: exit status"
grep -q "redo block 512 is smaller than the disk's logical sector 4096; a database would refuse to start" "$T/err" ||
	fail "redo --redo-block 512 on 4kn says: $(cat "$T/err")"
expect_eq "$(delta k4 writes "$w0")" 0 "redo refused on 4kn: writes"
pass "redo --redo-block 512 on 4kn refuses to start (exit 1, clear message), writes nothing"

w0=$(stats_key k4 writes); b0=$(stats_key k4 bytes_written); f0=$(stats_key k4 flushes)
"$SECTORFS_BENCH" redo --redo-block 4096 --record-dist fixed:4096 --clients 4 --time 0.3 --repeat 1 --json "$MNT/k4" \
	> "$T/redo.json" 2>"$T/err" || fail "redo fixed:4096 failed: $(cat "$T/err")"
jcheck "$T/redo.json" "redo fixed:4096 on 4096-byte blocks" '
if not (d["commits"] > 0 and d["log_writes"] > 0): bad("no commits or log writes")
if (d["padding_bytes"], d["wastage"]) != (0, 0): bad("wastage %r, padding %r" % (d["wastage"], d["padding_bytes"]))
if not d["bytes_written"] == d["redo_bytes"] == 4096 * d["commits"]: bad("bytes written != redo bytes != commits * 4096")
if d["bytes_written"] != a[0]: bad("bytes_written %d, the daemon counted %d" % (d["bytes_written"], a[0]))
if d["log_writes"] != a[1]: bad("log_writes %d, the daemon counted %d writes" % (d["log_writes"], a[1]))
if d["fdatasyncs"] != a[2]: bad("fdatasyncs %d, the daemon counted %d flushes" % (d["fdatasyncs"], a[2]))
c = d["commit_latency"]
if not (c["count"] == d["commits"] and c["max_us"] >= c["p99_us"] >= c["p50_us"] > 0): bad("commit latency %r" % c)
' "$(delta k4 bytes_written "$b0")" "$(delta k4 writes "$w0")" "$(delta k4 flushes "$f0")"
pass "redo fixed:4096 on 4096-byte blocks: wastage 0; writes, flushes and bytes equal the daemon's"

b0=$(stats_key n512 bytes_written)
"$SECTORFS_BENCH" redo --redo-block 512 --clients 3 --time 0.3 --repeat 1 --json "$MNT/n512" > "$T/redo2.json" 2>"$T/err" ||
	fail "redo uniform on 512n failed: $(cat "$T/err")"
jcheck "$T/redo2.json" "redo uniform:100-2000 on 512-byte blocks" '
if not 0 < d["wastage"] < 1: bad("wastage %r" % d["wastage"])
if d["bytes_written"] % 512 or d["bytes_written"] - d["redo_bytes"] != d["padding_bytes"]: bad("padding")
if d["bytes_written"] != a[0]: bad("bytes_written %d, the daemon counted %d" % (d["bytes_written"], a[0]))
' "$(delta n512 bytes_written "$b0")"
"$SECTORFS_BENCH" redo --redo-block 512 --time 0.2 "$MNT/e512" > "$T/redo.txt" 2>"$T/err" || fail "redo on 512e failed: $(cat "$T/err")"
grep -q "read-modify-write" "$T/err" || fail "redo 512 on 512e does not warn about read-modify-writes"
for w in "^commits " "^log writes " "^redo bytes " "^bytes written " "^padding .*wastage" "^commit .* us\|^commit .* ms"; do
	grep -q "$w" "$T/redo.txt" || fail "redo text output lacks '$w': $(cat "$T/redo.txt")"
done
pass "redo uniform records on 512-byte blocks: some wastage, padding adds up; 512e warns about RMW"

stop_daemon
pass "daemon unmounted and exited 0"
