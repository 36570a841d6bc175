#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered-whole-sectors.sh - dd bs=512 without oflag=direct reads and
# writes a 4kn image, and what reaches the disk is whole physical
# sectors: a buffered 512-byte read is one 4 KiB read in the stats, never
# a 512-byte one; a 100-byte write across two sectors reads and writes
# both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-buffered.sh"

buffered_serve

head -c $((2 * K)) /dev/urandom > "$T/blk"
dd if="$T/blk" of="$MNT/k4" bs=512 seek=9 conv=notrunc status=none || fail "buffered 512-byte writes on 4kn"
dd if="$MNT/k4" bs=4096 skip=1 count=1 iflag=direct status=none > "$T/back"
cmp -s <(tail -c +$((512 + 1)) "$T/back" | head -c $((2 * K))) "$T/blk" ||
	cmp -s <(dd if="$T/back" bs=512 skip=1 count=4 status=none) <(head -c 2048 "$T/blk") ||
	fail "buffered 512-byte writes did not land where they were made"
r0=$(stats_key k4 reads); b0=$(stats_key k4 bytes_read)
s512=$(tr -d ' \n' < "$MNT/.stats/k4.json" | grep -o '"size_histogram":{"512":[0-9]*' | grep -o '[0-9]*$')
dd if="$MNT/k4" bs=512 skip=9 count=1 status=none | cmp -s - <(head -c 512 "$T/blk") ||
	fail "a buffered 512-byte read on 4kn"
[ "$(stats_key k4 reads)" -eq $((r0 + 1)) ] || fail "a buffered 512-byte read was $(( $(stats_key k4 reads) - r0 )) reads"
[ "$(stats_key k4 bytes_read)" -eq $((b0 + K)) ] || fail "a buffered 512-byte read read $(( $(stats_key k4 bytes_read) - b0 )) bytes, not one sector"
s512b=$(tr -d ' \n' < "$MNT/.stats/k4.json" | grep -o '"size_histogram":{"512":[0-9]*' | grep -o '[0-9]*$')
[ "$s512b" = "$s512" ] || fail "a 512-byte request reached the 4kn disk"
w0=$(stats_key k4 writes); r0=$(stats_key k4 reads)
printf 'x%.0s' $(seq 100) | dd of="$MNT/k4" bs=100 seek=$(( (3 * K - 50) / 100 )) conv=notrunc status=none 2>/dev/null ||
	perl -e 'open(F, "+<", $ARGV[0]) or die; sysseek(F, 3*4096-50, 0); syswrite(F, "x" x 100) == 100 or die "$!\n"' "$MNT/k4" ||
	fail "a buffered write across two sectors"
[ "$(stats_key k4 writes)" -eq $((w0 + 1)) ] || fail "a buffered write across two sectors was $(( $(stats_key k4 writes) - w0 )) writes"
[ "$(stats_key k4 reads)" -ge $((r0 + 2)) ] || fail "a buffered write across two sectors read $(( $(stats_key k4 reads) - r0 )) of them"
pass "dd bs=512 without O_DIRECT on 4kn; the disk sees whole sectors (1 read of 4 KiB for 512 bytes)"
stop_daemon
