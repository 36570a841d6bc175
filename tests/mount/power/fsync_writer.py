# SPDX-License-Identifier: MIT
# fsync_writer.py DIR LOG SEED [COUNT] - write files into DIR until a write
# fails (the disk under DIR lost its power), or COUNT files are written
# (then exit 0), as an application that needs its
# files durable does: each file written, fsync'd, its directory fsync'd,
# and only then named in LOG (a file outside the disk) with its size and
# SHA-1.  Between files it writes 1 to 4 blocks of 64 KiB into
# DIR/scratch with O_DIRECT and no fsync (they reach the disk at once and
# sit in its cache), so a cut always finds writes nobody asked to keep.
# Sizes come from SEED: the same seed writes the same files.
import hashlib
import mmap
import os
import random
import sys

d, log, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else None
rnd = random.Random(seed)
lf = open(log, "a")
scratch = os.open(os.path.join(d, "scratch"), os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
block = mmap.mmap(-1, 65536)           # page-aligned, as O_DIRECT wants
i = spos = 0
try:
    dfd = os.open(d, os.O_RDONLY)
    while count is None or i < count:
        name = "f%05d" % i
        size = rnd.choice([4096, 12288, 65536, 200000])
        data = (("%s:%d:" % (name, seed)).encode() * (size // 8 + 1))[:size]
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        os.fsync(dfd)
        lf.write("%s %d %s\n" % (name, size, hashlib.sha1(data).hexdigest()))
        lf.flush()
        for _ in range(rnd.randint(1, 4)):
            block[:] = os.urandom(65536)
            os.pwrite(scratch, block, spos)
            spos = (spos + 65536) % (16 << 20)
        i += 1
except OSError:
    pass
