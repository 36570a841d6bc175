# SPDX-License-Identifier: MIT
# record_writer.py sync|nosync COUNT - a crash explorer workload on a raw
# disk: write record k (4 KiB, O_DIRECT) at k * 4096 of
# $SECTORFS_CRASH_DISK, with sync an fdatasync after it, and only then
# append k to $SECTORFS_CRASH_DIR/log, for k from 0 to COUNT - 1.  Without
# sync it tells its log a record is written while the record still sits
# in the disk's volatile cache: the bug the explorer must catch.
import mmap
import os
import sys

sync, count = sys.argv[1] == "sync", int(sys.argv[2])
buf = mmap.mmap(-1, 4096)                     # page-aligned, as O_DIRECT wants
fd = os.open(os.environ["SECTORFS_CRASH_DISK"], os.O_RDWR | os.O_DIRECT)
log = open(os.path.join(os.environ["SECTORFS_CRASH_DIR"], "log"), "a")
for k in range(count):
    buf[:] = (b"record %d;" % k * 512)[:4096]
    os.pwrite(fd, buf, k * 4096)
    if sync:
        os.fdatasync(fd)
    log.write("%d\n" % k)
    log.flush()
