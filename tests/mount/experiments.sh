#!/bin/bash
# SPDX-License-Identifier: MIT
# experiments.sh - sectorfs-bench zeroing and redo on a device profile give
# the same answer twice, and the answer has the published shape.
#
# Proves, with profiles slow enough that the host's own latency (the FUSE
# round trip, on a shared machine) is small against them:
#  - zeroing (--profile, --repeat 3, 128 KiB writes, 1 MiB blocks): in the
#    first pass eagerzeroedthick is the fastest (both offload settings
#    within 3% of the one baseline), thin and zeroedthick are slower,
#    offload narrows the gap (overhead with offload below without, and
#    above 2%); in the second pass every overhead is within 5%;
#  - redo on a 512e image (--redo-block 512,4096, --repeat 5, one client:
#    each commit its own log write, so the size of the groups, which
#    follows the host's timing, stays out of the ratio): 512-byte
#    redo blocks pay the read-modify-write of the physical sector, so
#    4096-byte blocks commit more per second although they write more
#    bytes (more wastage);
#  - two runs of each agree within 5% on every ratio they print: each
#    configuration's time per write against the baseline (zeroing), the
#    commits/s of 4096 against 512 and the wastage (redo); the commit
#    rates within 25% where the host was busier than its CPUs (said).
# Runs in about 60 s, the stores on a tmpfs.

. "$(dirname "$0")/lib.sh"
requires_fuse
run_alone
requires_cmd python3 mount
requires_built "$SECTORFS_BENCH"
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=python3

# 128 KiB writes 4 ms, the rest of a 1 MiB block zeroed in 15.2 ms by writing, 3.8 ms offloaded:
# a block's 8 writes take 32 ms, +47.6% without offload, +11.8% with it
device_profile "$T/zslow.json" zslow 1 4K:500 '128K:4000 1M:16000' 500 '"zero_offload_mb_s": 250, "zero_offload_us": 100'
# a 512e drive: a physical-sector read (the RMW) costs 600 us, a write 300..450 us, a flush 1 ms
device_profile "$T/rslow.json" rslow 1 4K:20000 '512:10000 64K:20000' 5000

# the stores on a tmpfs: the host's disk (shared, busy) stays out of the figures
mount -t tmpfs -o size=256m tmpfs "$STORE" || skip "cannot mount a tmpfs"
on_exit unmount_store
mkdir "$STORE/z"
for run in 1 2; do
	"$SECTORFS_BENCH" zeroing --daemon "$SECTORFS" --store "$STORE/z" --profile "$T/zslow.json" --size 8M --xfer 128K --repeat 3 --json \
		> "$T/z$run.json" 2>"$T/zerr" || fail "zeroing run $run: $(cat "$T/zerr")"
done
"$PY" - "$T/z1.json" "$T/z2.json" <<'EOF' || fail "zeroing: see above"
import json, sys
runs = [json.load(open(f)) for f in sys.argv[1:]]
errs = []
for k, d in enumerate(runs, 1):
    if d["profile"] is None or d["repeat"] != 3:
        errs.append("run %d: profile %r repeat %r" % (k, d["profile"], d["repeat"]))
    o = {(p["pass"], i["provisioning"], i["zero_offload"]): i["overhead_pct"] for p in d["passes"] for i in p["images"]}
    for prov in ("thin", "zeroedthick"):
        on, off = o[(1, prov, True)], o[(1, prov, False)]
        if not (2 < on < off):
            errs.append("run %d pass 1 %s: overhead on %+.1f%%, off %+.1f%%: want 2%% < on < off" % (k, prov, on, off))
    for off in (True, False):
        if abs(o[(1, "eagerzeroedthick", off)]) > 3:
            errs.append("run %d pass 1 eager offload %s: %+.1f%% from the baseline" % (k, off, o[(1, "eagerzeroedthick", off)]))
    for key, v in o.items():
        if key[0] == 2 and abs(v) > 5:
            errs.append("run %d pass 2 %s: overhead %+.1f%%" % (k, key[1:], v))
