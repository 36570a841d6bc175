#!/bin/bash
# SPDX-License-Identifier: MIT
# crash-usage.sh - the crash explorer refuses what it cannot work with,
# with exit 1 and a message that names the problem, and leaves nothing.
#
# Proves:
#  - without --check: "are both required"; --on nothing: names the word;
#    --replay of a malformed point: "--replay wants SEED:TRIGGER";
#    --seed -1: refused;
#  - IMAGE a file outside a sectorfs mount, a FIFO, a directory (the
#    mount's .stats): "is not an image of a sectorfs mount";
#  - an image whose power is off: "its power is off";
#  - a workload that fails without a cut: "the workload fails without a
#    power cut (exit status 3)" and its output; a check that fails
#    without a cut: "the check fails without a power cut" and its output;
#  - an image without a volatile write cache: a note, and the run goes on;
#  - no round image, scratch directory or loop device is left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
. "$(dirname "$0")/lib-crash.sh"

fail_sidecar d 8M 4kn '"write_cache": "volatile"'
fail_sidecar off 8M 4kn '"write_cache": "volatile"'
sidecar plain 8M 4kn thin
start_daemon

# refused WHAT TEXT ARGS...: sectorfs-bench crash ARGS exits 1 saying TEXT.
refused() {
	local what=$1 text=$2 rc=0
	shift 2
	TMPDIR=$T "$SECTORFS_BENCH" crash "$@" > "$T/out" 2> "$T/err" || rc=$?
	expect_eq "$rc" 1 "$what: exit status (it says: $(cat "$T/err"))"
	grep -qF -- "$text" "$T/err" || fail "$what: no '$text' in: $(cat "$T/err")"
	pass "$what: exit 1, '$text'"
}

refused "no --check" "are both required" --workload true "$MNT/d"
refused "--on nothing" "'nothing' is not writes, flushes, seconds or end" --workload true --check true --on nothing "$MNT/d"
refused "--replay 12" "--replay wants SEED:TRIGGER" --workload true --check true --replay 12 "$MNT/d"
refused "--replay 1:cut-after-writes:0" "--replay wants SEED:TRIGGER" --workload true --check true \
	--replay 1:cut-after-writes:0 "$MNT/d"
refused "--seed -1" "--seed must be a number" --workload true --check true --seed -1 "$MNT/d"
echo data > "$T/file"
mkfifo "$T/fifo"
for f in "$T/file" "$T/fifo" "$MNT/.stats"; do
	refused "IMAGE $f" "is not an image of a sectorfs mount" --workload true --check true "$f"
done
set_attr "$MNT/off" power off
refused "a disk without power" "its power is off" --workload true --check true "$MNT/off"
refused "a workload that fails" "the workload fails without a power cut (exit status 3)" \
	--workload 'echo the workload says no; exit 3' --check true "$MNT/d"
grep -q "the workload says no" "$T/err" || fail "the workload's output is not shown: $(cat "$T/err")"
refused "a check that fails" "the check fails without a power cut" --workload true \
	--check 'echo the check says no; exit 1' "$MNT/d"
grep -q "the check says no" "$T/err" || fail "the check's output is not shown: $(cat "$T/err")"

crash_json "$T/plain.json" --workload "python3 $POWER_PY/record_writer.py sync 4" \
	--check "python3 $POWER_PY/record_check.py" --points 3 "$MNT/plain"
grep -q "has no volatile write cache" "$T/plain.json.err" || fail "no note on write_cache none: $(cat "$T/plain.json.err")"
expect_eq "$CRASH_RC" 0 "on an image without a volatile cache: exit status"
pass "an image without a volatile cache: a note, and nothing fails"
nothing_left
stop_daemon
