#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-snapshot-at-open.sh - a stats file is a snapshot taken at open:
# the text read in 1-byte chunks (dd bs=1) and again with cat through the
# SAME open descriptor (rewound) is the same bytes, while a new open sees
# the newer I/O.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"

sidecar w4k 8M 512n thin 1M
start_daemon
io_w4k

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
stop_daemon
