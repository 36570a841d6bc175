#!/bin/bash
# SPDX-License-Identifier: MIT
# bench.sh - sectorfs-bench (SPEC.md "Tools") on a real mount: each command
# run briefly, its output checked for structure and against the daemon's
# own statistics.
#
# Proves:
#  - --help of every command exits 0; an unknown command or option, or a
#    missing IMAGE, exits 1 with a message;
#  - sweep on 4kn: 512 B, 1 KiB and 2 KiB are tried and refused (EINVAL),
#    4 KiB and up run; bytes_written / bytes_read / failed I/Os in --json
#    equal the image's bytes_written / bytes_read / misaligned_rejected
#    deltas; the text output has the table and the bar chart, --csv one
#    row per size and direction; on 512n nothing is refused; on a loop
#    device (when there are loop devices) the sector comes from BLKSSZGET;
#  - redo: --redo-block 512 on 4kn exits 1 saying "smaller than the disk's
#    logical sector 4096" and writes nothing; fixed:4096 records on
#    4096-byte redo blocks waste nothing (padding 0, bytes written =
#    redo bytes = commits * 4096); every log write is one write and one
#    flush for the daemon, and bytes_written equals its delta; uniform
#    records on 512-byte blocks waste something, less than everything;
#  - zeroing (temporary store and daemon, --mount of a running daemon,
#    --store of a directory; 5, 2 and 1 repeats, every run under "runs"):
#    pass 1 shows zeroed_bytes = blocks *
#    (block - xfer) and one first write per block for thin and
#    zeroedthick, 0 for eagerzeroedthick; pass 2 shows none; bytes add up;
#    the images and anything else made are removed afterwards, the running
#    daemon is left running;
#  - scale (a store of 40 images, daemons under 128 descriptors): ready
#    times, RSS, descriptors (an idle image holds none), ls -l time, a
#    short load's peak and the RSS after it, the QD1 comparison, all in
#    its --json; its directory removed at the end (needs fio);
#  - SIGINT: redo stops early, prints what it measured (JSON, interrupted
#    true) and exits 130; nothing is written on stderr but messages (no
#    progress line when stderr is not a terminal); on a terminal (script)
#    a run longer than 2 s draws one;
#  - every --json output parses (python3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
run_alone
requires_cmd python3

requires_built "$SECTORFS_BENCH"

K=1024
M=$((1024 * 1024))

# expect_eq GOT WANT WHAT

# The interpreter itself: a pyenv-style shim costs a third of a second a call.
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=python3

