#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-views.sh - the text stats file shows the newest 5 of each list as
# a table; sectorfs-stat --refused prints every entry (and --json the same
# lists as the daemon's NAME.json); --refused with -i is a usage error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"
requires_built "$SECTORFS_STAT"

recent_serve

refuse_70
p6=$P6
probe "$T/p4" if=/dev/zero of="$MNT/d512e" bs=512 seek=9 count=2 oflag=direct conv=notrunc ||
	fail "512-byte writes to a 512e disk failed"
head -c $((3 << 20)) /dev/urandom > "$T/src"
cp "$T/src" "$MNT/copied" || fail "cp into the mount failed"

txt=$(cat "$MNT/.stats/d4k")
grep -q '^refused I/Os (newest 5 of the 64 kept; all: NAME.json, sectorfs-stat --refused)$' <<< "$txt" ||
	fail "text: no header of the refused table: $txt"
rows=$(grep -c ' write  *[0-9]*  *512 EINVAL  *'"$p6"'  python3$' <<< "$txt")
[ "$rows" = 5 ] || fail "text: expected 5 rows of python3's refusals, got $rows: $txt"
first=$(grep -m1 " EINVAL  *$p6 " <<< "$txt" | awk '{print $3}')
[ "$first" = $((512 * 139)) ] || fail "text: the first row is not the newest refusal (offset $first)"
grep -q '^read-modify-write writes: none$' <<< "$txt" || fail "text: d4k should say no rmw writes"
grep -q "^read-modify-write writes (2, newest first)$" "$MNT/.stats/d512e" ||
	fail "text: d512e rmw table header: $(cat "$MNT/.stats/d512e")"
pass "the text file shows the newest 5 of each list"

"$SECTORFS_STAT" --refused "$MNT" d4k > "$T/r.txt" || fail "sectorfs-stat --refused failed"
[ "$(grep -c " EINVAL  *$p6  python3$" "$T/r.txt")" = 64 ] || fail "sectorfs-stat --refused: not 64 rows: $(cat "$T/r.txt")"
head -n1 "$T/r.txt" | grep -qx d4k || fail "sectorfs-stat --refused: no image name line"
grep -q "^  refused I/Os (64, newest first)$" "$T/r.txt" || fail "sectorfs-stat --refused: no count line"
"$SECTORFS_STAT" --refused --json "$MNT" > "$T/r.json" || fail "sectorfs-stat --refused --json failed"
python3 - "$T/r.json" "$MNT" <<'EOF' || fail "sectorfs-stat --refused --json is not the daemon's lists"
import json, sys
r = json.load(open(sys.argv[1]))
names = [i["image"] for i in r["images"]]
assert names == ["copied", "d4k", "d512e"], names
for i in r["images"]:
    d = json.load(open("%s/.stats/%s.json" % (sys.argv[2], i["image"])))
    assert i["refused_recent"] == d["refused_recent"] and i["rmw_recent"] == d["rmw_recent"], i["image"]
EOF
rc=0
"$SECTORFS_STAT" --refused -i 1 "$MNT" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "sectorfs-stat --refused -i 1: exit $rc, expected 2"
pass "sectorfs-stat --refused lists all 64, --json the daemon's lists"

stop_daemon
