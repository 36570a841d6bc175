#!/bin/bash
# SPDX-License-Identifier: MIT
# unmount-under-io.sh - the mount pulled away under running I/O has one
# defined result.  O_DIRECT dd writers (each write fsynced, conv=fsync) on
# two images and a reader are running; `fusermount3 -u` fails with "busy"
# and leaves the mount alone; `fusermount3 -uz` detaches it: writes
# already under way finish without error, the next open fails (ENOENT,
# nothing is created under the mount point), and once the writers, the
# reader and a process holding an image open are gone the daemon exits 0.
# Every read the reader made saw the data written before.  Then
# `sectorfs-img check` is clean (exit 0) on both images, and after remount
# every write whose dd exited 0 reads back byte for byte, everything else
# reads as the written data or zeros.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp awk comm timeout

CH=$((256 * 1024))                   # one write; chunk c is at c * CH
NCH=$((32 * M / CH))
sidecar fa1 32M 4kn thin 64K
sidecar fa2 32M 512e zeroedthick 64K
declare -A LSS=([fa1]=4096 [fa2]=512)
for img in fa1 fa2; do head -c $((32 * M)) /dev/urandom > "$T/src.$img"; done
start_daemon
# chunks 0-3 (the first MiB): written and fsynced before; the reader's reference
for img in fa1 fa2; do
	dd if="$T/src.$img" of="$MNT/$img" bs=1M count=1 oflag=direct conv=notrunc,fsync status=none ||
		fail "$img: first MiB not written"
	printf '0\n1\n2\n3\n' > "$T/done.$img.pre"
done
head -c $M "$T/src.fa1" > "$T/ref"

# writer IMG J: chunks 4+J, 6+J, ... each one O_DIRECT dd with conv=fsync;
# a chunk goes into done.IMG.J after its dd exited 0; stops at the first
# failure (conv=nocreat: once the mount is gone, nothing is created there).
writer() {
	local img=$1 j=$2 c
	for ((c = 4 + j; c < NCH; c += 2)); do
		dd if="$T/src.$img" of="$MNT/$img" bs=$CH count=1 skip=$c seek=$c \
			oflag=direct conv=notrunc,nocreat,fsync status=none 2>>"$T/werr.$img.$j" || return 0
		echo $c >> "$T/done.$img.$j"
	done
}
# reader: the first MiB of fa1 over and over, until an open fails.
reader() {
	local n=0
	while dd if="$MNT/fa1" of="$T/rd" bs=1M count=1 iflag=direct status=none 2>>"$T/rerr"; do
		cmp -s "$T/rd" "$T/ref" || echo "read $n: $(cmp "$T/rd" "$T/ref" 2>&1)" >> "$T/reader.bad"
		n=$((n + 1))
		echo $n > "$T/reads"
	done
}
WPIDS=()
for img in fa1 fa2; do
	for j in 0 1; do
		: > "$T/done.$img.$j"
		writer $img $j &
		WPIDS+=($!)
	done
done
reader &
RPID=$!
sleep 120 3<"$MNT/fa2" &             # holds fa2 open until ended
HPID=$!
BG+=("${WPIDS[@]}" "$RPID" "$HPID")
# wait until every writer has made some writes durable
for ((i = 0; i < 200; i++)); do
	min=$(wc -l "$T"/done.fa?.[01] | awk '$2 != "total" { if (m == "" || $1 < m) m = $1 } END { print m }')
	[ "$min" -ge 3 ] && [ -s "$T/reads" ] && break
	sleep 0.05
done
[ "$min" -ge 3 ] && [ -s "$T/reads" ] ||
	fail "writers or reader too slow: $(wc -l "$T"/done.fa?.[01]; cat "$T"/werr.* "$T/rerr" 2>/dev/null)"
running=0
for p in "${WPIDS[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
[ $running -gt 0 ] || fail "test bug: every writer was done before the unmount"
cat "$T"/done.fa?.[01] | wc -l > "$T/before"
rc=0
fusermount3 -u "$MNT" >"$T/u.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "fusermount3 -u succeeded with files open (expected: busy)"
grep -qi busy "$T/u.out" || fail "fusermount3 -u with files open: expected 'busy', got: $(cat "$T/u.out")"
mountpoint -q "$MNT" || fail "mount gone after a refused fusermount3 -u"
kill -0 "$DPID" 2>/dev/null || fail "daemon died after a refused fusermount3 -u"
fusermount3 -uz "$MNT" || fail "fusermount3 -uz failed"
! mountpoint -q "$MNT" || fail "still mounted after fusermount3 -uz"
cat "$T"/done.fa?.[01] | wc -l > "$T/at_uz"
for p in "${WPIDS[@]}"; do
	wait_gone "$p" 20 || fail "writer (pid $p) still runs 20 s after the lazy unmount; under the mount point: $(ls -A "$MNT")"
done
[ -z "$(ls -A "$MNT")" ] || fail "files created under the mount point after the lazy unmount: $(ls -A "$MNT")"
wait_gone $RPID 20 || fail "reader (pid $RPID) still runs 20 s after the lazy unmount"
kill -0 "$DPID" 2>/dev/null || fail "daemon exited while a process (pid $HPID) still held an image open"
kill "$HPID"
wait "$HPID" 2>/dev/null
daemon_exit 30 "the lazy unmount and the last close"
BG=()
before=$(cat "$T/before") at_uz=$(cat "$T/at_uz") after=$(cat "$T"/done.fa?.[01] | wc -l)
for w in fa1.0 fa1.1 fa2.0 fa2.1; do
	# the only error a writer may see: the open after the mount went away
	f="$T/werr.$w"
	if [ ! -f "$f" ] || [ "$(wc -l < "$f")" -ne 1 ] || ! grep -q "failed to open.*No such file or directory" "$f"; then
		fail "writer $w: expected one error, the open after the unmount failing with ENOENT; got: $(cat "$f" 2>/dev/null || echo none)"
	fi
done
[ ! -s "$T/reader.bad" ] || fail "reader saw other data than the fsynced first MiB: $(head -n3 "$T/reader.bad")"
[ "$(wc -l < "$T/rerr")" -eq 1 ] && grep -q "failed to open.*No such file or directory" "$T/rerr" ||
	fail "reader: expected one error, the open after the unmount failing with ENOENT; got: $(cat "$T/rerr")"
pass "unmount under I/O ($running of 4 writers running): fusermount3 -u says busy; -uz detaches, writes already open finish ($((after - at_uz)) completed after it), the next opens get ENOENT, the daemon exits 0 after the last close; $(cat "$T/reads") reads all saw the fsynced data"
for img in fa1 fa2; do check_clean $img "after the lazy unmount"; done
pass "unmount under I/O: sectorfs-img check clean on both images"
start_daemon
for img in fa1 fa2; do
	dump "$img" "$T/got"
	verify "$img" "$T/got" "$T/src.$img" $CH "${LSS[$img]}" "$T"/done.$img.*
	echo "# $img: $(cat "$T"/done.$img.* | wc -l) chunks fsynced; of the others $NEXACT read as written, $NZERO as zeros, $NMIXED mixed"
done
pass "unmount under I/O: after remount all $after writes completed with fsync ($before before the unmount) read back, the rest is data or zeros"
stop_daemon
