#!/bin/bash
# SPDX-License-Identifier: MIT
# stats.sh - the statistics of SPEC.md "Statistics" are exact, seen through
# a real mount with GNU dd O_DIRECT I/O, and sectorfs-stat shows them.
#
# Proves, each on a fresh image:
#  - 100 O_DIRECT 4 KiB writes: writes=100, bytes_written=409600, 100 in the
#    "4K" size bucket and the ">=4K" alignment bucket; a dd conv=fsync adds
#    exactly one flush;
#  - 32 KiB sequential writes over 4 MiB of a thin image with 1 MiB blocks:
#    first_writes=4, overwrites=124, zeroed_bytes=4*(1M-32K), 4 blocks
#    allocated, and the write_first/write_overwrite latency counts match;
#  - misaligned reads and writes on 4kn: EINVAL, misaligned_rejected and
#    the 512/1K/2K alignment buckets count exactly each of them;
#  - partial-physical-sector writes on 512e: rmw_writes counts exactly them;
#  - 4 parallel dd writers (racing first writes to the same blocks, plus a
#    region each): exact totals of every counter, data as written;
#  - NAME.json is one line, parses (python3 or jq; else that check is
#    skipped) and has every key SPEC.md lists; the text file shows the same
#    counter values;
#  - a stats file is a snapshot taken at open: the text read in 1-byte
#    chunks (dd bs=1) and again with cat through the SAME open descriptor
#    (rewound) is the same bytes, while a new open sees the newer I/O;
#  - reset: writing "reset" zeroes every counter (allocation stays), I/O
#    after it counts from zero; anything else written fails with EINVAL;
#  - sectorfs-stat: one row per image with the daemon's counts; -i 1 -c 2
#    gives two reports; the interval report holds the interval's own I/O,
#    shows an image created in between and drops one removed; --json lines
#    parse; no escape codes into a pipe; SIGINT exits 0; a directory that
#    is no sectorfs mount gives exit 2 and says so; an unknown image name
#    exits 1 naming it; a -o nostats mount gives exit 2 naming nostats.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

requires_built "$SECTORFS_STAT"

K=1024
M=$((1024 * 1024))
PAT="$T/pattern"
head -c $((4 * M)) /dev/urandom > "$PAT" || fail "cannot make the pattern file"

# ---- helpers ----

# key_is NAME KEY WANT: a top-level number of NAME.json.
key_is() { expect_eq "$(stats_key "$1" "$2")" "$3" "$1: $2"; }

# sub_key NAME OBJECT KEY: a number inside a flat sub-object of NAME.json
# ("size_histogram" "4K", or a latency class "write_first" "count").
sub_key() {
	tr -d ' \n' < "$MNT/.stats/$1.json" | grep -o "\"$2\":{[^}]*}" | head -n1 |
		grep -o "\"$3\":[0-9.]*" | head -n1 | cut -d: -f2
}
sub_is() { expect_eq "$(sub_key "$1" "$2" "$3")" "$4" "$1: $2.$3"; }

# wr IMG OFF LEN [DD OPTION]: one O_DIRECT write of pattern bytes; must succeed.
wr() {
	dd if="$PAT" of="$MNT/$1" bs="$3" count=1 seek="$2" oflag=direct,seek_bytes \
		conv=notrunc${4:+,$4} status=none 2>"$T/err" ||
		fail "$1: write of $3 at $2 failed: $(cat "$T/err")"
}
# rd IMG OFF LEN: one O_DIRECT read; must succeed.
rd() {
	dd if="$MNT/$1" of=/dev/null bs="$3" count=1 skip="$2" iflag=direct,skip_bytes status=none 2>"$T/err" ||
		fail "$1: read of $3 at $2 failed: $(cat "$T/err")"
}
# bad_wr / bad_rd IMG OFF LEN: a misaligned I/O, refused with EINVAL.
bad_wr() {
	expect_errno "Invalid argument" dd if="$PAT" of="$MNT/$1" bs="$3" count=1 seek="$2" \
		oflag=direct,seek_bytes conv=notrunc status=none
}
bad_rd() {
	expect_errno "Invalid argument" dd if="$MNT/$1" of=/dev/null bs="$3" count=1 skip="$2" \
		iflag=direct,skip_bytes status=none
}

# json_parses FILE: 0 if it parses, 1 if not, 2 if there is no parser.
json_parses() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool < "$1" >/dev/null 2>&1
	elif command -v jq >/dev/null 2>&1; then
		jq . < "$1" >/dev/null 2>&1
	else
		return 2
	fi
}

# write_stats NAME TEXT: write TEXT (no newline) to the text stats file.
write_stats() { bash -c 'printf %s "$1" > "$2"' _ "$2" "$MNT/.stats/$1"; }

