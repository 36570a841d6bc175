#!/bin/bash
# SPDX-License-Identifier: MIT
# stat-tool-interval.sh - sectorfs-stat -i 1 -c 2 gives two reports; the
# interval report holds the interval's own I/O, shows an image created in
# between and drops one removed; every --json line parses; SIGINT ends
# sectorfs-stat -i with exit 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

stats_images
start_daemon
io_w4k

"$SECTORFS_STAT" "$MNT" -i 1 -c 2 > "$T/int.txt" 2>"$T/err" || fail "sectorfs-stat -i 1 -c 2 failed: $(cat "$T/err")"
expect_eq "$(grep -c '^image ' "$T/int.txt")" 2 "sectorfs-stat -i 1 -c 2: reports"
pass "sectorfs-stat -i 1 -c 2 prints two reports"

# Between report 1 and 2: 10 writes to w4k, an image created, one removed.
"$SECTORFS_STAT" "$MNT" -i 1 -c 3 --json > "$T/int.json" 2>"$T/err" &
spid=$!
on_exit "kill $spid"
wait_lines "$T/int.json" 1
dd if="$PAT" of="$MNT/w4k" bs=4K count=10 oflag=direct conv=notrunc status=none || fail "w4k: 10 writes failed"
truncate -s $M "$MNT/appear" || fail "cannot create an image in the mount"
rm "$MNT/gone" || fail "cannot remove an image in the mount"
wait $spid || fail "sectorfs-stat -i 1 -c 3 --json failed: $(cat "$T/err")"
expect_eq "$(wc -l < "$T/int.json")" 3 "sectorfs-stat -i 1 -c 3 --json: lines"
while read -r line; do
	printf '%s\n' "$line" > "$T/line.json"
	json_parses "$T/line.json"; [ $? -eq 1 ] && fail "sectorfs-stat -i --json: a line does not parse: $line"
done < "$T/int.json"
stat_row "$T/int.json" 1 gone >/dev/null || fail "report 1 lacks the image 'gone'"
stat_row "$T/int.json" 1 appear >/dev/null && fail "report 1 shows 'appear' before it was created"
stat_row "$T/int.json" 2 gone >/dev/null && fail "report 2 still shows the removed image 'gone'"
stat_row "$T/int.json" 2 appear >/dev/null || fail "report 2 lacks the new image 'appear'"
r2=$(stat_row "$T/int.json" 2 w4k)
expect_eq "$(row_key "$r2" writes)" 10 "sectorfs-stat interval report: writes of w4k"
expect_eq "$(row_key "$r2" bytes_written)" $((10 * 4 * K)) "sectorfs-stat interval report: bytes_written of w4k"
expect_eq "$(row_key "$(stat_row "$T/int.json" 2 seq)" writes)" 0 "sectorfs-stat interval report: writes of seq"
expect_eq "$(row_key "$(stat_row "$T/int.json" 3 w4k)" writes)" 0 "sectorfs-stat report 3: writes of w4k"
grep -q '"kind":"interval"' <<<"$(sed -n 2p "$T/int.json")" || fail "report 2 is not marked as an interval"
pass "sectorfs-stat -i: interval deltas exact, new image shown, removed image dropped, every line parses"

"$SECTORFS_STAT" "$MNT" -i 1 > "$T/sig.txt" 2>&1 &
spid=$!
on_exit "kill $spid"
wait_lines "$T/sig.txt" 3
kill -INT $spid
rc=0
wait $spid || rc=$?
expect_eq $rc 0 "sectorfs-stat -i 1: exit status after SIGINT"
pass "sectorfs-stat exits 0 on SIGINT"
stop_daemon
