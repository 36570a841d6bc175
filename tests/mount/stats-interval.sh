#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-interval.sh - sectorfs-stat -i under load: every interval is the
# difference of the daemon's own totals at its two ends (SPEC.md
# "Statistics": the reset generation and the daemon's start tell a reset
# from lag).
#
# While fio writes one image (4 KiB random O_DIRECT writes, libaio, iodepth
# 16, 2 jobs) and a CPU burner keeps the other core busy, with a second
# image idle (it holds writes from before, all of them read-modify-writes):
#  - 30 intervals of 0.5 s (--json): every row of an interval report covers
#    the interval ("span":"interval"), its counts are exactly the totals it
#    reports minus the totals of the previous report, its "seconds" is the
#    difference of the daemon's elapsed_seconds at the two ends and at most
#    twice the interval, its rates are counts over seconds; the idle image
#    shows 0 writes and 0 read-modify-writes in every interval; the totals
#    sectorfs-stat used lie between the daemon's NAME.json read just before
#    and just after the run, with the same reset_generation and daemon;
#  - a reset of the busy image during a run: the report after it shows that
#    image's counts since the reset ("span":"total", a new
#    reset_generation, counts = its totals); every other row is an exact
#    interval.
# The burner and fio are started here and ended by their PIDs.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 fio timeout
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio has no libaio engine"

requires_built "$SECTORFS_STAT"

sidecar busy 256M 4kn thin 1M
sidecar idle 64M 512e thin 64K
start_daemon

# The idle image gets 40 writes of 512 bytes (each a read-modify-write) now,
# and none during the runs.
for ((i = 0; i < 40; i++)); do
	dd if=/dev/urandom of="$MNT/idle" bs=512 count=1 seek=$((i * 3)) oflag=direct conv=notrunc \
		status=none || fail "idle: write $i failed"
done
[ "$(stats_key idle rmw_writes)" = 40 ] || fail "idle: rmw_writes is $(stats_key idle rmw_writes), not 40"

fio --name=load --filename="$MNT/busy" --rw=randwrite --bs=4k --direct=1 --ioengine=libaio \
	--iodepth=16 --numjobs=2 --thread --size=200M --time_based --runtime=120 \
	--output="$T/fio.out" >/dev/null 2>&1 &
fpid=$!
on_exit "kill $fpid"
( while :; do :; done ) &
bpid=$!
on_exit "kill $bpid"

# Until fio's writes reach the daemon (10 s at most).
for ((i = 0; i < 100; i++)); do
	[ "$(stats_key busy writes)" -gt 1000 ] 2>/dev/null && break
	kill -0 $fpid 2>/dev/null || fail "fio exited early: $(cat "$T/fio.out")"
	sleep 0.1
done
[ "$(stats_key busy writes)" -gt 1000 ] || fail "fio's writes do not reach busy"