# stat_row FILE LINE IMAGE: the JSON object of IMAGE in report LINE of FILE.
stat_row() { sed -n "$2p" "$1" | grep -o "{\"image\":\"$3\"[^}]*}"; }
# row_key ROW KEY: a number of a row object.
row_key() { grep -o "\"$2\":[0-9.]*" <<<"$1" | head -n1 | cut -d: -f2; }

# wait_lines FILE N: until FILE has N lines (10 s at most).
wait_lines() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(wc -l < "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "sectorfs-stat wrote no report $2 within 10 s: $(cat "$1")"
}

COUNTERS="reads writes bytes_read bytes_written flushes discards write_zeroes first_writes
	overwrites zeroed_bytes misaligned_rejected rmw_writes"
SIZE_BUCKETS="512 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K >=1M"
ALIGN_BUCKETS="512 1K 2K >=4K"
LAT_CLASSES="read write_overwrite write_first flush"
LAT_FIELDS="count mean p50 p90 p99 p999 max"

sidecar w4k 8M 512n thin 1M
sidecar seq 8M 512n thin 1M
sidecar mis 8M 4kn thin 64K
sidecar rmw 8M 512e thin 64K
sidecar conc 16M 512n thin 1M
sidecar gone 1M 512n thin
IMAGES="conc gone mis rmw seq w4k"
start_daemon

# ---- exact counts ----

dd if="$PAT" of="$MNT/w4k" bs=4K count=100 oflag=direct conv=notrunc status=none ||
	fail "w4k: 100 4 KiB O_DIRECT writes failed"
key_is w4k writes 100
key_is w4k bytes_written 409600
key_is w4k reads 0
sub_is w4k size_histogram 4K 100
sub_is w4k alignment_histogram ">=4K" 100
key_is w4k first_writes 1
key_is w4k overwrites 99
pass "100 O_DIRECT 4 KiB writes: writes=100, bytes_written=409600, 100 in the 4K bucket"
wr w4k $((100 * 4 * K)) $((4 * K)) fsync
key_is w4k flushes 1
sub_is w4k flush count 1
key_is w4k writes 101
pass "dd conv=fsync: exactly one flush"

dd if="$PAT" of="$MNT/seq" bs=32K count=128 oflag=direct conv=notrunc status=none ||
	fail "seq: 128 32 KiB writes failed"
key_is seq writes 128
key_is seq first_writes 4
key_is seq overwrites 124
key_is seq zeroed_bytes $((4 * (M - 32 * K)))
key_is seq allocated_blocks 4
key_is seq total_blocks 8
sub_is seq write_first count 4
sub_is seq write_overwrite count 124
sub_is seq size_histogram 32K 128
pass "32 KiB sequential writes over 4 MiB, 1 MiB thin blocks: first_writes=4, overwrites=124, zeroed_bytes=4*(1M-32K)"

# On 4kn every I/O below is refused; its alignment class is the largest
# power of two dividing offset and length.
bad_wr mis 0 512            # 512
bad_wr mis 4096 512         # 512
bad_wr mis 512 4096         # 512
bad_wr mis 4608 1536        # 512
bad_rd mis 0 512            # 512
bad_rd mis 512 8192         # 512
bad_wr mis 1024 1024        # 1K
bad_rd mis 3072 1024        # 1K
bad_wr mis 2048 2048        # 2K
bad_rd mis 8192 6144        # 2K
bad_wr mis 100 4096         # < 512: counted as 512
wr mis 8192 4096            # >=4K, accepted
rd mis 8192 4096            # >=4K, accepted
key_is mis misaligned_rejected 11
sub_is mis alignment_histogram 512 7
sub_is mis alignment_histogram 1K 2
sub_is mis alignment_histogram 2K 2
sub_is mis alignment_histogram ">=4K" 2
key_is mis not_4k_aligned 11
key_is mis writes 1
key_is mis reads 1
key_is mis allocated_blocks 1
pass "misaligned I/O on 4kn: misaligned_rejected=11, alignment buckets 512/1K/2K/>=4K = 7/2/2/2"

# On 512e a write is a read-modify-write when it covers a 4 KiB physical
# sector only in part.
wr rmw 512 512                      # rmw
wr rmw 4096 512                     # rmw
wr rmw 0 4096                       # whole sector
wr rmw 512 4096                     # rmw (two sectors in part)
wr rmw 8192 8192                    # whole sectors
wr rmw $((4096 + 1024)) 1024        # rmw
wr rmw 0 1536                       # rmw
wr rmw $((64 * K - 512)) 1024       # rmw, across a block boundary
rd rmw 512 512                      # a read is never an rmw
key_is rmw writes 8
key_is rmw rmw_writes 6
key_is rmw misaligned_rejected 0
key_is rmw reads 1
pass "partial-physical writes on 512e: rmw_writes=6 of 8 writes"