a, b = ({(p["pass"], i["name"].rsplit("-", 1)[0] if i["name"][-1].isdigit() else i["name"]): i for p in d["passes"] for i in p["images"]} for d in runs)
for key in a:
    ra, rb = 1 + a[key]["overhead_pct"] / 100, 1 + b[key]["overhead_pct"] / 100
    if abs(ra / rb - 1) > 0.05:
        errs.append("%s: time per write against the baseline %.3f, then %.3f" % (key, ra, rb))
    ia, ib = 1 + a[key]["iops_change_pct"] / 100, 1 + b[key]["iops_change_pct"] / 100
    if abs(ia / ib - 1) > 0.05:
        errs.append("%s: IOPS against the baseline %.3f, then %.3f" % (key, ia, ib))
for e in errs:
    print(e, file=sys.stderr)
p1 = {(i["provisioning"], i["zero_offload"]): i["overhead_pct"] for i in runs[0]["passes"][0]["images"]}
print("thin %+.1f%% / %+.1f%%, zeroedthick %+.1f%% / %+.1f%% (offload on / off)" % (
    p1[("thin", True)], p1[("thin", False)], p1[("zeroedthick", True)], p1[("zeroedthick", False)]))
sys.exit(1 if errs else 0)
EOF
pass "zeroing on a profile: eager fastest, offload narrows the gap, gone in pass 2; two runs agree within 5%"

printf '{ "size": "64M", "sector": "512e", "provisioning": "eagerzeroedthick", "profile": "%s" }\n' "$T/rslow.json" > "$STORE/log.json"
start_daemon -o buffered
for ((i = 0; i < 100; i++)); do          # the eager zeroing done: its first writes would cost zeroing
	tr -d ' \n' < "$MNT/.stats/log.json" | grep -q '"zeroing":"done"' && break
	sleep 0.1
done
for run in 1 2; do
	"$SECTORFS_BENCH" redo --redo-block 512,4096 --clients 1 --time 2 --repeat 5 --json "$MNT/log" > "$T/r$run.json" 2>"$T/rerr" ||
		fail "redo run $run: $(cat "$T/rerr")"
done
"$SECTORFS_BENCH" redo --redo-block 512,4096 --time 0.3 --repeat 1 "$MNT/log" > "$T/r.txt" 2>/dev/null || fail "redo text"
grep -Eq '^4 KiB +[0-9.]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ +\+[0-9.]+%$' "$T/r.txt" || fail "redo comparison table: $(cat "$T/r.txt")"
# Commits/s are a rate, and a host with more runnable threads than CPUs (the parallel
# test harness, other work) delays every wake-up from the model's sleeps: the 5% is
# checked where the load stayed below the CPUs, 25% (and said) on a busier host.
TOL=0.05
LOAD=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$LOAD" -v n="$(nproc)" 'BEGIN { exit !(l >= n) }'; then
	TOL=0.25
	echo "# host busy (load average $LOAD on $(nproc) CPUs): the redo runs must agree within 25%"
fi
"$PY" - "$TOL" "$T/r1.json" "$T/r2.json" <<'EOF' || fail "redo: see above"
import json, sys
tol = float(sys.argv[1])
runs = [json.load(open(f)) for f in sys.argv[2:]]
errs, ratios = [], []
for k, d in enumerate(runs, 1):
    b = {x["redo_block"]: x for x in d["blocks"]}
    r = b[4096]["commits_per_s"] / b[512]["commits_per_s"]
    w = (b[4096]["wastage_median"], b[512]["wastage_median"])
    ratios.append((r, w))
    if not r > 1.2:
        errs.append("run %d: 4096-byte blocks %.0f commits/s, 512-byte %.0f: the RMW should cost 512" % (k, b[4096]["commits_per_s"], b[512]["commits_per_s"]))
    if not w[0] > w[1]:
        errs.append("run %d: wastage 4096 %.3f, 512 %.3f" % (k, w[0], w[1]))
(r1, w1), (r2, w2) = ratios
if abs(r1 / r2 - 1) > tol:
    errs.append("commits/s 4096 against 512: %.3f, then %.3f" % (r1, r2))
for x, y in zip(w1, w2):
    if abs(x / y - 1) > 0.05:
        errs.append("wastage %.3f, then %.3f" % (x, y))
for e in errs:
    print(e, file=sys.stderr)
print("4096 against 512: %.2fx the commits/s, then %.2fx" % (r1, r2))
sys.exit(1 if errs else 0)
EOF
pass "redo on a 512e profile: 4096-byte blocks beat 512-byte ones (RMW), with more wastage; two runs agree within 5%"
stop_daemon
