#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summarize.py - the parsing and reporting half of tests/bench/run.

  summarize.py one WORKLOAD FIO_JSON
      print one line "IOPS MB/s mean_us p99_us" for the job (progress lines)
  summarize.py report RUNS_TSV META_JSON OUT_DIR
      read every job listed in RUNS_TSV (repeat, workload, target, fio JSON
      path, status per line), print the table of medians and write
      OUT_DIR/bench.json and OUT_DIR/bench.txt

Metrics come from fio's JSON (--output-format=json, --lat_percentiles=1):
IOPS and bandwidth of the direction the workload uses, and the total
latency (submission + completion, lat_ns) mean and 99th percentile.  For
the fdatasync workloads the IOPS is writes per second, each followed by
its fdatasync (i.e. commits/s); the mean latency is write + fdatasync and
the p99 is the fdatasync's own p99 (fio keeps the two apart).

Medians are taken over the repeats of each (workload, target).  The ratio
to the raw file is computed per repeat (IOPS of the target / IOPS of the
raw file in the same repeat, so both saw the same machine load) and the
median of those ratios is reported.  "spread" is (max - min) / median of
the IOPS over the repeats: the noise of that row.
"""
import json
import statistics
import sys

READ_WORKLOADS = {"randread-qd1", "randread-4x8", "seqread-1m"}
SYNC_WORKLOADS = {"fsync512", "fsync4k"}

WORKLOAD_ORDER = ["randread-qd1", "randwrite-qd1", "randread-4x8", "randwrite-4x8",
                  "seqread-1m", "seqwrite-1m", "fsync512", "fsync4k", "fresh32k"]
TARGET_ORDER = ["raw", "sfs-4kn", "sfs-4kn-uring", "sfs-4kn-threads", "sfs-4kn-uring-threads", "base-4kn",
                "sfs-512e", "sfs-512e-uring", "sfs-512e-threads", "sfs-512e-uring-threads", "base-512e",
                "sfs-4kn-nostats", "base-4kn-nostats", "sfs-4kn-buffered", "base-4kn-buffered",
                "sfs-floor", "sfs-floor-uring", "passthrough", "qsd",
                "sfs-thin", "sfs-thin-nooffload", "sfs-zeroedthick", "sfs-eagerzeroedthick"]
DESCR = {
    "randread-qd1": "4K random read, QD1 (psync)",
    "randwrite-qd1": "4K random write, QD1 (psync)",
    "randread-4x8": "4K random read, 4 jobs x QD8 (libaio)",
    "randwrite-4x8": "4K random write, 4 jobs x QD8 (libaio)",
    "seqread-1m": "1M sequential read, QD1 (psync)",
    "seqwrite-1m": "1M sequential write, QD1 (psync)",
    "fsync512": "512B sequential write + fdatasync each",
    "fsync4k": "4K sequential write + fdatasync each",
    "fresh32k": "32K sequential first writes, fresh image/file",
}


def load_fio(path):
    """The first JSON object in a fio output file (fio may print warnings before it)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON in " + path)
    return json.JSONDecoder().raw_decode(text[start:])[0]


def pct(lat, q="99.000000"):
    p = lat.get("percentile") or {}
    return p.get(q)


def metrics(workload, path):
    j = load_fio(path)
    job = j["jobs"][0]
    if job.get("error"):
        raise ValueError("fio job error %s" % job["error"])
    d = job["read" if workload in READ_WORKLOADS else "write"]
    lat = d["lat_ns"] if d.get("lat_ns", {}).get("N") else d["clat_ns"]
    p99 = pct(lat) or pct(d["clat_ns"]) or 0
    m = {
        "iops": d["iops"],
        "mbps": d["bw_bytes"] / 1e6,
        "lat_mean_us": lat["mean"] / 1000.0,
        "lat_p99_us": p99 / 1000.0,
        "ios": d["total_ios"],
        "runtime_s": d["runtime"] / 1000.0,
    }
    if workload in SYNC_WORKLOADS:
        s = job.get("sync", {}).get("lat_ns", {})
        m["write_lat_mean_us"] = m["lat_mean_us"]
        m["write_lat_p99_us"] = m["lat_p99_us"]
        m["sync_lat_mean_us"] = s.get("mean", 0) / 1000.0
        m["sync_lat_p99_us"] = (pct(s) or 0) / 1000.0
        m["lat_mean_us"] = m["write_lat_mean_us"] + m["sync_lat_mean_us"]
        m["lat_p99_us"] = m["sync_lat_p99_us"]
    if not m["ios"]:
        raise ValueError("no I/O completed")
    return m