# Four writers race for the first writes of the same four 1 MiB blocks
# (same data), then each writes 2 MiB of its own in 4 KiB I/Os.
pids=()
for i in 0 1 2 3; do
	(
		dd if="$PAT" of="$MNT/conc" bs=32K count=128 oflag=direct conv=notrunc status=none &&
		dd if="$PAT" of="$MNT/conc" bs=4K count=512 seek=$(((4 + 2 * i) * M)) \
			oflag=direct,seek_bytes conv=notrunc status=none
	) &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "conc: a parallel dd writer failed"; done
key_is conc writes $((4 * 128 + 4 * 512))
key_is conc bytes_written $((4 * 4 * M + 4 * 2 * M))
key_is conc first_writes 12
key_is conc overwrites $((4 * 128 + 4 * 512 - 12))
key_is conc zeroed_bytes $((4 * (M - 32 * K) + 8 * (M - 4 * K)))
key_is conc allocated_blocks 12
sub_is conc size_histogram 32K 512
sub_is conc size_histogram 4K 2048
sub_is conc write_first count 12
sub_is conc write_overwrite count $((4 * 128 + 4 * 512 - 12))
truncate -s $((16 * M)) "$T/conc.model"
dd if="$PAT" of="$T/conc.model" conv=notrunc status=none
for i in 0 1 2 3; do
	dd if="$PAT" of="$T/conc.model" bs=$M count=2 seek=$((4 + 2 * i)) conv=notrunc status=none
done
dd if="$MNT/conc" of="$T/conc.read" bs=$M iflag=direct status=none || fail "conc: reading it back failed"
cmp -s "$T/conc.read" "$T/conc.model" || fail "conc: data differs from what the writers wrote"
pass "4 parallel dd writers: exact totals (2560 writes, 12 first writes, zeroed bytes) and data"

# ---- the files themselves ----

# A stats file's bytes are rendered at open (st_size is 0, as in /proc);
# SEEK_HOLE must report the end of what the open file holds, since cp
# copies only up to the first hole it is told of (an image: its size).
if command -v python3 >/dev/null; then
	python3 - "$MNT/.stats/mis.json" "$MNT/.stats/mis" "$MNT/mis" <<'PY' || fail "SEEK_DATA/SEEK_HOLE: see above"
import os, sys
for i, path in enumerate(sys.argv[1:]):
    fd = os.open(path, os.O_RDONLY)
    n = os.lseek(fd, 0, os.SEEK_END) if i == 2 else len(os.pread(fd, 1 << 20, 0))
    hole, data = os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 7, os.SEEK_DATA)
    try:
        os.lseek(fd, n, os.SEEK_DATA)
        past = "no error"
    except OSError as e:
        past = e.errno
    os.close(fd)
    if (hole, data, past) != (n, 7, 6):
        sys.exit("%s: SEEK_HOLE %d (want %d), SEEK_DATA 7 -> %d, SEEK_DATA at the end -> %s (want ENXIO)"
                 % (path, hole, n, data, past))
PY
	pass "SEEK_HOLE is the end of what an open stats file holds, and an image's size"
fi

for img in $IMAGES; do
	f="$MNT/.stats/$img.json"
	expect_eq "$(wc -l < "$f")" 1 "$img.json: number of lines"
	cp "$f" "$T/one.json"
	json_parses "$T/one.json"
	case $? in
	1) fail "$img.json does not parse: $(cat "$T/one.json")" ;;
	2) [ "$img" = conc ] && pass "JSON parse # SKIP neither python3 nor jq" ;;
	esac
	j=$(tr -d ' \n' < "$T/one.json")
	for k in $COUNTERS allocated_blocks total_blocks; do
		grep -q "\"$k\":[0-9]" <<<"$j" || fail "$img.json: no number under \"$k\""
	done
	for k in $SIZE_BUCKETS; do
		grep -o '"size_histogram":{[^}]*}' <<<"$j" | grep -q "\"$k\":[0-9]" ||
			fail "$img.json: size_histogram has no bucket \"$k\""
	done
	for k in $ALIGN_BUCKETS; do
		grep -o '"alignment_histogram":{[^}]*}' <<<"$j" | grep -q "\"$k\":[0-9]" ||
			fail "$img.json: alignment_histogram has no bucket \"$k\""
	done
	for c in $LAT_CLASSES; do
		o=$(grep -o "\"latency_us\":{.*" <<<"$j" | grep -o "\"$c\":{[^}]*}") ||
			fail "$img.json: no latency_us.$c"
		for k in $LAT_FIELDS; do
			grep -q "\"$k\":[0-9]" <<<"$o" || fail "$img.json: latency_us.$c has no number \"$k\""
		done
		grep -q '"histogram":\[' <<<"$o" || fail "$img.json: latency_us.$c has no histogram"
	done
	# The text file shows the same counters.
	cat "$MNT/.stats/$img" > "$T/one.txt"
	for k in reads writes first_writes overwrites rmw_writes flushes discards write_zeroes misaligned_rejected; do
		expect_eq "$(awk -v k="$k" '$1 == k { print $2 }' "$T/one.txt")" "$(stats_key "$img" "$k")" \
			"$img: $k in the text file against NAME.json"
	done
