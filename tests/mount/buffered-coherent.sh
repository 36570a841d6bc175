#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered-coherent.sh - buffered and O_DIRECT I/O to one image are
# coherent both ways, in several interleavings (there is no cache to go
# stale: every buffered read reaches the disk).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-buffered.sh"

buffered_serve

for i in 1 2 3; do
	head -c $K /dev/urandom > "$T/a"; head -c $K /dev/urandom > "$T/b"
	# buffered write, O_DIRECT read
	dd if="$T/a" of="$MNT/k4" bs=1024 seek=$((40 + 4 * i)) conv=notrunc status=none
	dd if="$MNT/k4" bs=$K skip=$((10 + i)) count=1 iflag=direct status=none | cmp -s - "$T/a" ||
		fail "round $i: O_DIRECT read does not see a buffered write"
	# buffered read, O_DIRECT write over it, buffered read again
	dd if="$MNT/k4" bs=512 skip=$((80 + 8 * i)) count=8 status=none > /dev/null
	dd if="$T/b" of="$MNT/k4" bs=$K seek=$((10 + i)) oflag=direct conv=notrunc status=none
	dd if="$MNT/k4" bs=512 skip=$((80 + 8 * i)) count=8 status=none | cmp -s - "$T/b" ||
		fail "round $i: a buffered read after an O_DIRECT write sees old data"
	# both at once on one descriptor each
	exec 4<>"$MNT/k4"
	dd if="$T/a" of="$MNT/k4" bs=$K seek=$((10 + i)) oflag=direct conv=notrunc status=none
	perl -e 'sysseek(STDIN, $ARGV[0], 0); sysread(STDIN, my $b, 4096) == 4096 or die; print $b' $(((10 + i) * K)) <&4 |
		cmp -s - "$T/a" || fail "round $i: a descriptor open before an O_DIRECT write reads old data"
	exec 4>&-
done
pass "buffered and O_DIRECT I/O coherent both ways (3 rounds, 3 interleavings)"
stop_daemon
