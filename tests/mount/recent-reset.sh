#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-reset.sh - writing "reset" to an image's stats file clears both
# its lists, refused_recent and rmw_recent, and the text file says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"

recent_serve

probe "$T/p1" if=/dev/zero of="$MNT/d4k" bs=512 seek=3 count=1 oflag=direct conv=notrunc 2>/dev/null &&
	fail "a 512-byte O_DIRECT write to a 4kn disk succeeded"
probe "$T/p4" if=/dev/zero of="$MNT/d512e" bs=512 seek=9 count=2 oflag=direct conv=notrunc ||
	fail "512-byte writes to a 512e disk failed"
json_check "
want(len(d['d4k']['refused_recent']) == 1 and len(d['d512e']['rmw_recent']) == 2, 'the lists before the reset')
"

echo reset > "$MNT/.stats/d4k" || fail "reset d4k"
echo reset > "$MNT/.stats/d512e" || fail "reset d512e"
json_check "
for n in ('d4k', 'd512e'):
    want(d[n]['refused_recent'] == [] and d[n]['rmw_recent'] == [], n + ': reset left entries')
"
grep -q '^refused I/Os: none$' "$MNT/.stats/d4k" || fail "text after reset"
pass "reset clears both lists"

stop_daemon
