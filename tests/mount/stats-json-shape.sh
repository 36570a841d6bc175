#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-json-shape.sh - NAME.json is one line, parses (python3 or jq; else
# that check is skipped) and has every key SPEC.md "Statistics" lists
# (counters, size and alignment buckets, every latency class with its
# fields and histogram); the text file shows the same counter values.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

serve_all_io

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
stop_daemon