done
pass "NAME.json: one line, parses, every key of SPEC.md Statistics; the text file shows the same counters"

# ---- sectorfs-stat ----

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

rc=0
"$SECTORFS_STAT" "$T" > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on a plain directory: exit status"
grep -q "not a sectorfs mount" "$T/err" || fail "sectorfs-stat on a plain directory says: $(cat "$T/err")"
rc=0
"$SECTORFS_STAT" / > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on /: exit status"
grep -q "not a sectorfs mount" "$T/err" || fail "sectorfs-stat on / says: $(cat "$T/err")"
rc=0
"$SECTORFS_STAT" "$MNT" w4k nosuchimage > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 1 "sectorfs-stat with an unknown image: exit status"
grep -q "nosuchimage" "$T/err" || fail "sectorfs-stat with an unknown image says: $(cat "$T/err")"
pass "sectorfs-stat: exit 2 and a clear message off a sectorfs mount, exit 1 naming an unknown image"

# ---- a stats file is a snapshot taken at open ----

exec 3<"$MNT/.stats/w4k"
dd bs=1 status=none <&3 > "$T/bytes1" || fail "reading the text stats in 1-byte chunks failed"
dd if="$PAT" of="$MNT/w4k" bs=4K count=7 oflag=direct conv=notrunc status=none || fail "w4k: 7 writes failed"
sleep 0.2
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import os; os.lseek(3, 0, os.SEEK_SET)' || fail "cannot rewind fd 3"
	rewound=1
elif command -v perl >/dev/null 2>&1; then
	perl -e 'open(my $f, "<&=", 3) or die; sysseek($f, 0, 0) or die' || fail "cannot rewind fd 3"
	rewound=1
else
	rewound=0
fi
if [ $rewound = 1 ]; then
	cat <&3 > "$T/cat1"
	exec 3<&-
	[ -s "$T/bytes1" ] || fail "the text stats read empty"
	cmp -s "$T/bytes1" "$T/cat1" || fail "1-byte reads and cat through one open differ: $(diff "$T/bytes1" "$T/cat1")"
	cat "$MNT/.stats/w4k" > "$T/cat2"
	cmp -s "$T/cat1" "$T/cat2" && fail "a new open of the text stats does not see 7 more writes"
	pass "text stats: 1-byte reads and cat through the same open give the same bytes; a new open sees new I/O"
else
	exec 3<&-
	pass "text stats snapshot # SKIP neither python3 nor perl to rewind a descriptor"
fi

# ---- reset ----

write_stats seq reset || fail "writing 'reset' to .stats/seq failed"
for k in $COUNTERS not_4k_aligned out_of_range discard_bytes write_zeroes_bytes; do
	key_is seq "$k" 0
done
for k in $SIZE_BUCKETS; do sub_is seq size_histogram "$k" 0; done
for k in $ALIGN_BUCKETS; do sub_is seq alignment_histogram "$k" 0; done
for c in $LAT_CLASSES; do sub_is seq "$c" count 0; done
key_is seq allocated_blocks 4
key_is seq total_blocks 8
wr seq 0 $((32 * K))
key_is seq writes 1
key_is seq overwrites 1
key_is seq first_writes 0
echo reset > "$MNT/.stats/seq" || fail "echo reset > .stats/seq failed"
key_is seq writes 0
wr seq 0 $((32 * K))
for bad in foo resetx RESET "reset reset" 0; do
	expect_errno "Invalid argument" write_stats seq "$bad"
done
key_is seq writes 1
expect_errno "" write_stats seq.json reset
key_is seq writes 1
pass "reset zeroes every counter (allocation stays); anything else fails with EINVAL and changes nothing"

stop_daemon

# ---- a mount without statistics ----

start_daemon -o nostats
[ -e "$MNT/.stats" ] && fail "-o nostats mount has a .stats directory"
rc=0
"$SECTORFS_STAT" "$MNT" > "$T/out" 2>"$T/err" || rc=$?
expect_eq $rc 2 "sectorfs-stat on a -o nostats mount: exit status"
grep -q "nostats" "$T/err" || fail "sectorfs-stat on a -o nostats mount says: $(cat "$T/err")"
pass "sectorfs-stat on a -o nostats mount: exit 2, says nostats"
stop_daemon
pass "daemon unmounted and exited 0"
