#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered-two-writers.sh - two buffered writers of the two halves of one
# physical sector of a 512e image lose no update (the read-modify-write
# takes the sectors' range exclusively).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-buffered.sh"

buffered_serve

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
stop_daemon
