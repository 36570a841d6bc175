# SPDX-License-Identifier: MIT
# det_writer.py IMG SEED - a deterministic single-threaded writer: from
# SEED, writes of 512 B to 64 KiB at 512-byte aligned offsets of the first
# 2 MiB of IMG (O_DIRECT, each its own pattern), an fdatasync after some,
# until a write fails (the power went) or 2000 writes are made.
import mmap
import os
import random
import sys

img, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
buf = mmap.mmap(-1, 65536)
fd = os.open(img, os.O_RDWR | os.O_DIRECT)
try:
    for i in range(2000):
        size = 512 * rnd.choice([1, 1, 2, 3, 8, 8, 16, 64, 128])
        off = 512 * rnd.randrange(0, (2 << 20) // 512 - size // 512)
        buf[:size] = (b"%d:%d;" % (seed, i) * size)[:size]
        os.pwrite(fd, memoryview(buf)[:size], off)
        if rnd.random() < 0.1:
            os.fdatasync(fd)
except OSError:
    pass
