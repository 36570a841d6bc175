#!/bin/bash
# SPDX-License-Identifier: MIT
# metrics-exposition.sh - MNT/.stats/metrics, every image's statistics in
# the Prometheus text exposition format, read through a real mount and
# parsed with a real parser (python3-prometheus-client's text parser):
#  - the file parses; every family has HELP and TYPE, is one group, and no
#    series appears twice; counters end in _total;
#  - one image label per image, whatever its name: a quote, a backslash
#    and a newline escaped as the format wants, a byte that is not UTF-8
#    as /xHH, an image named "metrics" (its text stats file is the one
#    name the metrics file takes; its metrics.json stays);
#  - after I/O the counters, gauges and latency histograms equal what
#    NAME.json says at the same moment: each le bucket counts exactly the
#    JSON histogram buckets below it, +Inf and _count equal the JSON count,
#    _sum its mean times count.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
	skip "needs python3-prometheus-client (Debian's python3 with prometheus_client)"

sidecar d4k 8M 4kn thin 64K
sidecar d512e 8M 512e zeroedthick 64K
sidecar 'we"ird\x' 1M 512n thin 64K
sidecar $'nl\nname' 1M 512n thin 64K
sidecar $'bad\xff' 1M 512n thin 64K
sidecar metrics 1M 512n thin 64K
start_daemon

dd if=/dev/urandom of="$MNT/d4k" bs=4096 count=10 oflag=direct conv=notrunc,fsync status=none || fail "write d4k"
dd if="$MNT/d4k" of=/dev/null bs=64K count=2 iflag=direct status=none || fail "read d4k"
dd if=/dev/zero of="$MNT/d4k" bs=512 count=1 oflag=direct conv=notrunc status=none 2>/dev/null &&
	fail "a misaligned write to a 4kn disk succeeded"
dd if=/dev/zero of="$MNT/d512e" bs=512 seek=3 count=4 oflag=direct conv=notrunc status=none || fail "write d512e"
dd if=/dev/zero of="$MNT/metrics" bs=512 count=2 oflag=direct conv=notrunc status=none || fail "write metrics"

# Nothing runs I/O now: the exposition and every NAME.json must say the same.
cat "$MNT/.stats/metrics" > "$T/metrics.prom" || fail "cannot read .stats/metrics"
"$PY" - "$T/metrics.prom" "$MNT" <<'EOF' || fail "the exposition is not what NAME.json says (above)"
import collections, json, os, re, sys
from prometheus_client.parser import text_string_to_metric_families

path, mnt = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
def die(msg):
    sys.exit("metrics-exposition.sh: " + msg)

# the format's rules the parser does not check: HELP and TYPE first, one group per family, no
# series twice, counters named _total
fam, seen_fams, series = None, set(), set()
for line in text.splitlines():
    if line.startswith("# HELP "):
        fam = line.split()[2]
        if fam in seen_fams:
            die("family %s in two groups" % fam)
        seen_fams.add(fam)
    elif line.startswith("# TYPE "):
        _, _, name, typ = line.split()
        if name != fam:
            die("TYPE %s after HELP %s" % (name, fam))
        if typ == "counter" and not name.endswith("_total"):
            die("counter %s does not end in _total" % name)
    else:
        if fam is None or not line.startswith(fam):
            die("sample outside its family %s: %s" % (fam, line))
        key = line.rsplit(" ", 1)[0]
        if key in series:
            die("series twice: " + key)
        series.add(key)

fams = {f.name: f for f in text_string_to_metric_families(text)}
if len(fams) != 34:
    die("%d families, expected 34" % len(fams))

# the image names as the daemon sees them, and the label each must get
names = [os.fsdecode(n) for n in os.listdir(os.fsencode(mnt)) if not n.startswith(b".")]
def label(name):
    b = os.fsencode(name)
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(c) if c < 0x80 else "/x%02x" % c for c in b)
labels = {label(n): n for n in names}
if set(labels) != {"d4k", "d512e", 'we"ird\\x', "nl\nname", "bad/xff", "metrics"}:
    die("labels: %s" % sorted(labels))
got = {s.labels["image"] for s in fams["sectorfs_reads"].samples}
if got != set(labels):
    die("image labels %s, expected %s" % (sorted(got), sorted(labels)))

