# SPDX-License-Identifier: MIT
# lib-stats.sh - what the tests of the statistics and of sectorfs-stat
# share: a pattern file, the checks of one counter of NAME.json, O_DIRECT
# I/O that must succeed or be refused, and the workloads whose exact
# counts stats-exact-counts.sh and stats-parallel-writers.sh prove (the
# other tests run them to have those counts to show).  Source it after
# lib.sh; it requires FUSE and GNU dd:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-stats.sh"

requires_fuse
requires_gnu_dd
K=1024
M=$((1024 * 1024))
PAT="$T/pattern"
head -c $((4 * M)) /dev/urandom > "$PAT" || fail "cannot make the pattern file"

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

# stats_images: the sidecars of the images the workloads below write.
IMAGES="conc gone mis rmw seq w4k"
stats_images() {
	sidecar w4k 8M 512n thin 1M
	sidecar seq 8M 512n thin 1M
	sidecar mis 8M 4kn thin 64K
	sidecar rmw 8M 512e thin 64K
	sidecar conc 16M 512n thin 1M
	sidecar gone 1M 512n thin
}

# io_w4k: 100 O_DIRECT 4 KiB writes to w4k; io_w4k_fsync: one more, with
# dd conv=fsync (one flush).
io_w4k() {
	dd if="$PAT" of="$MNT/w4k" bs=4K count=100 oflag=direct conv=notrunc status=none ||
		fail "w4k: 100 4 KiB O_DIRECT writes failed"
}
io_w4k_fsync() { wr w4k $((100 * 4 * K)) $((4 * K)) fsync; }

# io_seq: 32 KiB sequential writes over the first 4 MiB of seq (1 MiB blocks).
io_seq() {
	dd if="$PAT" of="$MNT/seq" bs=32K count=128 oflag=direct conv=notrunc status=none ||
		fail "seq: 128 32 KiB writes failed"
}

# io_mis: on 4kn every I/O below but the last two is refused (EINVAL); its
# alignment class is the largest power of two dividing offset and length.
io_mis() {
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
}

# io_rmw: on 512e a write is a read-modify-write when it covers a 4 KiB
# physical sector only in part: 6 of these 8 writes are.
io_rmw() {
	wr rmw 512 512                      # rmw
	wr rmw 4096 512                     # rmw
	wr rmw 0 4096                       # whole sector
	wr rmw 512 4096                     # rmw (two sectors in part)
	wr rmw 8192 8192                    # whole sectors
	wr rmw $((4096 + 1024)) 1024        # rmw
	wr rmw 0 1536                       # rmw
	wr rmw $((64 * K - 512)) 1024       # rmw, across a block boundary
	rd rmw 512 512                      # a read is never an rmw
}

# io_conc: four writers race for the first writes of the same four 1 MiB
# blocks of conc (same data), then each writes 2 MiB of its own in 4 KiB I/Os.
io_conc() {
	local i p pids=()
	for i in 0 1 2 3; do
		(
			dd if="$PAT" of="$MNT/conc" bs=32K count=128 oflag=direct conv=notrunc status=none &&
			dd if="$PAT" of="$MNT/conc" bs=4K count=512 seek=$(((4 + 2 * i) * M)) \
				oflag=direct,seek_bytes conv=notrunc status=none
		) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail "conc: a parallel dd writer failed"; done
}

# serve_all_io: the images of stats_images served, every workload above
# run on them.
serve_all_io() {
	stats_images
	start_daemon
	stats_all_io
}

# stats_all_io: every workload above, on the images of stats_images.
stats_all_io() {
	io_w4k
	io_w4k_fsync
	io_seq
	io_mis
	io_rmw
	io_conc
}
