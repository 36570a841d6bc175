#!/bin/bash
# stats-edges.sh - the corners of the .stats files and of image names.
#
# Proves:
#  - "reset" is a command at any offset: `echo reset >>` (bash, and dash
#    when installed) and a second reset through the same descriptor work;
#    anything else written at an offset still fails with EINVAL.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 truncate mkfifo

STAT="$top_builddir/tools/sectorfs-stat"
[ -x "$STAT" ] || fail "sectorfs-stat not built: $STAT"

expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# wr IMG: one 4 KiB O_DIRECT write at 0.
wr() {
	dd if=/dev/zero of="$MNT/$1" bs=4096 count=1 oflag=direct conv=notrunc status=none ||
		fail "$1: a write failed"
}

L200=$(printf 'L%.0s' {1..200})
NL=$'nl\nx'
ESC=$'esc\033[31mred'
TAB=$'tab\tx'
SP='a b'
BS='back\slash'
UTF=$'caf\xc3\xa9'
BAD=$'bad\xe9x'
C1=$'c1\xc2\x9bx'
NAMES=(plain "$L200" "$NL" "$ESC" "$TAB" "$SP" "$BS" "$UTF" "$BAD" "$C1")
for n in "${NAMES[@]}"; do sidecar "$n" 1M 512n thin 64K; done
start_daemon

# ---- reset at any offset ----

wr plain
wr plain
expect_eq "$(stats_key plain writes)" 2 "plain: writes"
echo reset >> "$MNT/.stats/plain" || fail "echo reset >> .stats/plain failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after echo reset >>"
if command -v dash >/dev/null 2>&1; then
	wr plain
	dash -c 'echo reset >> "$1"' _ "$MNT/.stats/plain" 2>"$T/err" ||
		fail "dash: echo reset >> .stats/plain failed: $(cat "$T/err")"
	expect_eq "$(stats_key plain writes)" 0 "plain: writes after dash's echo reset >>"
fi
exec 3>"$MNT/.stats/plain"
wr plain
echo reset >&3 || fail "a first reset through one descriptor failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after the first reset through fd 3"
wr plain
echo reset >&3 || fail "a second reset through the same descriptor failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after the second reset through fd 3"
wr plain
expect_errno "Invalid argument" bash -c 'echo foo >&3' 3>>"$MNT/.stats/plain"
expect_errno "Invalid argument" bash -c 'echo resetx >> "$1"' _ "$MNT/.stats/plain"
exec 3>&-
expect_eq "$(stats_key plain writes)" 1 "plain: writes after refused commands"
pass "reset at any offset: echo reset >> and a second reset on one descriptor work; other text is EINVAL"

stop_daemon
pass "daemon unmounted and exited 0"
