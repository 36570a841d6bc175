#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-uring-serves.sh - -o io_uring=on serves over io_uring, without
# copies, and keeps the data.
#
# Proves: with fuse.enable_uring Y, -o io_uring=on serves over io_uring
# (the start-up line and the stats JSON say so, I/O works); through the
# ring O_DIRECT I/O of 512 B to 1 MiB is not bounced (bounced_bytes 0,
# data read back), 1 MiB reads take no memory per read, and fio (when it
# is there) verifies 4 jobs x QD 16 of mixed sizes.  Skipped unless the
# parameter is Y (.ci/run's io_uring pass sets it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

requires_uring_param Y

expect_transport io_uring -o io_uring=on
grep -q "^sectorfs: info: FUSE over io_uring, [0-9]* queues\? x [0-9]* \(worker threads\?\|entr\(y\|ies\), [0-9]* event loops\?\), .*max_background" \
	"$T/daemon.log" || fail "-o io_uring=on: no start-up line saying io_uring: $(cat "$T/daemon.log")"
no_bounce k4 4096 65536 $M
no_bounce e512 512 4096 $M
reads_in_place k4
if command -v fio >/dev/null 2>&1; then
	fio --name=rv --filename="$MNT/n512" --direct=1 --size=16M --rw=randwrite --bsrange=512-1m \
		--bs_unaligned=0 --ioengine=libaio --iodepth=16 --numjobs=4 --offset_increment=4M --size=4M \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 --randrepeat=0 >"$T/fio.out" 2>&1 ||
		fail "fio verify through io_uring: $(grep -i -m5 'err\|verify' "$T/fio.out")"
	[ "$(jkey n512 bounced_bytes)" = 0 ] || fail "n512: $(jkey n512 bounced_bytes) bytes bounced through io_uring"
	pass "io_uring: fio 4 jobs x QD16, 512 B to 1 MiB, crc32c verified, bounced_bytes 0"
else
	echo "# no fio: the verified mixed load is not run"
fi
stop_daemon
pass "-o io_uring=on: $(sed -n 's/^sectorfs: info: //p' "$T/daemon.log" | head -n1)"
