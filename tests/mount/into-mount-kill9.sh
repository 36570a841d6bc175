#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-kill9.sh - kill -9 while a process that created an image
# through the mount is still writing: what it fsynced is there, and the
# image is a clean disk of the size fsync made durable or more.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp perl
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

head -c $((5 * M)) /dev/urandom > "$T/src"
start_daemon -o sector=4kn
perl -MIO::Handle -e '
	open(my $f, ">", $ARGV[0]) or die "open: $!\n";
	open(my $s, "<", $ARGV[1]) or die "src: $!\n";
	binmode $f; binmode $s;
	my $buf;
	for (1 .. 48) { read($s, $buf, 65536) == 65536 or die "read\n"; syswrite($f, $buf) == 65536 or die "write: $!\n"; }
	$f->sync or die "fsync: $!\n";
	for (1 .. 16) { read($s, $buf, 65536); syswrite($f, $buf) == 65536 or die "write: $!\n"; }
	open(my $r, ">", $ARGV[2]); close($r);
	sleep 30;' "$MNT/k" "$T/src" "$T/written" &
WPID=$!
on_exit "kill $WPID"
for ((i = 0; i < 100; i++)); do [ -e "$T/written" ] && break; sleep 0.1; done
[ -e "$T/written" ] || fail "the writer did not get through"
kill9_daemon
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null
"$SECTORFS_IMG" check "$STORE/k" > "$T/check.out" 2>&1 || true
start_daemon
size=$(stat -c %s "$MNT/k")
[ "$size" -ge $((3 * M)) ] || fail "k is $size bytes after kill -9: less than the 3 MiB fsync made durable"
cmp -n $((3 * M)) "$T/src" "$MNT/k" || fail "what was fsynced before kill -9 is not there"
stop_daemon
"$SECTORFS_IMG" check "$STORE/k" > "$T/check.out" 2>&1 || fail "check after kill -9: $(cat "$T/check.out")"
pass "kill -9 while a creator writes: the fsynced 3 MiB are there, the image ($size bytes) is clean"
