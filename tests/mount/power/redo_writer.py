# SPDX-License-Identifier: MIT
# redo_writer.py IMG OFF BS COUNT LOG - what a database's redo log does on
# a disk: write block k (BS bytes, O_DIRECT) at OFF + k*BS, fdatasync, and
# only then append k to LOG (a file outside the disk), for k from 0 until
# COUNT blocks or a failure (the disk lost its power).  Block k holds
# "k:" repeated, so its data says which write put it there.
import mmap
import os
import sys

img, off, bs, count, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
buf = mmap.mmap(-1, max(bs, 4096))            # page-aligned, as O_DIRECT wants
lf = open(log, "a")
fd = os.open(img, os.O_RDWR | os.O_DIRECT)
try:
    for k in range(count):
        buf[:bs] = (b"%d:" % k * bs)[:bs]
        os.pwrite(fd, memoryview(buf)[:bs], off + k * bs)
        os.fdatasync(fd)
        lf.write("%d\n" % k)
        lf.flush()
except OSError:
    pass
