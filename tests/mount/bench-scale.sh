#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-scale.sh - sectorfs-bench scale (a store of 40 images, daemons
# under 128 descriptors): ready times, RSS, descriptors (an idle image
# holds none), ls -l time, a short load's peak and the RSS after it, the
# QD1 comparison, all in its --json; its directory removed at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"
requires_cmd fio
run_alone

# A small store, the load and the comparison short: the figures are there
# and make sense.  scale starts daemons of its own, on a store of its own.
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
