#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-reset.sh - writing "reset" to a text stats file zeroes every
# counter, bucket and latency count (allocation stays); I/O after it counts
# from zero; anything else written fails with EINVAL and changes nothing,
# and so does "reset" written to NAME.json.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

sidecar seq 8M 512n thin 1M
start_daemon
io_seq

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
