#!/bin/bash
# SPDX-License-Identifier: MIT
# serve.sh - how the daemon serves requests: -o serve=loop|threads.
#
# Proves:
#  - -o serve=bogus is refused: exit 1, the message names the option;
#  - the default is the event loop: the start-up line names it and the
#    stats JSON says "serve":"loop"; -o serve=threads says "threads";
#  - the loop takes no thread per request: under a deep queue of 4 KiB
#    O_DIRECT reads, then overwrites, of a written disk (fio, 4 jobs x
#    QD8, libaio) the daemon never has more than 16 threads (the loops,
#    the main and idle threads, the helpers that served the opens, io_uring's
#    own workers), where a thread per request starts one per request in
#    flight, up to 64;
#  - the stats count each of fio's 8192 reads and 8192 writes exactly,
#    bytes included, as the blocking path counts them, and what was written
#    reads back (fio's crc32c).
# Runs over the transport of the pass (SECTORFS_IO_URING), in about 10 s.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd fio

sidecar d 64M 4kn thin 1M

rc=0
"$SECTORFS" -f -o serve=bogus "$STORE" "$MNT" >"$T/bogus.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q -- "-o serve=bogus: expected loop or threads" "$T/bogus.out" ||
	fail "-o serve=bogus: exit $rc, $(cat "$T/bogus.out")"
mountpoint -q "$MNT" && fail "-o serve=bogus left a mount"
pass "-o serve=bogus: exit 1, '$(head -n1 "$T/bogus.out")'"

# serve_of NAME: what the stats JSON of an image says serves it.
serve_of() { grep -o '"serve":"[^"]*"' "$MNT/.stats/$1.json" | cut -d'"' -f4; }
# jkey NAME KEY: a number from the image's JSON stats.
jkey() { grep -o "\"$2\":[0-9]*" "$MNT/.stats/$1.json" | head -n1 | cut -d: -f2; }

start_daemon -o serve=threads
[ "$(serve_of d)" = threads ] || fail "-o serve=threads: the stats say '$(serve_of d)'"
stop_daemon
pass "-o serve=threads: the stats say threads"

: > "$T/daemon.log"
start_daemon
[ "$(serve_of d)" = loop ] || fail "the default: the stats say '$(serve_of d)'"
grep -q "event loop" "$T/daemon.log" || fail "the default: no start-up line naming the event loop: $(cat "$T/daemon.log")"
pass "the default: the stats say loop; $(sed -n 's/^sectorfs: info: //p' "$T/daemon.log" | head -n1)"

head -c $((64 << 20)) /dev/urandom > "$T/src"
dd if="$T/src" of="$MNT/d" bs=1M oflag=direct conv=notrunc status=none || fail "writing the disk failed"

# Each of 4 jobs owns 16 MiB of the disk and makes 2048 I/Os of 4 KiB there, QD8; writes carry
# crc32c headers (checked by the last run, not counted).
JOB=(--name=l --filename="$MNT/d" --direct=1 --bs=4k --ioengine=libaio --iodepth=8 --numjobs=4
	--size=16M --offset_increment=16M --io_size=8M --randseed=11)
VERIFY=(--verify=crc32c --verify_state_save=0)

# load RW [FIO OPTIONS]: fio's RW while the daemon's threads are counted every 50 ms; the most seen in $T/threads.
load() {
	local most=0 n
	fio "${JOB[@]}" --rw="$1" "${@:2}" >"$T/fio.out" 2>&1 &
	local f=$!
	while kill -0 "$f" 2>/dev/null; do
		n=$(ls "/proc/$DPID/task" 2>/dev/null | wc -l)
		[ "$n" -gt "$most" ] && most=$n
		sleep 0.05
	done
	wait "$f" || fail "fio $1: $(tail -n5 "$T/fio.out")"
	echo "$most" > "$T/threads"
}

for rw in randread randwrite; do
	key=reads bkey=bytes_read
	[ $rw = randwrite ] && key=writes bkey=bytes_written
	n0=$(jkey d $key) b0=$(jkey d $bkey)
	if [ $rw = randwrite ]; then load $rw "${VERIFY[@]}" --do_verify=0; else load $rw; fi
	most=$(cat "$T/threads")
	[ "$most" -le 16 ] || fail "$rw, 4 jobs x QD8: the daemon had $most threads (a thread per request?)"
	n1=$(jkey d $key) b1=$(jkey d $bkey)
	[ $((n1 - n0)) -eq 8192 ] && [ $((b1 - b0)) -eq $((8192 * 4096)) ] ||
		fail "$rw: the stats counted $((n1 - n0)) $key and $((b1 - b0)) bytes for fio's 8192 of 4 KiB"
	pass "$rw, 4 jobs x QD8: at most $most threads in the daemon; $key +8192, $bkey +$((b1 - b0))"
done
fio "${JOB[@]}" "${VERIFY[@]}" --rw=randwrite --verify_only >"$T/verify.out" 2>&1 ||
	fail "fio's writes read back wrong: $(grep -i -m5 'err\|verify' "$T/verify.out")"
pass "fio's 8192 writes read back, crc32c verified"
stop_daemon
pass "the daemon exited 0"
