#!/bin/bash
# SPDX-License-Identifier: MIT
# odirect-buffer.sh - where the buffer of an O_DIRECT transfer may be.
#
# Proves what sectorfs(1) says under I/O RULES: the daemon never sees the
# buffer's address, but the kernel's FUSE cuts a transfer after 256 pages
# of the caller's memory, so a buffer that starts o bytes into a 4 KiB
# page gives a first request of 1 MiB - o bytes whenever o + length >
# 1 MiB.  On 512n and 4kn disks, reads and writes (pread/pwrite with
# O_DIRECT, buffers in an mmap at a chosen offset):
#   - o a multiple of the logical sector: any length works, 8 MiB too,
#     and the data lands where it was written;
#   - o not such a multiple: lengths with o + length <= 1 MiB work (a
#     block device would refuse them), longer ones fail with EINVAL,
#     each counted once in misaligned_rejected;
#   - on 4kn, o = 512 (what a block device with 4096-byte sectors takes
#     at any length) fails from 1 MiB on.
# (The behaviour is the kernel's; this pins it so that the man page and
# README stay true.)

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3

sidecar n512 32M 512n thin 1M
sidecar k4 32M 4kn thin 1M
start_daemon

cat > "$T/dio.py" <<'EOF'
import errno, mmap, os, sys

path, lss = sys.argv[1], int(sys.argv[2])
M = 1 << 20
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
mem = memoryview(mmap.mmap(-1, 20 * M))
ref = memoryview(mmap.mmap(-1, 20 * M))
bad = []

def run(op, o, n, want):
    """op of n bytes at disk offset 0 from a buffer o bytes into a page: want 'ok' or 'EINVAL'."""
    try:
        if op == "read":
            r = os.preadv(fd, [mem[o:o + n]], 0)
        else:
            mem[o:o + n] = os.urandom(n)
            r = os.pwritev(fd, [mem[o:o + n]], 0)
            if r == n:   # the data must land where it was written
                os.preadv(fd, [ref[0:n]], 0)
                if ref[0:n] != mem[o:o + n]:
                    bad.append("%s o=%d n=%d: data read back differs" % (op, o, n))
        got = "ok" if r == n else "short %d" % r
    except OSError as e:
        got = errno.errorcode.get(e.errno, str(e.errno))
    if got != want:
        bad.append("%s o=%d n=%d: %s, expected %s" % (op, o, n, got, want))
    return got == "EINVAL"

refused = 0
for op in ("read", "write"):
    for o in (0, lss, 4096 - lss if lss < 4096 else 0):
        for n in (4096, M - 4096, M, M + 4096, 8 * M):
            refused += run(op, o, n, "ok")
    for o in (48, 520) if lss == 512 else (48, 512, 3584):
        for n in (4096, 64 * 1024, M - 4096):
            refused += run(op, o, n, "ok" if o + n <= M else "EINVAL")
        for n in (M, M + 4096, 2 * M):
            refused += run(op, o, n, "EINVAL")
    if lss == 512:   # the exact edge: 1 MiB - 512 from 520 bytes in spans 257 pages
        refused += run(op, 520, M - 512, "EINVAL")
        refused += run(op, 512, M - 512, "ok")
print(refused)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

for img in n512:512 k4:4096; do
	name=${img%%:*} lss=${img#*:}
	before=$(stats_key "$name" misaligned_rejected)
	refused=$(python3 "$T/dio.py" "$MNT/$name" "$lss" 2>"$T/err") || fail "$name: $(cat "$T/err")"
	after=$(stats_key "$name" misaligned_rejected)
	[ $((after - before)) -eq "$refused" ] ||
		fail "$name: $refused transfers refused, misaligned_rejected went up by $((after - before))"
	pass "$name: sector-aligned buffers work at every length; others up to 1 MiB - o, then EINVAL ($refused refused, each counted)"
done
stop_daemon
