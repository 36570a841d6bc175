#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-sweep.sh - sectorfs-bench sweep on a real mount: on 4kn, 512 B,
# 1 KiB and 2 KiB are tried and refused (EINVAL), 4 KiB and up run;
# bytes_written / bytes_read / failed I/Os in --json equal the image's
# bytes_written / bytes_read / misaligned_rejected deltas; the text output
# has the table and the bar chart, --csv one row per size and direction;
# on 512n nothing is refused; on a loop device (when there are loop
# devices) the sector comes from BLKSSZGET.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"
run_alone

bench_serve

w0=$(stats_key k4 bytes_written); r0=$(stats_key k4 bytes_read); m0=$(stats_key k4 misaligned_rejected)
"$SECTORFS_BENCH" sweep --time 0.15 --min 512 --max 32K --qd 2 --json "$MNT/k4" > "$T/sweep.json" 2>"$T/err" ||
	fail "sweep --json on 4kn failed: $(cat "$T/err")"
jcheck "$T/sweep.json" "sweep --json on 4kn" '
if (d["logical_sector"], d["sector_from"]) != (4096, "xattr"): bad("sector %r" % d["logical_sector"])
sizes = [r["size"] for r in d["results"]]
if sizes != [512 << i for i in range(7)]: bad("sizes tried %r" % sizes)
for r in d["results"]:
    for k in ("write", "read"):
        t = r[k]
        if r["size"] < 4096 and (t["status"], t["errno"], t["ios"], t["bytes"]) != ("refused", "EINVAL", 0, 0):
            bad("%s of %d not refused with EINVAL: %r" % (k, r["size"], t))
        if r["size"] >= 4096 and not (t["status"] == "ok" and t["ios"] > 0 and t["mb_per_s"] > 0 and t["iops"] > 0):
            bad("%s of %d did not run: %r" % (k, r["size"], t))
        if t["bytes"] != t["ios"] * r["size"]: bad("%s of %d: bytes != ios * size" % (k, r["size"]))
if sum(r["write"]["bytes"] for r in d["results"]) + d["flush"]["bytes"] != d["bytes_written"]: bad("write bytes do not add up")
if sum(r["read"]["bytes"] for r in d["results"]) != d["bytes_read"]: bad("read bytes do not add up")
if not (d["flush"]["fdatasyncs"] >= 1 and d["flush"]["mean_us"] > 0 and 0 < d["flush"]["median_us"] and d["flush"]["bytes"] == 4096 * d["flush"]["fdatasyncs"]): bad("the flush line: %r" % d["flush"])
if d["bytes_written"] != a[0]: bad("bytes_written %d, the daemon counted %d" % (d["bytes_written"], a[0]))
if d["bytes_read"] != a[1]: bad("bytes_read %d, the daemon counted %d" % (d["bytes_read"], a[1]))
if d["failed_ios"] != a[2]: bad("failed_ios %d, the daemon rejected %d" % (d["failed_ios"], a[2]))
' "$(delta k4 bytes_written "$w0")" "$(delta k4 bytes_read "$r0")" "$(delta k4 misaligned_rejected "$m0")"
pass "sweep on 4kn: 512 B..2 KiB refused (EINVAL), 4 KiB..32 KiB run; bytes and refusals equal the daemon's"

"$SECTORFS_BENCH" sweep --time 0.1 --min 2K --max 8K "$MNT/k4" > "$T/sweep.txt" 2>"$T/err" || fail "sweep (text) failed: $(cat "$T/err")"
grep -q "transfer *write MB/s *write IOPS *read MB/s *read IOPS" "$T/sweep.txt" || fail "sweep: no table header"
grep -Eq "^ +2 KiB +refused \(EINVAL\) +refused \(EINVAL\)$" "$T/sweep.txt" || fail "sweep: 2 KiB row not refused: $(cat "$T/sweep.txt")"
grep -Eq "^ +8 KiB +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$T/sweep.txt" || fail "sweep: 8 KiB row has no figures"
grep -Eq "^ +8 KiB write \|#+ +[0-9.]+$" "$T/sweep.txt" || fail "sweep: no write bar for 8 KiB"
grep -Eq "^ +read  \|=+ +[0-9.]+$" "$T/sweep.txt" || fail "sweep: no read bar"
grep -q $'\033\|\r' "$T/sweep.txt" "$T/err" && fail "sweep wrote escape codes or a progress line into a pipe"
"$SECTORFS_BENCH" sweep --time 0.05 --min 512 --max 4K --write-only --csv "$MNT/n512" > "$T/sweep.csv" 2>"$T/err" ||
	fail "sweep --csv on 512n failed: $(cat "$T/err")"
expect_eq "$(head -1 "$T/sweep.csv" | cut -d, -f1-3)" "size_bytes,direction,status" "sweep --csv: header"
expect_eq "$(tail -n +2 "$T/sweep.csv" | cut -d, -f1-3 | tr '\n' ' ')" \
	"512,write,ok 1024,write,ok 2048,write,ok 4096,write,ok " "sweep --csv --write-only on 512n: rows"
pass "sweep: table and bar chart with refused rows; --csv one row per size and direction; 512n refuses nothing"

# On a loop device the sector comes from BLKSSZGET (the kernel refuses 2 KiB there).
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null 2>&1 && [ -e /dev/loop-control ]; then
	# attach_loop's exit-time detach would outlive ours: the device number
	# could belong to someone else by then.  Detach once, guarded.
	dev=$(losetup -f --show -b 4096 --direct-io=on "$MNT/k4") || fail "losetup -b 4096 $MNT/k4 failed"
	touch "$T/loop-attached"
	on_exit "[ -e '$T/loop-attached' ] && losetup -d '$dev'"
	"$SECTORFS_BENCH" sweep --time 0.05 --min 2K --max 4K --span 1M --json "$dev" > "$T/loop.json" 2>"$T/err" ||
		fail "sweep on $dev failed: $(cat "$T/err")"
	jcheck "$T/loop.json" "sweep on a 4096-byte loop device" '
if (d["logical_sector"], d["sector_from"], d["span"]) != (4096, "BLKSSZGET", 1 << 20): bad("disk %r" % d)
st = [(r["size"], r[k]["status"]) for r in d["results"] for k in ("write", "read")]
if st != [(2048, "refused"), (2048, "refused"), (4096, "ok"), (4096, "ok")]: bad("statuses %r" % st)
'
	losetup -d "$dev" && rm -f "$T/loop-attached" || fail "losetup -d $dev failed"
	pass "sweep on a loop device: sector from BLKSSZGET, 2 KiB refused"
else
	pass "sweep on a loop device # SKIP needs root and loop devices"
fi

stop_daemon
pass "daemon unmounted and exited 0"
