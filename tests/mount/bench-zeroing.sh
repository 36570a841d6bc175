#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-zeroing.sh - sectorfs-bench zeroing (temporary store and daemon,
# --mount of a running daemon, --store of a directory; 5, 2 and 1
# repeats, every run under "runs"): pass 1 shows zeroed_bytes = blocks *
# (block - xfer) and one first write per block for thin and zeroedthick,
# 0 for eagerzeroedthick; pass 2 shows none; bytes add up; the images and
# anything else made are removed afterwards, the running daemon is left
# running; a served store or a missing daemon exits 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"
run_alone

bench_serve

# ZCHECK: the invariants of a zeroing --json output; a = XFER BLOCK SIZE.
ZCHECK='
xfer, block, size = a
if [p["pass"] for p in d["passes"]] != [1, 2]: bad("passes %r" % [p["pass"] for p in d["passes"]])
for p in d["passes"]:
    if len(p["images"]) != 6: bad("pass %d has %d images" % (p["pass"], len(p["images"])))
    for i in p["images"]:
        st, n = i["stats"], "pass %d %s" % (p["pass"], i["name"])
        eager = i["provisioning"] == "eagerzeroedthick"
        want_z = 0 if eager or p["pass"] == 2 else (size // block) * (block - xfer)
        want_f = 0 if eager or p["pass"] == 2 else size // block
        if st["zeroed_bytes"] != want_z: bad("%s zeroed_bytes %d, want %d" % (n, st["zeroed_bytes"], want_z))
        if st["first_writes"] != want_f: bad("%s first_writes %d, want %d" % (n, st["first_writes"], want_f))
        if not i["bytes"] == st["bytes_written"] == size: bad("%s bytes %d, daemon %d" % (n, i["bytes"], st["bytes_written"]))
        if i["writes"] != size // xfer or not i["complete"]: bad("%s writes %d" % (n, i["writes"]))
        if not (i["iops"] > 0 and i["mb_per_s"] > 0 and i["latency"]["p99_us"] > 0): bad("%s figures" % n)
        if not (i["overhead_pct"] == i["overhead_pct"] and i["spread_pct"] >= 0): bad("%s overhead %r spread %r" % (n, i["overhead_pct"], i["spread_pct"]))
        if len(i["runs"]) != d["repeat"] or not all(r["complete"] for r in i["runs"]): bad("%s runs %r" % (n, i["runs"]))
'

"$SECTORFS_BENCH" zeroing --daemon "$SECTORFS" --size 8M --block-size 1M --xfer 32K --json > "$T/z1.json" 2>"$T/zerr" ||
	fail "zeroing (temporary store) failed: $(cat "$T/zerr")"
jcheck "$T/z1.json" "zeroing, temporary store" "$ZCHECK" $((32 * K)) $M $((8 * M))
tmpstore=$(jq_py "$T/z1.json" 'd["store"] if d["temporary_store"] else ""')
[ -n "$tmpstore" ] || fail "zeroing without --store or --mount did not use a temporary store"
[ -e "$tmpstore" ] && fail "zeroing left its temporary store behind: $tmpstore"
pass "zeroing, own daemon: pass 1 zeroed_bytes = 8*(1M-32K), 8 first writes for thin/zeroedthick, 0 for eager; pass 2 none; cleaned up"

"$SECTORFS_BENCH" zeroing --mount "$MNT" --size 4M --block-size 256K --xfer 64K --sector 4kn --repeat 2 > "$T/z2.txt" 2>"$T/zerr" ||
	fail "zeroing --mount failed: $(cat "$T/zerr")"
grep -q "^pass 1: fresh space" "$T/z2.txt" && grep -q "^pass 2: the same space" "$T/z2.txt" ||
	fail "zeroing text output lacks the two passes: $(cat "$T/z2.txt")"
grep -Eq "^thin +on +[0-9]+ +[0-9.]+ .*[+-][0-9.]+% .*[0-9.]+% +16 +3.0 MiB$" "$T/z2.txt" ||
	fail "zeroing --mount: pass 1 row of thin: $(cat "$T/z2.txt")"
grep -Eq "^eagerzeroedthick +off .*[+-][0-9.]+% .*[0-9.]+% +0 +0 B$" "$T/z2.txt" || fail "zeroing --mount: eager row: $(cat "$T/z2.txt")"
grep -q "^2 repeats, interleaved, medians" "$T/z2.txt" || fail "zeroing --mount --repeat 2: $(head -3 "$T/z2.txt")"
expect_eq "$(ls "$STORE" | tr '\n' ' ')" "e512 e512.json k4 k4.json n512 n512.json " "store after zeroing --mount"
expect_eq "$(ls "$MNT" | tr '\n' ' ')" "e512 k4 n512 " "mount after zeroing --mount"
kill -0 "$DPID" 2>/dev/null || fail "the daemon died during zeroing --mount"
pass "zeroing --mount: runs on the running daemon, removes its images, leaves the daemon running"

mkdir "$T/store2"
"$SECTORFS_BENCH" zeroing --daemon "$SECTORFS" --store "$T/store2" --size 2M --block-size 1M --repeat 1 --json > "$T/z3.json" 2>"$T/zerr" ||
	fail "zeroing --store failed: $(cat "$T/zerr")"
jcheck "$T/z3.json" "zeroing --store" "$ZCHECK" $((32 * K)) $M $((2 * M))
expect_eq "$(ls -A "$T/store2" | tr '\n' ' ')" "" "the --store directory after zeroing"
rc=0
"$SECTORFS_BENCH" zeroing --daemon "$SECTORFS" --store "$STORE" --size 2M > "$T/out" 2>"$T/zerr" || rc=$?
expect_eq $rc 1 "zeroing --store of a served store: exit status"
grep -q "already served" "$T/zerr" || fail "zeroing --store of a served store says: $(cat "$T/zerr")"
rc=0
"$SECTORFS_BENCH" zeroing --daemon "$T/no-such-daemon" --size 2M > "$T/out" 2>"$T/zerr" || rc=$?
expect_eq $rc 1 "zeroing with a missing daemon: exit status"
grep -q "no-such-daemon" "$T/zerr" || fail "zeroing with a missing daemon says: $(cat "$T/zerr")"
pass "zeroing --store: same invariants, the directory left as found; a served store or a missing daemon: exit 1"

stop_daemon
pass "daemon unmounted and exited 0"
