# SPDX-License-Identifier: MIT
# redo_check.py IMG OFF BS LOG - read back, with O_DIRECT, every block
# redo_writer.py flushed (LOG): prints "FLUSHED LOST UNREADABLE", the
# blocks it flushed, of them those holding other data, and those whose
# read fails (EIO: a sector a power cut damaged).
import errno
import mmap
import os
import sys

img, off, bs, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
buf = mmap.mmap(-1, max(bs, 4096))
fd = os.open(img, os.O_RDONLY | os.O_DIRECT)
flushed = lost = unreadable = 0
for line in open(log):
    k = int(line)
    flushed += 1
    try:
        n = os.preadv(fd, [memoryview(buf)[:bs]], off + k * bs)
    except OSError as e:
        if e.errno != errno.EIO:
            raise
        unreadable += 1
        continue
    if n != bs or buf[:bs] != (b"%d:" % k * bs)[:bs]:
        lost += 1
print(flushed, lost, unreadable)
