# SPDX-License-Identifier: MIT
# fsync_check.py DIR LOG - how many of the files LOG names (fsync_writer.py's)
# are missing from DIR or hold other data: prints "FSYNCED LOST".
import hashlib
import os
import sys

d, log = sys.argv[1], sys.argv[2]
fsynced = lost = 0
for line in open(log):
    name, size, sha = line.split()
    fsynced += 1
    try:
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
    except OSError:
        data = None
    if data is None or len(data) != int(size) or hashlib.sha1(data).hexdigest() != sha:
        lost += 1
print(fsynced, lost)
