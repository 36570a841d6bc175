#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-seek-hole.sh - a stats file's bytes are rendered at open (st_size
# is 0, as in /proc); SEEK_HOLE reports the end of what the open file holds
# (cp copies only up to the first hole it is told of), SEEK_DATA at an
# offset inside it returns that offset and at the end gives ENXIO; on an
# image SEEK_HOLE is its size.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-stats.sh"
requires_cmd python3

sidecar mis 8M 4kn thin 64K
start_daemon
io_mis

python3 - "$MNT/.stats/mis.json" "$MNT/.stats/mis" "$MNT/mis" <<'PY' || fail "SEEK_DATA/SEEK_HOLE: see above"
import os, sys
for i, path in enumerate(sys.argv[1:]):
    fd = os.open(path, os.O_RDONLY)
    n = os.lseek(fd, 0, os.SEEK_END) if i == 2 else len(os.pread(fd, 1 << 20, 0))
    hole, data = os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 7, os.SEEK_DATA)
    try:
        os.lseek(fd, n, os.SEEK_DATA)
        past = "no error"
    except OSError as e:
        past = e.errno
    os.close(fd)
    if (hole, data, past) != (n, 7, 6):
        sys.exit("%s: SEEK_HOLE %d (want %d), SEEK_DATA 7 -> %d, SEEK_DATA at the end -> %s (want ENXIO)"
                 % (path, hole, n, data, past))
PY
pass "SEEK_HOLE is the end of what an open stats file holds, and an image's size"
stop_daemon
