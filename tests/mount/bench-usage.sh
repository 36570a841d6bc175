#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-usage.sh - sectorfs-bench: --help of every command exits 0 with
# its usage line; an unknown command or option, a bad value or a missing
# IMAGE exits 1 with a message.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"

bench_serve

for c in sweep zeroing redo scale; do
	"$SECTORFS_BENCH" $c --help > "$T/out" 2>&1 || fail "$c --help exits non-zero"
	grep -q "^usage: sectorfs-bench $c" "$T/out" || fail "$c --help has no usage line: $(head -3 "$T/out")"
done
"$SECTORFS_BENCH" --help | grep -q "^  redo " || fail "sectorfs-bench --help does not list redo"
for args in "frobnicate" "sweep" "sweep --bogus $MNT/k4" "redo $MNT/k4" "redo --redo-block 1000 $MNT/k4" \
	"sweep --time 0 $MNT/k4" "zeroing --store a --mount b" "scale --images 0" "scale --size 1000" "scale x"; do
	rc=0
	"$SECTORFS_BENCH" $args > "$T/out" 2>&1 || rc=$?
	expect_eq $rc 1 "sectorfs-bench $args: exit status"
	[ -s "$T/out" ] || fail "sectorfs-bench $args: no message"
done
pass "--help of every command exits 0; unknown commands, bad options and missing arguments exit 1"

stop_daemon
pass "daemon unmounted and exited 0"
