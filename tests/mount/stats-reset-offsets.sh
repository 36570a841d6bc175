#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-reset-offsets.sh - "reset" written to a text stats file is a
# command at any offset: `echo reset >>` (bash, and dash when installed)
# and a second reset through the same descriptor work; anything else
# written at an offset still fails with EINVAL and changes nothing.
. "$(dirname "$0")/lib.sh"
requires_fuse

# wr IMG: one 4 KiB O_DIRECT write at 0.
wr() {
	dd if=/dev/zero of="$MNT/$1" bs=4096 count=1 oflag=direct conv=notrunc status=none ||
		fail "$1: a write failed"
}

sidecar plain 1M 512n thin 64K
start_daemon

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