def cmd_one(workload, path):
    try:
        m = metrics(workload, path)
    except Exception as e:  # noqa: BLE001 - a progress line must not kill the run
        print("FAILED (%s)" % e)
        return 0
    print("%10.0f IOPS %9.1f MB/s %9.1f us mean %9.1f us p99"
          % (m["iops"], m["mbps"], m["lat_mean_us"], m["lat_p99_us"]))
    return 0


def order_key(workload, target):
    w = WORKLOAD_ORDER.index(workload) if workload in WORKLOAD_ORDER else 99
    t = TARGET_ORDER.index(target) if target in TARGET_ORDER else 99
    return (w, t, workload, target)


def cmd_report(runs_tsv, meta_json, out_dir):
    with open(meta_json, encoding="utf-8") as f:
        meta = json.load(f)
    runs = []
    with open(runs_tsv, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            rep, workload, target, path, status = parts[:5]
            r = {"repeat": int(rep), "workload": workload, "target": target,
                 "fio_json": path, "ok": False}
            if len(parts) >= 7:  # remount + cache drop before the job, seconds
                r["prep_s"] = round(float(parts[6]) - float(parts[5]), 3)
            if len(parts) >= 8:  # fio's wall time, start-up included
                r["wall_s"] = round(float(parts[7]) - float(parts[6]), 3)
            if len(parts) >= 9 and parts[8]:  # daemon CPU during the job, clock ticks
                r["daemon_cpu_s"] = int(parts[8]) / float(meta.get("clk_tck", 100))
            if len(parts) >= 10 and parts[9]:  # daemon context switches during the job
                r["daemon_cs"] = int(parts[9])
            if status == "0":
                try:
                    r.update(metrics(workload, path))
                    r["ok"] = True
                    if "daemon_cpu_s" in r and r["ios"]:
                        r["daemon_cpu_us_per_io"] = 1e6 * r["daemon_cpu_s"] / r["ios"]
                    if "daemon_cs" in r and r["ios"]:
                        r["daemon_cs_per_io"] = r["daemon_cs"] / r["ios"]
                except Exception as e:  # noqa: BLE001
                    r["error"] = str(e)
            else:
                r["error"] = "fio exited with status %s" % status
            runs.append(r)

    raw = {(r["repeat"], r["workload"]): r for r in runs if r["ok"] and r["target"] == "raw"}
    for r in runs:
        base = raw.get((r["repeat"], r["workload"]))
        if r["ok"] and base and base["iops"]:
            r["ratio_raw"] = r["iops"] / base["iops"]

    groups = {}
    for r in runs:
        groups.setdefault((r["workload"], r["target"]), []).append(r)
    summary = []
    for key in sorted(groups, key=lambda k: order_key(*k)):
        rs = [r for r in groups[key] if r["ok"]]
        s = {"workload": key[0], "target": key[1], "n": len(rs),
             "failed": len(groups[key]) - len(rs)}
        if rs:
            for k in ("iops", "mbps", "lat_mean_us", "lat_p99_us"):
                s[k] = statistics.median(r[k] for r in rs)
            cpu = [r["daemon_cpu_us_per_io"] for r in rs if "daemon_cpu_us_per_io" in r]
            s["daemon_cpu_us_per_io"] = statistics.median(cpu) if cpu else None
            cs = [r["daemon_cs_per_io"] for r in rs if "daemon_cs_per_io" in r]
            s["daemon_cs_per_io"] = statistics.median(cs) if cs else None
            ratios = [r["ratio_raw"] for r in rs if "ratio_raw" in r]
            s["ratio_raw"] = statistics.median(ratios) if ratios else None
            med = s["iops"]
            s["spread_pct"] = (100.0 * (max(r["iops"] for r in rs) - min(r["iops"] for r in rs)) / med
                               if med else None)
            s["iops_runs"] = [round(r["iops"], 1) for r in sorted(rs, key=lambda r: r["repeat"])]
        summary.append(s)

    def by_repeat(w, t):
        return {r["repeat"]: r for r in runs if r["ok"] and r["workload"] == w and r["target"] == t}

    def compare(out, w, num, den, head, key):
        """Append to out, after the (name, value) pairs of head, the median over the repeats of
        target num's IOPS / target den's for workload w as key, when some repeat has both."""
        a, b = by_repeat(w, num), by_repeat(w, den)
        ratios = [a[k]["iops"] / b[k]["iops"] for k in a if k in b and b[k]["iops"]]
        if ratios:
            out.append(dict(head + [(key, statistics.median(ratios)),
                                    ("per_repeat", [round(x, 3) for x in ratios])]))

    # stats on/off: sfs-4kn / sfs-4kn-nostats per repeat, median (and base-4kn / base-4kn-nostats)
    stats_cmp = []
    for d in ("sfs", "base"):
        for w in WORKLOAD_ORDER:
            compare(stats_cmp, w, d + "-4kn", d + "-4kn-nostats", [("daemon", d), ("workload", w)],
                    "stats_on_over_off")

    # the two transports: sfs-X-uring / sfs-X (/dev/fuse) per repeat, median
    xport_cmp = []
    for w in WORKLOAD_ORDER:
        for t in ("sfs-4kn", "sfs-512e", "sfs-floor"):
            compare(xport_cmp, w, t + "-uring", t, [("workload", w), ("target", t)], "uring_over_dev")

    # the two designs: the event loop (sfs-X, the default) / a thread per request (sfs-X-threads)
    design_cmp = []
    for w in WORKLOAD_ORDER:
        for t in ("sfs-4kn", "sfs-4kn-uring", "sfs-512e", "sfs-512e-uring"):
            compare(design_cmp, w, t, t + "-threads", [("workload", w), ("target", t)], "loop_over_threads")

    # this daemon / the BASELINE daemon: sfs-X / base-X per repeat, median
    base_cmp = []
    for w in WORKLOAD_ORDER:
        for t in ("4kn", "4kn-buffered", "4kn-nostats", "512e"):
            compare(base_cmp, w, "sfs-" + t, "base-" + t, [("workload", w), ("target", "sfs-" + t)],
                    "over_base")

    lines = []
    lines.append("sectorfs benchmark: %s, repeats %s, runtime %s s/job, image %s, fio %s, kernel %s"
                 % (meta.get("date", "?"), meta.get("repeat"), meta.get("runtime"), meta.get("size"),
                    meta.get("fio_version", "?"), meta.get("kernel", "?")))
    lines.append("daemon: %s (tree %s, sha256 %s)%s" % (
        meta.get("sectorfs_version", "?"), meta.get("git") or "?", (meta.get("sectorfs_sha256") or "?")[:12],
        "; qsd: " + meta["qsd"] if meta.get("qsd") else ""))
    setup = meta.get("daemon_setup") or {}
    if isinstance(setup, str):
        setup = {"stats": setup}
    for mode in sorted(setup):
        lines.append("daemon setup (%s): %s" % (mode, setup[mode]))
    lines.append("machine load: loadavg %s -> %s, PSI some avg60 cpu/io %s -> %s; elapsed %s s"
                 % (" ".join(meta.get("loadavg_start") or []), " ".join(meta.get("loadavg_end") or []),
                    "/".join((meta.get("pressure_start") or {}).values()) or "?",
                    "/".join((meta.get("pressure_end") or {}).values()) or "?", meta.get("elapsed_s", "?")))
    lines.append("medians of the repeats; 'x raw' = median over repeats of IOPS / raw-file IOPS in the "
                 "same repeat; 'spread' = (max-min)/median IOPS")
    lines.append("")
    hdr = "%-22s %-14s %10s %9s %10s %10s %7s %7s %8s %6s" % (
        "target", "workload", "IOPS", "MB/s", "mean us", "p99 us", "x raw", "spread", "cpu/io", "cs/io")
    last_w = None
    for s in summary:
        if s["workload"] != last_w:
            lines.append("")
            lines.append("== %s: %s" % (s["workload"], DESCR.get(s["workload"], "")))
            lines.append(hdr)
            last_w = s["workload"]
        if not s["n"]:
            lines.append("%-22s %-14s %s" % (s["target"], s["workload"], "FAILED (see bench.json)"))
            continue
        ratio = "%.2f" % s["ratio_raw"] if s.get("ratio_raw") is not None else "-"
        spread = "%.0f%%" % s["spread_pct"] if s.get("spread_pct") is not None else "-"
        fail = "  (%d failed)" % s["failed"] if s["failed"] else ""
        cpu = "%.1f" % s["daemon_cpu_us_per_io"] if s.get("daemon_cpu_us_per_io") is not None else "-"
        cs = "%.2f" % s["daemon_cs_per_io"] if s.get("daemon_cs_per_io") is not None else "-"
        lines.append("%-22s %-14s %10.0f %9.1f %10.1f %10.1f %7s %7s %8s %6s%s" % (
            s["target"], s["workload"], s["iops"], s["mbps"], s["lat_mean_us"], s["lat_p99_us"],
            ratio, spread, cpu, cs, fail))
    lines.append("")
    lines.append("cpu/io: CPU time (user + system, all threads) of the serving daemon per I/O, us; "
                 "cs/io: its context switches per I/O (%s); '-' for the raw file."
                 % meta.get("cs_source", "?"))
    lines.append("fsync rows: IOPS = writes/s, each followed by fdatasync; mean = write + fdatasync; "
                 "p99 = fdatasync p99.")
    lines.append("fresh32k rows: 'raw' is a fresh sparse file; every repeat uses fresh images.")
    lines.append("sfs-floor: reads of a thin image never written, which touch no file: "
                 "the FUSE round trip alone.")
    lines.append("sfs-X: requests through /dev/fuse; sfs-X-uring: through FUSE over io_uring; "
                 "passthrough: a bare libfuse passthrough of the raw file (tests/bench/passthrough.c).")
    lines.append("sfs-X and sfs-X-uring: event loops (-o serve=loop, the default); "
                 "sfs-X-threads: a thread per request (-o serve=threads).")
    # each comparison: its rows, heading, the key column and its width, the ratio's field
    for cmp, head, key, width, ratio in (
        (stats_cmp, "stats cost: IOPS of X-4kn (stats on) / X-4kn-nostats, median of per-repeat ratios",
         "daemon", 4, "stats_on_over_off"),
        (xport_cmp, "transports: IOPS through io_uring (sfs-X-uring) / through /dev/fuse (sfs-X), "
         "median of per-repeat ratios", "target", 10, "uring_over_dev"),
        (design_cmp, "designs: IOPS with the event loop (sfs-X) / with a thread per request (sfs-X-threads), "
         "median of per-repeat ratios", "target", 14, "loop_over_threads"),
        (base_cmp, "against the baseline %s (sha256 %s): IOPS sfs-X / base-X, median of per-repeat ratios"
         % (meta.get("baseline", "?"), (meta.get("baseline_sha256") or "?")[:12]), "target", 18, "over_base"),
    ):
        if cmp:
            lines.append("")
            lines.append(head)
            for c in cmp:
                lines.append("  %-*s %-14s %.3f   (repeats: %s)" % (
                    width, c[key], c["workload"], c[ratio], ", ".join("%.3f" % x for x in c["per_repeat"])))
    failed = [r for r in runs if not r["ok"]]
    if failed:
        lines.append("")
        lines.append("%d job(s) failed:" % len(failed))
        for r in failed:
            lines.append("  repeat %d %s %s: %s" % (r["repeat"], r["workload"], r["target"], r.get("error")))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(out_dir + "/bench.txt", "w", encoding="utf-8") as f:
        f.write(text)
    with open(out_dir + "/bench.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "summary": summary, "stats_overhead": stats_cmp, "against_baseline": base_cmp,
                   "transports": xport_cmp, "designs": design_cmp,
                   "runs": runs},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    return 1 if failed else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "one":
        return cmd_one(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "report":
        return cmd_report(argv[2], argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
