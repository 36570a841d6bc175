# SPDX-License-Identifier: MIT
# record_check.py - the check of record_writer.py: every record its log
# names must be on $SECTORFS_CRASH_DISK.  Exit 1 naming the ones lost.
import mmap
import os
import sys

buf = mmap.mmap(-1, 4096)
fd = os.open(os.environ["SECTORFS_CRASH_DISK"], os.O_RDONLY | os.O_DIRECT)
path = os.path.join(os.environ["SECTORFS_CRASH_DIR"], "log")
logged = [int(x) for x in open(path)] if os.path.exists(path) else []
lost = []
for k in logged:
    os.preadv(fd, [buf], k * 4096)
    if buf[:] != (b"record %d;" % k * 512)[:4096]:
        lost.append(k)
if lost:
    print("%d of %d logged records lost: %s" % (len(lost), len(logged), lost))
    sys.exit(1)
print("%d logged records intact" % len(logged))
