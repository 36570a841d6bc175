#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-kill9.sh - a crash of the daemon is not a power cut: after
# kill -9 with writes in a volatile write cache, every completed write is
# kept, and the next start says how many unflushed writes it kept.
#
# Proves, on a 4kn image with write_cache volatile:
#  - 8 O_DIRECT writes after the last flush are counted as cached
#    (failures.cached_bytes 32768) and logged in STORE/.sectorfs/d.undo;
#  - after kill -9 and a new start the daemon logs "the daemon stopped
#    with 8 unflushed writes (32768 bytes) in the volatile write cache:
#    all are kept", failures.kept_at_start says 8, the cache is empty and
#    every block reads what was written, the flushed ones and the others;
#  - a power cut after that loses nothing (the kept writes are durable).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3 setfattr getfattr

fail_sidecar d 8M 4kn '"write_cache": "volatile"'
start_daemon
IMG="$MNT/d"
dd if=/dev/urandom of="$T/data" bs=4K count=16 status=none
dd if="$T/data" of="$IMG" bs=4K count=8 oflag=direct conv=notrunc,fsync status=none || fail "flushed writes"
for ((k = 8; k < 16; k++)); do
	dd if="$T/data" of="$IMG" bs=4K skip=$k seek=$k count=1 oflag=direct conv=notrunc status=none ||
		fail "write $k"
done
failures_key() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failures"][sys.argv[2]])' \
		"$MNT/.stats/d.json" "$1"
}
[ "$(failures_key cached_bytes)" = 32768 ] || fail "cached_bytes $(failures_key cached_bytes), want 32768"
[ -s "$STORE/.sectorfs/d.undo" ] || fail "no undo log with writes in the cache"
pass "8 unflushed writes in the cache"

kill9_daemon
start_daemon
grep -q "d: the daemon stopped with 8 unflushed writes (32768 bytes) in the volatile write cache: all are kept" \
	"$T/daemon.log" || fail "the start does not say what it kept: $(cat "$T/daemon.log")"
[ "$(failures_key kept_at_start)" = 8 ] || fail "kept_at_start $(failures_key kept_at_start), want 8"
[ "$(failures_key cached_bytes)" = 0 ] || fail "the cache holds $(failures_key cached_bytes) bytes after the start"
dd if="$IMG" of="$T/back" bs=4K count=16 iflag=direct status=none || fail "read back"
cmp -s "$T/back" "$T/data" || fail "the data after kill -9 is not what was written"
pass "after kill -9 every completed write is kept, and the start says so"

set_attr "$IMG" power off
set_attr "$IMG" power on
dd if="$IMG" of="$T/back" bs=4K count=16 iflag=direct status=none || fail "read after the cut"
cmp -s "$T/back" "$T/data" || fail "a cut after the start lost writes the crash had kept"
pass "a cut after that loses none of them"
stop_daemon
