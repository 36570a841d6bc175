#!/bin/bash
# SPDX-License-Identifier: MIT
# stat-tool-table.sh - sectorfs-stat's one-shot report: one row per image
# with the daemon's counts (misalign, rmw, first% and alloc% of images
# whose counts stats-exact-counts.sh proves), no escape codes into a pipe;
# --json is one line that parses and holds the daemon's counters for every
# image; NAMEs select rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

serve_all_io

"$SECTORFS_STAT" "$MNT" > "$T/out" 2>"$T/err" || fail "sectorfs-stat $MNT failed: $(cat "$T/err")"
expect_eq "$(grep -c '^image ' "$T/out")" 1 "sectorfs-stat: header lines of a one-shot report"
expect_eq "$(awk 'f { print $1 } /^image / { f = 1 }' "$T/out" | grep -v '^$' | tr '\n' ' ')" "$IMAGES " \
	"sectorfs-stat: the rows (one per image, sorted)"
# columns: image r/s w/s rMB/s wMB/s avg_us wp99_us rp99_us first% misalign rmw alloc%
expect_eq "$(awk '$1 == "mis" { print $10 }' "$T/out")" 11 "sectorfs-stat: misalign of mis"
expect_eq "$(awk '$1 == "rmw" { print $11 }' "$T/out")" 6 "sectorfs-stat: rmw of rmw"
expect_eq "$(awk '$1 == "seq" { print $9, $12 }' "$T/out")" "3.1 50.0" "sectorfs-stat: first% and alloc% of seq"
grep -q $'\033' "$T/out" && fail "sectorfs-stat wrote escape codes into a pipe"
pass "sectorfs-stat: one row per image, misalign/rmw/first%/alloc% right, no escape codes into a pipe"

"$SECTORFS_STAT" "$MNT" --json | cat > "$T/out.json" || fail "sectorfs-stat --json failed"
expect_eq "$(wc -l < "$T/out.json")" 1 "sectorfs-stat --json: lines of a one-shot report"
json_parses "$T/out.json"; [ $? -eq 1 ] && fail "sectorfs-stat --json output does not parse: $(cat "$T/out.json")"
grep -q $'\033' "$T/out.json" && fail "sectorfs-stat --json wrote escape codes into a pipe"
for img in $IMAGES; do
	row=$(stat_row "$T/out.json" 1 "$img") || fail "sectorfs-stat --json: no row for $img"
	for k in reads writes bytes_read bytes_written first_writes overwrites misaligned_rejected \
		rmw_writes allocated_blocks total_blocks; do
		expect_eq "$(row_key "$row" "$k")" "$(stats_key "$img" "$k")" "sectorfs-stat --json: $img $k"
	done
done
expect_eq "$(row_key "$(stat_row "$T/out.json" 1 w4k)" writes)" 101 "sectorfs-stat --json: writes of w4k"
expect_eq "$(row_key "$(stat_row "$T/out.json" 1 conc)" first_writes)" 12 "sectorfs-stat --json: first_writes of conc"
"$SECTORFS_STAT" "$MNT" seq mis --json > "$T/two.json" || fail "sectorfs-stat MNT seq mis failed"
expect_eq "$(grep -o '"image":"[^"]*"' "$T/two.json" | tr '\n' ' ')" '"image":"mis" "image":"seq" ' \
	"sectorfs-stat MNT seq mis: the rows"
pass "sectorfs-stat --json: parses, the daemon's counts for every image; NAMEs select rows"
stop_daemon
