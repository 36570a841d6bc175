#!/bin/bash
# SPDX-License-Identifier: MIT
# failures.sh - sectorfs-img info lists an image's failures, check accepts
# them and says what the next start does, and reports a damaged NAME.disk.
#
# Proves, on a 512e image with a volatile write cache left by a daemon
# with two bad-sector ranges, the power off, and killed (-9) with 4 writes
# in its cache:
#  - info prints the power, the bad sectors one range a line and the 4
#    unflushed writes; info --json has power, power_cut_pending,
#    bad_sectors and unflushed_writes;
#  - check is clean (exit 0) and notes the power, the bad sectors and the
#    writes the next start keeps;
#  - a NAME.disk that does not parse is a problem (exit 4) naming the file
#    and the line, which --repair leaves alone.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3 setfattr

printf '{ "size": "8M", "sector": "512e", "write_cache": "volatile" }\n' > "$STORE/d.json"
start_daemon
setfattr -n user.sectorfs.bad_sectors -v "+100-103,+200:sticky" "$MNT/d" || fail "bad_sectors refused"
setfattr -n user.sectorfs.power -v off "$MNT/d" || fail "power off refused"
setfattr -n user.sectorfs.power -v on "$MNT/d" || fail "power on refused"
dd if=/dev/zero of="$MNT/d" bs=4K count=4 oflag=direct conv=notrunc status=none || fail "writes"
setfattr -n user.sectorfs.power -v cut-after-flushes:1 "$MNT/d" || fail "trigger refused"
kill9_daemon

img 0 info "$STORE/d"
out_is "power:          on"
out_is "bad sectors:    5 (0 damaged by power cuts):"
out_is "                100-103"
out_is "                200-200:sticky"
out_is "write cache:    4 unflushed writes a daemon crash left in .sectorfs/d.undo; the next start keeps them"
img 0 info --json "$STORE/d"
python3 - "$T/out" <<'PY' || fail "info --json: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["power"] == "on" and d["power_cut_pending"] is False, d
assert d["bad_sectors"] == ["100-103", "200-200:sticky"], d["bad_sectors"]
assert d["unflushed_writes"] == 4, d["unflushed_writes"]
PY
pass "info lists the power, the bad sectors and a crash's unflushed writes"

img 0 check "$STORE/d"
out_has "note: 5 bad sectors listed (user.sectorfs.bad_sectors); 4 unflushed writes a daemon crash left: the next start keeps them"
out_has "$STORE/d: clean"
pass "check accepts them, noting what the next start does"

start_daemon
setfattr -n user.sectorfs.power -v off "$MNT/d" || fail "power off refused"
stop_daemon
img 0 check "$STORE/d"
out_has "note: the power is off; 5 bad sectors listed"
printf 'sectorfs-disk 1\npower sideways\n' > "$STORE/.sectorfs/d.disk"
img 4 check "$STORE/d"
out_has ".sectorfs/d.disk: line 3: no crc32c line"
out_has "not repairable: it holds no data"
img 4 check --repair "$STORE/d"
pass "a damaged d.disk is a problem check names and --repair leaves alone"