# check_run FILE INTERVAL REPORTS BEFORE_DIR AFTER_DIR [RESET_IMAGE]
check_run() {
	python3 - "$@" <<'PY'
import json, sys

path, interval, nrep, before_dir, after_dir = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
reset_image = sys.argv[6] if len(sys.argv) > 6 else None
COUNTS = ["reads", "writes", "bytes_read", "bytes_written", "first_writes", "overwrites",
          "misaligned_rejected", "rmw_writes"]
IDENT = ["reset_generation", "daemon_start", "daemon_pid"]
problems = []

def bad(msg):
    problems.append(msg)

reports = [json.loads(l) for l in open(path)]
if len(reports) != nrep:
    sys.exit("%d reports, not %d" % (len(reports), nrep))
prev = {}
resets = 0
longest = 0.0
for rep in reports:
    n = rep["report"]
    want_kind = "total" if n == 1 else "interval"
    if rep["kind"] != want_kind:
        bad("report %d: kind %s, not %s" % (n, rep["kind"], want_kind))
    rows = {r["image"]: r for r in rep["images"]}
    if sorted(rows) != ["busy", "idle"]:
        bad("report %d: rows %s" % (n, sorted(rows)))
    for name, r in rows.items():
        p = prev.get(name)
        tot = r["totals"]
        if p is None or any(r[k] != p[k] for k in IDENT):
            # Counts since load or reset: only in report 1, or after the reset.
            if p is not None:
                resets += 1
                if name != reset_image:
                    bad("report %d, %s: counts since a reset, but nothing reset it (%s -> %s)"
                        % (n, name, p["reset_generation"], r["reset_generation"]))
            if r["span"] != "total":
                bad("report %d, %s: span %s after a new generation" % (n, name, r["span"]))
            for k in COUNTS:
                if r[k] != tot[k]:
                    bad("report %d, %s: %s %d, its totals say %d" % (n, name, k, r[k], tot[k]))
            if abs(r["seconds"] - r["elapsed_seconds"]) > 1e-6:
                bad("report %d, %s: seconds %.6f, elapsed_seconds %.6f" % (n, name, r["seconds"], r["elapsed_seconds"]))
        else:
            if r["span"] != "interval":
                bad("report %d, %s: span %s with the same generation and daemon: the counts are "
                    "totals (writes %d, %.2f s), not the interval" % (n, name, r["span"], r["writes"], r["seconds"]))
            for k in COUNTS:
                want = tot[k] - p["totals"][k]
                if r[k] != want:
                    bad("report %d, %s: %s %d, the daemon's totals at the ends differ by %d"
                        % (n, name, k, r[k], want))
            span = r["elapsed_seconds"] - p["elapsed_seconds"]
            if abs(r["seconds"] - span) > 1e-5:
                bad("report %d, %s: seconds %.6f, the daemon's elapsed times differ by %.6f"
                    % (n, name, r["seconds"], span))
            longest = max(longest, r["seconds"])
            if not 0 < r["seconds"] <= 2 * interval:
                bad("report %d, %s: an interval of %.3f s (asked for %g s)" % (n, name, r["seconds"], interval))
        if r["seconds"] > 0 and abs(r["w_per_s"] - r["writes"] / r["seconds"]) > 1e-6 * max(1, r["w_per_s"]):
            bad("report %d, %s: w_per_s %f, writes/seconds %f" % (n, name, r["w_per_s"], r["writes"] / r["seconds"]))
        if name == "idle" and n > 1 and (r["writes"] or r["rmw_writes"] or r["w_per_s"]):
            bad("report %d: the idle image shows writes %d, rmw %d, w/s %.2f"
                % (n, r["writes"], r["rmw_writes"], r["w_per_s"]))
        prev[name] = r

# The totals sectorfs-stat used are the daemon's: between NAME.json read
# just before and just after the run, same generation and daemon.
for name in ["busy", "idle"]:
    b = json.load(open("%s/%s.json" % (before_dir, name)))
    a = json.load(open("%s/%s.json" % (after_dir, name)))
    first = next(r for r in reports[0]["images"] if r["image"] == name)
    last = prev[name]
    for k in IDENT:
        if first[k] != b[k]:
            bad("%s: report 1 has %s %s, NAME.json before the run %s" % (name, k, first[k], b[k]))
        if last[k] != a[k]:
            bad("%s: the last report has %s %s, NAME.json after the run %s" % (name, k, last[k], a[k]))
    for k in COUNTS:
        if not b[k] <= first["totals"][k] or not last["totals"][k] <= a[k]:
            bad("%s: %s: NAME.json before %d, report 1 %d, last report %d, NAME.json after %d"
                % (name, k, b[k], first["totals"][k], last["totals"][k], a[k]))
    if name == "idle" and (b["writes"], a["writes"]) != (40, 40):
        bad("idle: writes before and after the run %d and %d, not 40" % (b["writes"], a["writes"]))
busy_writes = sum(next(r for r in rep["images"] if r["image"] == "busy")["writes"] for rep in reports[1:])
if busy_writes == 0:
    bad("busy: no writes in any interval: the load did not run")
if reset_image and resets != 1:
    bad("%d rows after a new generation, not 1 (the reset of %s)" % (resets, reset_image))
for m in problems[:15]:
    print("  " + m, file=sys.stderr)
if problems:
    sys.exit("%d problems in %d reports" % (len(problems), len(reports)))
print("longest interval %.3f s, busy writes in the intervals %d" % (longest, busy_writes))
PY
}

# copy_json DIR: the daemon's NAME.json of both images, now.
copy_json() {
	mkdir -p "$1"
	cp "$MNT/.stats/busy.json" "$MNT/.stats/idle.json" "$1/" || fail "cannot read the stats files"
}

copy_json "$T/before"
timeout -k 5 60 "$SECTORFS_STAT" "$MNT" busy idle -i 0.5 -c 31 --json > "$T/int.json" 2>"$T/err" ||
	fail "sectorfs-stat -i 0.5 -c 31 --json failed: $(cat "$T/err")"
copy_json "$T/after"
kill -0 $fpid 2>/dev/null || fail "fio ended during the run: $(cat "$T/fio.out")"
out=$(check_run "$T/int.json" 0.5 31 "$T/before" "$T/after" 2>&1) ||
	fail "30 intervals of 0.5 s under load: $out"
pass "30 intervals of 0.5 s under load: every row is the difference of the daemon's totals at its ends, idle stays 0 ($out)"

# A reset of the busy image in the middle of a run.
copy_json "$T/before2"
: > "$T/int2.json"
timeout -k 5 60 "$SECTORFS_STAT" "$MNT" busy idle -i 0.5 -c 9 --json > "$T/int2.json" 2>"$T/err" &
spid=$!
on_exit "kill $spid"
for ((i = 0; i < 100; i++)); do
	[ "$(wc -l < "$T/int2.json")" -ge 4 ] && break
	sleep 0.1
done
[ "$(wc -l < "$T/int2.json")" -ge 4 ] || fail "sectorfs-stat wrote no 4th report in 10 s"
echo reset > "$MNT/.stats/busy" || fail "echo reset > .stats/busy failed"
wait $spid || fail "sectorfs-stat -i 0.5 -c 9 --json failed: $(cat "$T/err")"
copy_json "$T/after2"
out=$(check_run "$T/int2.json" 0.5 9 "$T/before2" "$T/after2" busy 2>&1) ||
	fail "a reset during a run under load: $out"
pass "a reset during a run: the next report shows busy since the reset, every other row an exact interval"

kill $bpid
wait $bpid 2>/dev/null
kill $fpid
wait $fpid 2>/dev/null
stop_daemon
pass "daemon unmounted and exited 0"
