#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-records-sync.sh - the crash explorer finds nothing wrong with a
# program that logs a record only once fdatasync made it durable.
#
# Proves, on a 512e image with a volatile write cache and
# tests/mount/power/record_writer.py sync (20 records of 4 KiB, each
# written, fdatasync'd, then logged; its check requires every logged
# record on the disk), cut after writes and after flushes (every one of
# the 20 of each: --points 41 covers the run) and at the end, under the
# policy random:0.5:
#  - sectorfs-bench crash exits 0, every point ran, none failed;
#  - the dry run counted 20 writes and 20 flushes, and every point of the
#    sample is a different crash point.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

fail_sidecar d 16M 512e '"write_cache": "volatile"'
start_daemon
crash_json "$T/run.json" --workload "python3 $POWER_PY/record_writer.py sync 20" \
	--check "python3 $POWER_PY/record_check.py" --points 41 --policy random:0.5 "$MNT/d"
crash_none_failed "$T/run.json" "records flushed before they are logged"
expect_eq "$(crash_fig "$T/run.json" '(d["dry_run"]["writes"], d["dry_run"]["flushes"])')" "(20, 20)" "the dry run's counts"
expect_eq "$(crash_fig "$T/run.json" 'len(set(r["trigger"] for r in d["results"]))')" 41 "distinct crash points"
pass "fdatasync before the log: 41 crash points (every write, every flush, the end), none fails"
nothing_left
stop_daemon