# jq_py FILE EXPR: print a python expression over the JSON in FILE (as d).
jq_py() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# jcheck FILE WHAT CODE [ARG...]: run python CODE with d = the JSON in FILE
# and a = the ARGs (ints where they are numbers); CODE calls bad("...") for
# each broken invariant.  A file that does not parse is broken as a whole.
jcheck() {
	local f=$1 what=$2 code=$3 out
	shift 3
	out=$("$PY" -c '
import json, sys
errs = []
def bad(m): errs.append(m)
try:
    d = json.load(open(sys.argv[2]))
except Exception as e:
    print("not JSON (%s): %s" % (e, open(sys.argv[2]).read()[:400])); sys.exit(1)
a = [int(x) if x.lstrip("-").isdigit() else x for x in sys.argv[3:]]
exec(sys.argv[1])
if errs:
    print("; ".join(errs)); sys.exit(1)
' "$code" "$f" "$@" 2>&1) || fail "$what: $out"
}

# delta NAME KEY BEFORE: the change of a stats counter since BEFORE.
delta() { echo $(( $(stats_key "$1" "$2") - $3 )); }

sidecar k4 16M 4kn thin 64K
sidecar n512 16M 512n thin 64K
sidecar e512 16M 512e thin 64K
start_daemon

# ---- help and usage errors ----

for c in sweep zeroing redo scale; do
	"$SECTORFS_BENCH" $c --help > "$T/out" 2>&1 || fail "$c --help exits non-zero"
	grep -q "^usage: sectorfs-bench $c" "$T/out" || fail "$c --help has no usage line: $(head -3 "$T/out")"
done
"$SECTORFS_BENCH" --help | grep -q "^  redo " || fail "sectorfs-bench --help does not list redo"
for args in "frobnicate" "sweep" "sweep --bogus $MNT/k4" "redo $MNT/k4" "redo --redo-block 1000 $MNT/k4" \
	"sweep --time 0 $MNT/k4" "zeroing --store a --mount b" "scale --images 0" "scale --size 1000" "scale x"; do
	rc=0
	"$SECTORFS_BENCH" $args > "$T/out" 2>&1 || rc=$?
	expect_eq $rc 1 "sectorfs-bench $args: exit status"
	[ -s "$T/out" ] || fail "sectorfs-bench $args: no message"
done
pass "--help of every command exits 0; unknown commands, bad options and missing arguments exit 1"

# ---- sweep ----

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

# ---- redo ----

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

# ---- zeroing ----

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

# ---- scale ----

# A small store, the load and the comparison short: the figures are there and make sense.
if ! command -v fio >/dev/null 2>&1; then
	pass "scale # SKIP no fio"
else
# the daemon scale starts takes io_uring where the kernel offers it: a ring of its own for each
# of its 64 workers and one eventfd
RINGS=0
[ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ] && RINGS=65
"$SECTORFS_BENCH" scale --images 40 --nofile 128 --load-seconds 2 --after-seconds 3 --repeat 1 --compare-seconds 1 \
	--dir "$T" --json > "$T/scale.json" 2>"$T/scale.err" || fail "scale failed: $(cat "$T/scale.err")"
jcheck "$T/scale.json" "scale --json" "rings = $RINGS"'
if d["images"] != 40 or d["nofile"] != 128: bad("images/nofile %r %r" % (d["images"], d["nofile"]))
for k in ("ready_first_s", "ready_later_s", "ls_l_s", "ls_l_again_s"):
    if not (0 < d[k] < 60): bad("%s %r" % (k, d[k]))
for k in ("fds_first", "fds_later", "fds_idle"):
    if not (3 < d[k] < 40 + rings): bad("%s %r: an idle image holds no descriptor" % (k, d[k]))
if not (0 < d["rss_idle_kib"] < 65536): bad("rss_idle_kib %r" % d["rss_idle_kib"])
if not (d["rss_peak_kib"] >= d["rss_idle_kib"] and d["threads_peak"] > 1): bad("peak %r" % d)
if d["load_read_iops"] <= 0 or d["load_write_iops"] <= 0: bad("load IOPS %r %r" % (d["load_read_iops"], d["load_write_iops"]))
if len(d["qd1_iops_store"]) != 1 or len(d["qd1_iops_one"]) != 1 or not d["qd1_ratio_median"] > 0: bad("comparison %r" % d)
'
[ -z "$(ls -A "$T" | grep sectorfs-bench-scale)" ] || fail "scale left its directory: $(ls -A "$T")"
pass "scale: ready times, RSS, descriptors (idle images hold none), ls -l, load peak and after, QD1 comparison"
fi

# ---- SIGINT ----

"$SECTORFS_BENCH" redo --redo-block 4096 --time 30 --json "$MNT/k4" > "$T/int.json" 2>"$T/int.err" &
bpid=$!
on_exit "kill $bpid"
sleep 2.3                       # past the 2 s after which a terminal would get a progress line
kill -INT $bpid
rc=0
wait $bpid || rc=$?
expect_eq $rc 130 "redo after SIGINT: exit status"
jcheck "$T/int.json" "redo --json after SIGINT" '
if not (d["interrupted"] is True and d["seconds"] < 10 and d["commits"] > 0): bad("figures %r" % d)
'
grep -q "interrupted" "$T/int.err" || fail "redo after SIGINT says: $(cat "$T/int.err")"
grep -q $'\033\|\r' "$T/int.err" && fail "redo drew a progress line into a pipe"
pass "SIGINT: redo stops, prints its figures (interrupted: true) and exits 130; no progress line into a pipe"

# On a terminal (script(1) makes one) a run longer than 2 s draws a progress line.
if command -v script >/dev/null 2>&1; then
	script -qec "'$SECTORFS_BENCH' redo --redo-block 4096 --time 2.5 --repeat 1 '$MNT/k4'" /dev/null > "$T/tty.out" 2>&1 ||
		fail "redo on a terminal failed: $(cat "$T/tty.out")"
	grep -Eq $'\r\033\[Kredo: 2\.[0-9] s of 2\.5 s' "$T/tty.out" || fail "redo on a terminal drew no progress line: $(cat -A "$T/tty.out" | head)"
	grep -q "^commits " "$T/tty.out" || fail "redo on a terminal printed no figures"
	pass "on a terminal, a progress line while it runs"
else
	pass "progress line on a terminal # SKIP no script(1)"
fi

stop_daemon
pass "daemon unmounted and exited 0"
