#!/bin/bash
# SPDX-License-Identifier: MIT
# bad-sector-dd.sh - a bad sector planted with user.sectorfs.bad_sectors
# fails dd iflag=direct with EIO, and the stats say who read it.
#
# Proves:
#  - setfattr +START-END adds a range, getfattr lists it;
#  - an O_DIRECT read (GNU dd) touching it fails with "Input/output
#    error"; reads beside it work;
#  - NAME.json lists the refused read (op read, error EIO, reason
#    media_error, offset, length) with the pid and command name of the
#    dd that issued it, and counts it in failures.media_errors; the text
#    file and the metrics say it too;
#  - a write over the range heals it (the data written reads back); a
#    sticky range is not healed by a write;
#  - bad values are refused with EINVAL and the daemon logs why.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3 setfattr getfattr

sidecar d 8M 512e thin 64K
start_daemon
IMG="$MNT/d"

dd if=/dev/urandom of="$T/data" bs=1M count=8 status=none
dd if="$T/data" of="$IMG" bs=1M oflag=direct conv=notrunc status=none || fail "cannot fill the disk"

setfattr -n user.sectorfs.bad_sectors -v "+100-103" "$IMG" || fail "setfattr +100-103 refused"
v=$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$IMG")
[ "$v" = "100-103" ] || fail "bad_sectors lists '$v', want 100-103"
pass "a range is added and listed"

# A dd of its own name, so that the command name in the stats can only be this one.
cp "$(command -v dd)" "$T/sfsbad-dd" || fail "cannot copy dd"
bash -c 'echo $$ > "$0"; exec "$@"' "$T/pid.dd" "$T/sfsbad-dd" if="$IMG" of=/dev/null bs=4096 skip=12 count=1 \
	iflag=direct status=none 2>"$T/dd.err" && fail "dd over LBA 100 succeeded"
grep -q "Input/output error" "$T/dd.err" || fail "dd did not get EIO: $(cat "$T/dd.err")"
DDPID=$(cat "$T/pid.dd")
dd if="$IMG" of=/dev/null bs=4096 skip=11 count=1 iflag=direct status=none || fail "the block before it fails"
dd if="$IMG" of=/dev/null bs=512 skip=104 count=8 iflag=direct status=none || fail "the sectors after it fail"
pass "dd iflag=direct over the bad LBA gets EIO, beside it reads"

python3 - "$MNT/.stats/d.json" "$DDPID" <<'EOF' || fail "the stats do not say who read the bad sector"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["refused_recent"]
assert len(r) == 1, r
e = r[0]
want = {"op": "read", "error": "EIO", "reason": "media_error", "offset": 49152, "length": 4096,
        "pid": int(sys.argv[2]), "comm": "sfsbad-dd"}
for k, v in want.items():
    assert e[k] == v, (k, e[k], v)
f = d["failures"]
assert f["media_errors"] == 1 and f["bad_sectors"] == 4, f
EOF
grep -q "read .* EIO *$DDPID  sfsbad-dd" "$MNT/.stats/d" || fail "the text stats do not list the read: $(cat "$MNT/.stats/d")"
grep -q '^sectorfs_media_errors_total{image="d"} 1$' "$MNT/.stats/metrics" || fail "no media error in the metrics"
pass "the stats list the read with pid $DDPID and its command, and count it"

dd if="$T/data" of="$IMG" bs=512 skip=96 seek=96 count=8 oflag=direct conv=notrunc status=none ||
	fail "the write over the range failed"
dd if="$IMG" of="$T/back" bs=512 skip=96 count=8 iflag=direct status=none || fail "the healed range does not read"
cmp -s "$T/back" <(dd if="$T/data" bs=512 skip=96 count=8 status=none) || fail "the healed range reads other data"
v=$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$IMG")
[ -z "$v" ] || fail "the list after the write is '$v'"
pass "a write heals it"

setfattr -n user.sectorfs.bad_sectors -v "+200-201:sticky" "$IMG" || fail "a sticky range refused"
dd if="$T/data" of="$IMG" bs=512 skip=200 seek=200 count=2 oflag=direct conv=notrunc status=none ||
	fail "a write to a sticky range failed"
dd if="$IMG" of=/dev/null bs=512 skip=200 count=1 iflag=direct status=none 2>/dev/null &&
	fail "a sticky sector read after a write"
pass "a sticky range stays bad after a write"

setfattr -n user.sectorfs.bad_sectors -v "+9-5" "$IMG" 2>/dev/null && fail "+9-5 accepted"
setfattr -n user.sectorfs.bad_sectors -v "+99999999" "$IMG" 2>/dev/null && fail "a sector past the end accepted"
grep -q "user.sectorfs.bad_sectors refused: .*END 5 is before START 9" "$T/daemon.log" ||
	fail "the daemon does not say why +9-5 was refused: $(cat "$T/daemon.log")"
v=$(getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$IMG")
[ "$v" = "200-201:sticky" ] || fail "a refused command changed the list: '$v'"
pass "bad values are refused with the reason logged, the list unchanged"

fusermount3 -u "$MNT"
wait_daemon "unmount"
