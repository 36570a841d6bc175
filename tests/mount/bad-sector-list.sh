#!/bin/bash
# SPDX-License-Identifier: MIT
# bad-sector-list.sh - the bad-sector list at its limits, through the
# mount: 65536 ranges, a listing longer than the kernel passes, a value
# longer than the format attributes' 64 bytes.
#
# Proves, on a 512n image of 128 MiB:
#  - a setxattr of one value holding 6000 commands (about 40 KiB) is
#    applied whole;
#  - ranges up to 65536 are taken, one more is refused (E2BIG) and
#    changes nothing; reading the list then gives E2BIG (it is longer than
#    64 KiB), not a truncated list; stats still count every sector;
#  - after a restart the list is all there, and clear empties it.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3

sidecar d 128M 512n thin
start_daemon

python3 - "$MNT/d" "$MNT/.stats/d.json" <<'PY' || fail "the list at its limits"
import errno, json, os, sys
img, stats = sys.argv[1], sys.argv[2]
K = "user.sectorfs.bad_sectors"
def add(first, n):
    os.setxattr(img, K, " ".join("+%d" % (2 * i) for i in range(first, first + n)).encode())
add(0, 6000)
assert len(os.getxattr(img, K).split(b"\n")) == 6000, "one value of 6000 commands not applied whole"
for first in range(6000, 65536, 6000):
    add(first, min(6000, 65536 - first))
try:
    add(65536, 1)
    sys.exit("range 65537 accepted")
except OSError as e:
    assert e.errno == errno.E2BIG, e
try:
    os.getxattr(img, K)
    sys.exit("a listing past 64 KiB was read")
except OSError as e:
    assert e.errno == errno.E2BIG, e
f = json.load(open(stats))["failures"]
assert f["bad_sectors"] == 65536, f["bad_sectors"]
PY
pass "65536 ranges taken, one more refused with E2BIG, the listing past 64 KiB E2BIG"

restart_daemon
python3 - "$MNT/.stats/d.json" <<'PY' || fail "the list after a restart"
import json, sys
assert json.load(open(sys.argv[1]))["failures"]["bad_sectors"] == 65536
PY
setfattr -n user.sectorfs.bad_sectors -v clear "$MNT/d" || fail "clear refused"
[ -z "$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$MNT/d")" ] || fail "clear left ranges"
pass "after a restart all 65536 are there; clear empties the list"
stop_daemon
