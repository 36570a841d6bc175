#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-interrupt.sh - SIGINT: sectorfs-bench redo stops early, prints
# what it measured (JSON, interrupted true) and exits 130; nothing is
# written on stderr but messages (no progress line when stderr is not a
# terminal); on a terminal (script) a run longer than 2 s draws one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"
run_alone

bench_serve

"$SECTORFS_BENCH" redo --redo-block 4096 --time 30 --json "$MNT/k4" > "$T/int.json" 2>"$T/int.err" &
bpid=$!
on_exit "kill $bpid"
sleep 2.3                       # past the 2 s after which a terminal would get a progress line
kill -INT $bpid
rc=0
wait $bpid || rc=$?
expect_eq $rc 130 "redo after SIGINT: exit status"
jcheck "$T/int.json" "redo --json after SIGINT" '
if not (d["interrupted"] is True and d["seconds"] < 10 and d["commits"] > 0): bad("figures %r" % d)
'
grep -q "interrupted" "$T/int.err" || fail "redo after SIGINT says: $(cat "$T/int.err")"
grep -q $'\033\|\r' "$T/int.err" && fail "redo drew a progress line into a pipe"
pass "SIGINT: redo stops, prints its figures (interrupted: true) and exits 130; no progress line into a pipe"

# On a terminal (script(1) makes one) a run longer than 2 s draws a progress line.
if command -v script >/dev/null 2>&1; then
	script -qec "'$SECTORFS_BENCH' redo --redo-block 4096 --time 2.5 --repeat 1 '$MNT/k4'" /dev/null > "$T/tty.out" 2>&1 ||
		fail "redo on a terminal failed: $(cat "$T/tty.out")"
	grep -Eq $'\r\033\[Kredo: 2\.[0-9] s of 2\.5 s' "$T/tty.out" || fail "redo on a terminal drew no progress line: $(cat -A "$T/tty.out" | head)"
	grep -q "^commits " "$T/tty.out" || fail "redo on a terminal printed no figures"
	pass "on a terminal, a progress line while it runs"
else
	pass "progress line on a terminal # SKIP no script(1)"
fi

stop_daemon
pass "daemon unmounted and exited 0"
