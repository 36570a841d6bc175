#!/bin/bash
# SPDX-License-Identifier: MIT
# svg.sh - the --svg charts of sectorfs-bench sweep, zeroing and redo draw.
#
# Proves: each experiment run with --svg FILE writes a standalone SVG that
# rsvg-convert renders to a PNG of the chart's size (900 x 460); the sweep
# of a 4kn image marks 512 B .. 2 KiB as refused and draws write and read
# bars; the zeroing chart names the six configurations and labels bars
# with their overhead; the redo chart has a bar per redo block labelled
# with its wastage; the powercut chart names its four configurations,
# two bars each, labelled with their figures.  Skips (77) without
# rsvg-convert (librsvg2-bin).

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 rsvg-convert
requires_built "$SECTORFS_BENCH"

# render NAME: NAME.svg to NAME.png, which must be a 900 x 460 PNG
render() {
	rsvg-convert -o "$T/$1.png" "$T/$1.svg" 2>"$T/rsvg.err" || fail "rsvg-convert $1.svg: $(cat "$T/rsvg.err")"
	python3 - "$T/$1.png" <<'PYEOF' || fail "$1.png is not a 900 x 460 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read(32)
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", b[:16]
assert struct.unpack(">II", b[16:24]) == (900, 460), struct.unpack(">II", b[16:24])
PYEOF
}

sidecar k4 16M 4kn eagerzeroedthick
sidecar e512 16M 512e eagerzeroedthick
start_daemon
"$SECTORFS_BENCH" sweep "$MNT/k4" --max 64K --time 0.1 --svg "$T/sweep.svg" > /dev/null 2>"$T/err" || fail "sweep --svg: $(cat "$T/err")"
render sweep
[ "$(grep -c '>refused<' "$T/sweep.svg")" -eq 6 ] || fail "sweep.svg: 512 B .. 2 KiB not marked refused, write and read"
[ "$(grep -c '<rect x=.*fill="#4e79a7"' "$T/sweep.svg")" -ge 5 ] || fail "sweep.svg: no write bars"
pass "sweep --svg: renders, refused sizes marked, write and read bars"

"$SECTORFS_BENCH" redo --redo-block 512,4096 --time 0.2 --repeat 1 --svg "$T/redo.svg" "$MNT/e512" > /dev/null 2>"$T/err" ||
	fail "redo --svg: $(cat "$T/err")"
render redo
grep -q '>512 B redo block<' "$T/redo.svg" && grep -q '>4 KiB redo block<' "$T/redo.svg" &&
	[ "$(grep -c '>wastage [0-9.]*%<' "$T/redo.svg")" -eq 2 ] || fail "redo.svg: $(cat "$T/redo.svg")"
pass "redo --svg: renders, a bar per redo block with its wastage"
stop_daemon

"$SECTORFS_BENCH" zeroing --daemon "$SECTORFS" --size 2M --repeat 1 --svg "$T/zeroing.svg" > /dev/null 2>"$T/err" ||
	fail "zeroing --svg: $(cat "$T/err")"
render zeroing
for c in "thin on" "thin off" "zeroedthick on" "zeroedthick off" "eagerzeroedthick on" "eagerzeroedthick off"; do
	grep -q ">$c<" "$T/zeroing.svg" || fail "zeroing.svg lacks '$c'"
done
[ "$(grep -c '>[+-][0-9.]*%<' "$T/zeroing.svg")" -eq 12 ] || fail "zeroing.svg: not every bar labelled with its overhead"
pass "zeroing --svg: renders, six configurations, two passes, overheads"

"$SECTORFS_BENCH" powercut --daemon "$SECTORFS" --rounds 4 --repeat 1 --svg "$T/powercut.svg" > /dev/null 2>"$T/err" ||
	fail "powercut --svg: $(cat "$T/err")"
render powercut
for c in "512e unsafe, 512 B" "512e safe, 512 B" "4kn, 4096 B" "512e unsafe, 4096 B"; do
	grep -q ">$c<" "$T/powercut.svg" || fail "powercut.svg lacks '$c'"
done
[ "$(grep -c '<text [^>]*font-size="10" text-anchor="middle">[0-9.]*<' "$T/powercut.svg")" -eq 8 ] ||
	fail "powercut.svg: not every bar labelled with its figure"
pass "powercut --svg: renders, four configurations, two bars each with their figures"
