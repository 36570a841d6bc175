#!/bin/bash
# SPDX-License-Identifier: MIT
# name-length.sh - a name longer than 200 bytes gives ENAMETOOLONG to
# lookup (stat), create (touch, truncate), rename (mv) and in .stats (no
# stats of a shorter image by a prefix of the name); a name of exactly 200
# bytes works, to serve and to create; statfs says names have at most 200
# bytes.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd truncate

L200=$(printf 'L%.0s' {1..200})
sidecar plain 1M 512n thin 64K
sidecar "$L200" 1M 512n thin 64K
start_daemon

L201="${L200}x"
L300="$L200$(printf 'M%.0s' {1..100})"
for n in "$L201" "$L300"; do
	expect_errno "File name too long" stat "$MNT/$n"
	expect_errno "File name too long" touch "$MNT/$n"
	expect_errno "File name too long" truncate -s 1M "$MNT/$n"
	expect_errno "File name too long" mv "$MNT/plain" "$MNT/$n"
	expect_errno "File name too long" stat "$MNT/.stats/$n"
	expect_errno "File name too long" stat "$MNT/.stats/$n.json"
	expect_errno "File name too long" cat "$MNT/.stats/$n.json"
done
[ -e "$MNT/plain" ] || fail "plain is gone after a refused rename"
stat "$MNT/$L200" >/dev/null || fail "a name of 200 bytes does not stat"
head -n1 "$MNT/.stats/$L200" | grep -q "^sectorfs stats: $L200\$" || fail "the stats of the 200-byte name"
truncate -s 1M "$MNT/new$L200" 2>/dev/null && fail "a name of 203 bytes was created"
truncate -s 1M "$MNT/${L200:3}new" || fail "a new image with a name of 200 bytes could not be created"
rm "$MNT/${L200:3}new" || fail "cannot remove the new 200-byte image"
expect_eq "$(stat -f -c %l "$MNT")" 200 "statfs: the longest name"
pass "names over 200 bytes: ENAMETOOLONG for stat, touch, truncate, mv and in .stats; 200 bytes work; statfs says 200"

stop_daemon
pass "daemon unmounted and exited 0"
