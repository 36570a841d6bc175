# SPDX-License-Identifier: MIT
# lib-crash.sh - what the tests of sectorfs-bench crash, the crash
# explorer, share: an image with a volatile write cache and ext4 on it,
# a run of the explorer with --json, its figures, and a budget that skips
# on a slow machine instead of flaking.  Source it after lib.sh and
# lib-power.sh (fail_sidecar, POWER_PY; the workloads and checks are the
# scripts of tests/mount/power/):
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-power.sh"
#   . "$(dirname "$0")/lib-crash.sh"

requires_fuse
requires_cmd python3 setfattr getfattr
requires_built "$SECTORFS_BENCH"
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=python3
CRASH_BUDGET=${POWER_BUDGET:-300}

# ext4_image NAME: a thin 256M 4Kn image with a volatile write cache, served, with an ext4
# made on it over a loop device (and what PREP, a shell command run with the filesystem
# mounted at $1, puts there), every loop device and mount undone again.
ext4_image() {
	requires_root
	requires_loop
	requires_cmd mkfs.ext4 e2fsck losetup
	fail_sidecar "$1" 256M 4kn '"write_cache": "volatile"'
	[ -n "$DPID" ] || start_daemon
	DEV=$(timeout 20 losetup -f --show -b 4096 --direct-io=on "$MNT/$1") || fail "losetup on $MNT/$1"
	on_exit "losetup -d $DEV"
	step "mkfs.ext4 on $MNT/$1" mkfs.ext4 -q -F "$DEV"
	if [ -n "${PREP:-}" ]; then
		mkdir -p "$T/prep"
		step "mount the new ext4" mount "$DEV" "$T/prep"
		( cd "$T/prep" && eval "$PREP" ) || { umount "$T/prep"; fail "PREP failed: $PREP"; }
		step "umount the new ext4" umount "$T/prep"
	fi
	step "detach $DEV" losetup -d "$DEV"
}

# crash_json OUT ARGS...: run sectorfs-bench crash ARGS --json (--time-limit from the budget,
# its scratch directories under $T) into OUT, its messages in OUT.err; the exit status in CRASH_RC (0 none failed, 2 some did).
# Any other status fails the test, showing the messages.
crash_json() {
	local out=$1
	shift
	CRASH_RC=0
	TMPDIR=$T "$SECTORFS_BENCH" crash --json --time-limit "$CRASH_BUDGET" "$@" > "$out" 2> "$out.err" ||
		CRASH_RC=$?
	case $CRASH_RC in
	0|2) ;;
	*) fail "sectorfs-bench crash $* exited $CRASH_RC: $(cat "$out.err")" ;;
	esac
}

# crash_fig OUT EXPR: a python expression over the JSON in OUT (as d).
crash_fig() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# crash_show OUT: every point of the run in OUT, one line each, and the summary.
crash_show() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print("%4d %-42s %-6s unflushed %-4s lost %-4s check: %s" % (r["round"], r["replay"],
          "FAILED" if r["failed"] else "ok", r["unflushed_writes"], r["lost_writes"], r["check_says"]))
print(d["summary"])
PYEOF
}

# crash_none_failed OUT WHAT: the run found nothing (exit 0, every point ran); skip when the
# time limit cut it short (a slow machine), fail naming the first point that failed.
crash_none_failed() {
	crash_show "$1"
	[ "$(crash_fig "$1" 'd["time_limit_reached"]')" = False ] ||
		skip "slow machine: $(crash_fig "$1" 'd["points_ran"]') points in the ${CRASH_BUDGET} s budget (POWER_BUDGET)"
	[ "$CRASH_RC" = 0 ] || fail "$2: $(crash_fig "$1" '[r["replay"] + ": " + r["check_says"] for r in d["results"] if r["failed"]][0]')"
	[ "$(crash_fig "$1" 'd["points_failed"]')" = 0 ] || fail "$2: exit 0 with failing points"
}

# crash_some_failed OUT WHAT: the run found failing points (exit 2); skip when the time limit
# cut it short before any.
crash_some_failed() {
	crash_show "$1"
	if [ "$CRASH_RC" = 0 ] && [ "$(crash_fig "$1" 'd["time_limit_reached"]')" = True ]; then
		skip "slow machine: $(crash_fig "$1" 'd["points_ran"]') points in the ${CRASH_BUDGET} s budget found nothing yet"
	fi
	[ "$CRASH_RC" = 2 ] || fail "$2: the explorer found no failing crash point"
	[ "$(crash_fig "$1" 'd["points_failed"]')" -gt 0 ] || fail "$2: exit 2 and no failing point in the JSON"
}

# nothing_left: no image, loop device, mount or scratch directory of the explorer is left.
nothing_left() {
	local left
	left=$(ls -A "$STORE" | grep '\.crash' ; ls -A "$MNT" | grep '\.crash')
	[ -z "$left" ] || fail "the explorer left in the store or the mount: $left"
	losetup -a 2>/dev/null | grep -q "$T" && fail "loop devices left: $(losetup -a | grep "$T")"
	grep -q "$T/sectorfs-crash" /proc/self/mountinfo && fail "mounts left: $(grep "$T/sectorfs-crash" /proc/self/mountinfo)"
	left=$(ls -A "$T" | grep sectorfs-crash)
	[ -z "$left" ] || fail "scratch directories left in $T: $left"
}
