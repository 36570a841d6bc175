#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-no-bounce.sh - O_DIRECT data reaches the backing file without
# a copy.
#
# Proves: O_DIRECT reads and writes of whole sectors, 512 B (512n, 512e)
# and 4 KiB to 1 MiB, synchronous (dd) and asynchronous (fio, libaio,
# QD 8, when fio is there), reach the backing file without a bounce buffer
# (the image's bounced_bytes stays 0 while bytes_written and bytes_read
# count every byte), and what was written reads back.  On the transport
# of the run (lib.sh's SECTORFS_IO_URING); transport-uring-serves.sh holds
# the same through the ring.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

: > "$T/daemon.log"
start_daemon
no_bounce k4 4096 8192 65536 131072 $M
no_bounce e512 512 4096 65536 $M
no_bounce n512 512 4096 $((512 * 1024)) $M
if command -v fio >/dev/null 2>&1; then
	for rw in randwrite randread; do
		fio --name=nb --filename="$MNT/k4" --direct=1 --size=8M --rw=$rw --bsrange=4k-1m --bs_unaligned=0 \
			--ioengine=libaio --iodepth=8 --numjobs=2 --io_size=16M --randrepeat=0 >"$T/fio.out" 2>&1 ||
			fail "fio $rw: $(tail -n5 "$T/fio.out")"
	done
	[ "$(jkey k4 bounced_bytes)" = 0 ] || fail "k4: $(jkey k4 bounced_bytes) bytes bounced under fio libaio QD8"
	pass "k4: fio libaio QD8 x 2 jobs, 4 KiB to 1 MiB: bounced_bytes 0"
else
	echo "# no fio: the asynchronous part is not run"
fi
stop_daemon
