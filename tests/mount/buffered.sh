#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered.sh - opens without O_DIRECT behave as a block device's page
# cache does; O_DIRECT opens keep the disk's rules:
#  - qemu-img info (its format probe reads 512 bytes) and file -s work on
#    a 4kn image; dd bs=512 without oflag=direct reads and writes it;
#  - what reaches the disk is whole physical sectors: a buffered 512-byte
#    read of a 4kn disk is one 4 KiB read in the stats, never a 512-byte
#    one; a 100-byte write across two sectors reads and writes both;
#  - coherent both ways, in several interleavings (there is no cache to
#    go stale: every buffered read reaches the disk);
#  - two buffered writers of the two halves of one sector lose no update
#    (the read-modify-write takes the sectors' range exclusively);
#  - a buffered write past the end fails with ENOSPC at the write call, and
#    one made durable with fsync survives kill -9;
#  - O_DIRECT I/O of part of a sector still gets EINVAL.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd perl cmp
K=4096

sidecar k4 8M 4kn thin 64K
sidecar e5 8M 512e thin 64K
start_daemon

# ---- tools that probe ----
if command -v qemu-img >/dev/null 2>&1; then
	qemu-img info "$MNT/k4" > "$T/qi" 2>&1 || fail "qemu-img info on a 4kn image: $(cat "$T/qi")"
	grep -q "file format: raw" "$T/qi" || fail "qemu-img info: $(cat "$T/qi")"
	pass "qemu-img info (no -f) on a 4kn image"
fi
file -s "$MNT/k4" > "$T/fs" 2>&1 || fail "file -s: $(cat "$T/fs")"
grep -q "data" "$T/fs" || fail "file -s: $(cat "$T/fs")"

# ---- dd bs=512, buffered, and the stats ----
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

# ---- coherency ----
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

# ---- two writers of one sector ----
perl -e '
	my ($path, $n) = @ARGV;
	my @pid;
	for my $half (0, 1) {
		my $p = fork();
		if ($p == 0) {
			open(my $f, "+<", $path) or die "open: $!\n";
			for my $i (1 .. $n) {
				sysseek($f, 8 * 4096 + $half * 2048, 0);
				syswrite($f, pack("N", $i) x 512) == 2048 or die "write: $!\n";
			}
			exit 0;
		}
		push @pid, $p;
	}
	waitpid($_, 0) for @pid;
	open(my $f, "<", $path) or die;
	sysseek($f, 8 * 4096, 0);
	sysread($f, my $b, 4096);
	for my $half (0, 1) {
		my @v = unpack("N*", substr($b, $half * 2048, 2048));
		my %seen = map { $_ => 1 } @v;
		die "half $half holds " . join(",", sort keys %seen) . ", not $n: an update was lost\n"
			if keys(%seen) != 1 || $v[0] != $n;
	}' "$MNT/e5" 2000 || fail "two buffered writers of one 512e sector lost an update"
pass "two buffered writers of the halves of one physical sector: no update lost (2000 each)"

# ---- the end, durability, O_DIRECT rules ----
expect_errno "No space left on device" perl -e 'open(F, "+<", $ARGV[0]) or die; sysseek(F, 8*1048576-100, 0); syswrite(F, "y" x 200) == 200 or die "$!\n"' "$MNT/k4"
expect_errno "Invalid argument" dd if="$T/blk" of="$MNT/k4" bs=512 count=1 seek=3 oflag=direct conv=notrunc status=none
perl -MIO::Handle -e 'open(F, "+<", $ARGV[0]) or die; sysseek(F, 5*4096+100, 0); syswrite(F, "durable") == 7 or die; F->sync or die "fsync: $!\n"' "$MNT/k4" ||
	fail "buffered write + fsync"
kill9_daemon
start_daemon
[ "$(dd if="$MNT/k4" bs=1 skip=$((5 * K + 100)) count=7 status=none)" = durable ] ||
	fail "a buffered write made durable with fsync is gone after kill -9"
stop_daemon
pass "buffered: ENOSPC past the end at the write call, durable with fsync; O_DIRECT of part of a sector: EINVAL"