def sample(fam, image, name=None, **kw):
    for s in fams[fam].samples:
        if s.labels.get("image") == image and (name is None or s.name == name) and \
           all(s.labels.get(k) == v for k, v in kw.items()):
            return s.value
    die("no sample %s %s %s %s" % (fam, image, name, kw))

counters = {"reads": "reads", "writes": "writes", "read_bytes": "bytes_read", "written_bytes": "bytes_written",
            "flushes": "flushes", "first_writes": "first_writes", "overwrites": "overwrites",
            "zeroed_bytes": "zeroed_bytes", "misaligned_rejected": "misaligned_rejected",
            "rmw_writes": "rmw_writes", "out_of_range": "out_of_range", "discards": "discards"}
for lab, name in labels.items():
    j = json.load(open(os.path.join(mnt, ".stats", name + ".json"), "rb"))
    for m, k in counters.items():
        if sample("sectorfs_" + m, lab, "sectorfs_%s_total" % m) != j[k]:
            die("%r: %s = %s, NAME.json %s = %s" % (name, m, sample("sectorfs_" + m, lab), k, j[k]))
    for g, k in (("size_bytes", "size"), ("block_size_bytes", "block_size"),
                 ("logical_sector_size_bytes", "logical_sector_size"), ("allocated_blocks", "allocated_blocks"),
                 ("blocks", "total_blocks"), ("stats_reset_generation", "reset_generation")):
        if sample("sectorfs_" + g, lab) != j[k]:
            die("%r: gauge %s" % (name, g))
    if sample("sectorfs_image_info", lab, provisioning=j["provisioning"]) != 1:
        die("%r: image_info" % name)
    for b, v in j["size_histogram"].items():
        if sample("sectorfs_requests_by_size", lab, size=b) != v:
            die("%r: size %s" % (name, b))
    for cls, lat in j["latency_us"].items():
        fam = "sectorfs_%s_latency_seconds" % cls
        buckets = sorted((float(s.labels["le"]), s.value) for s in fams[fam].samples
                         if s.labels.get("image") == lab and s.name.endswith("_bucket"))
        if buckets[-1] != (float("inf"), lat["count"]) or sample(fam, lab, fam + "_count") != lat["count"]:
            die("%r %s: +Inf %s, _count, JSON count %s" % (name, cls, buckets[-1], lat["count"]))
        for le, v in buckets[:-1]:
            # a JSON bucket [low_us, n] lies below le when its lower bound does (le is a boundary)
            want = sum(n for low, n in lat["histogram"] if low * 1000 < le * 1e9 - 0.5)
            if v != want:
                die("%r %s le=%s: %s, expected %s from the JSON histogram" % (name, cls, le, v, want))
        if [v for _, v in buckets] != sorted(v for _, v in buckets):
            die("%r %s: buckets not cumulative" % (name, cls))
        if abs(sample(fam, lab, fam + "_sum") - lat["mean"] * lat["count"] / 1e6) > 1e-6 * max(1, lat["count"]):
            die("%r %s: _sum %s, mean x count %s" % (name, cls, sample(fam, lab, fam + "_sum"),
                                                      lat["mean"] * lat["count"] / 1e6))
d = {"d4k": (2, 10, 1, 0), "d512e": (0, 4, 0, 4)}
for lab, (r, w, mis, rmw) in d.items():
    v = (sample("sectorfs_reads", lab), sample("sectorfs_writes", lab), sample("sectorfs_misaligned_rejected", lab),
         sample("sectorfs_rmw_writes", lab))
    if v != (r, w, mis, rmw):
        die("%s: reads, writes, misaligned, rmw %s, expected %s" % (lab, v, (r, w, mis, rmw)))
if sample("sectorfs_flushes", "d4k") < 1 or sample("sectorfs_read_latency_seconds", "d4k",
                                                   "sectorfs_read_latency_seconds_count") != 2:
    die("d4k: flush or read latency count")
if sample("sectorfs_allocated_bytes", "d4k") != 65536:
    die("d4k: allocated_bytes %s" % sample("sectorfs_allocated_bytes", "d4k"))
EOF
pass "the exposition parses, one label per image (escaped), values equal NAME.json, exact buckets"

stop_daemon
