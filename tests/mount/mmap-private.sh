#!/bin/bash
# SPDX-License-Identifier: MIT
# mmap-private.sh - what mmap(2) of a disk in the mount does.
#
# Proves what sectorfs(1) says under I/O RULES: MAP_PRIVATE works, read
# and read-write, on a read-only or read-write descriptor, and on disks
# of 512-byte, 4 KiB and 8 KiB logical sectors (and one whose size is not
# a whole number of pages): the mapping reads the disk's bytes, and what
# the process writes into its mapping never reaches the disk.  MAP_SHARED
# fails with ENODEV (EACCES when PROT_WRITE is asked on a read-only
# descriptor, as for any file).

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3

sidecar n512 1049088 512n thin 64K       # 1 MiB + 512: the last page is partial
sidecar k4 1M 4kn thin 64K
printf '{ "size": "1M", "logical_sector_size": 8192, "physical_sector_size": 8192, "block_size": "64K" }\n' \
	> "$STORE/k8.json"
start_daemon

cat > "$T/mm.py" <<'EOF'
import errno, mmap, os, sys

path = sys.argv[1]
size = os.stat(path).st_size
pat = os.urandom(size)
with open(path, "r+b") as f:
    f.write(pat)
bad = []

def expect(what, got, want):
    if got != want:
        bad.append("%s: %r, expected %r" % (what, got, want))

for oflags, oname in ((os.O_RDONLY, "rdonly"), (os.O_RDWR, "rdwr")):
    for prot, pname in ((mmap.PROT_READ, "r"), (mmap.PROT_READ | mmap.PROT_WRITE, "rw")):
        fd = os.open(path, oflags)
        m = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=prot)
        what = "MAP_PRIVATE %s %s" % (oname, pname)
        expect(what + ": the disk's bytes", m[:] == pat, True)
        if prot & mmap.PROT_WRITE:
            m[0:8] = b"PRIVATE!"
            with open(path, "rb") as f:
                expect(what + ": a private write reaches the disk", f.read(8), pat[0:8])
        m.close()
        for sprot, sname in ((mmap.PROT_READ, "r"), (mmap.PROT_READ | mmap.PROT_WRITE, "rw")):
            try:
                mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=sprot).close()
                got = "ok"
            except OSError as e:
                got = errno.errorcode[e.errno]
            want = "EACCES" if oflags == os.O_RDONLY and sprot & mmap.PROT_WRITE else "ENODEV"
            expect("MAP_SHARED %s %s" % (oname, sname), got, want)
        os.close(fd)

for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

for name in n512 k4 k8; do
	python3 "$T/mm.py" "$MNT/$name" 2>"$T/err" || fail "$name: $(cat "$T/err")"
	pass "$name ($(stat -c %s "$MNT/$name") bytes): MAP_PRIVATE reads the disk, keeps its own writes; MAP_SHARED ENODEV"
done
stop_daemon
