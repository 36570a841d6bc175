#!/bin/bash
# SPDX-License-Identifier: MIT
# growing-unaligned-buffer.sh - a new image written through the mount
# without O_DIRECT from a buffer that is not page-aligned (a Python bytes
# object, malloc's 16 bytes): the kernel cuts a write of more than 1 MiB
# at a page boundary of the caller's memory, so its first piece ends off a
# sector (1 MiB - 48 bytes...).  Growing by whole sectors, the image takes
# the whole sectors of that piece (a short write, which write(2) allows
# and every writer loops on), and the copy of a source whose size is whole
# sectors ends with the source's size and bytes, as it does into a
# declared image; a source that ends off a sector is still refused at its
# last piece (EINVAL), the image keeping the whole sectors before it.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 cmp

head -c $((5 * 1024 * 1024)) /dev/urandom > "$T/src"
start_daemon

# one write(2) of 2 MiB, then one of 3 MiB, from bytes objects, through
# Python's buffered file (which writes again after a short write)
python3 - "$T/src" "$MNT/new" <<'PY' || fail "writing 5 MiB into a new image from unaligned buffers failed"
import sys
data = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'wb') as f:
    f.write(data[:2 << 20])
    f.write(data[2 << 20:])
PY
[ "$(stat_val %s "$MNT/new")" -eq $((5 * 1024 * 1024)) ] || fail "new: size $(stat_val %s "$MNT/new"), want 5 MiB"
cmp -s "$T/src" "$MNT/new" || fail "new does not hold the bytes written: $(cmp "$T/src" "$MNT/new" 2>&1)"
pass "5 MiB written into a new image from unaligned buffers: its size and bytes"

# a source that does not end on a sector is refused at its end, as before
head -c 3000000 "$T/src" > "$T/odd"
python3 - "$T/odd" "$MNT/odd" <<'PY' && fail "a write ending off a sector at the end of a growing image succeeded"
import sys
data = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'wb') as f:
    f.write(data)
PY
size=$(stat_val %s "$MNT/odd")
[ "$size" -eq $((3000000 / 512 * 512)) ] || fail "odd: size $size, want the whole sectors written ($((3000000 / 512 * 512)))"
cmp -s -n "$size" "$T/odd" "$MNT/odd" || fail "odd does not hold the whole sectors written"
pass "a source ending off a sector: EINVAL at its end, the whole sectors before it kept"
stop_daemon
