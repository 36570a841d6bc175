#!/bin/bash
# SPDX-License-Identifier: MIT
# failures-absent.sh - an image whose sidecar has no failure key behaves
# as before the failure model: it gets no failure state from reads,
# writes, flushes, O_DSYNC writes, discards or a look at its attributes.
#
# Proves, on a 512e image driven by dd (O_DIRECT, fsync, O_DSYNC),
# fallocate (discard) and getfattr of every failure attribute:
#  - STORE/.sectorfs holds no NAME.disk or NAME.undo, during the mount
#    and after a restart;
#  - NAME.json has no "failures" key, the text file no failure lines, the
#    metrics no failure family; an O_DSYNC write still counts one flush
#    (3 in all, as before the model);
#  - the attributes read the defaults (power on, seed 0, lose-all, no bad
#    sector, the physical sector as the atomic write unit), and writing
#    "on" to power or "clear" to bad_sectors makes no state either.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3 fallocate getfattr setfattr

sidecar d 8M 512e thin 64K
start_daemon
IMG="$MNT/d"
attr() { getfattr --absolute-names --only-values -n "user.sectorfs.$1" "$IMG"; }

no_state() {
	[ -e "$STORE/.sectorfs/d.disk" ] && fail "$1: d.disk made"
	[ -e "$STORE/.sectorfs/d.undo" ] && fail "$1: d.undo made"
	return 0
}

dd if=/dev/urandom of="$IMG" bs=64K count=16 oflag=direct conv=notrunc,fsync status=none || fail "dd"
dd if=/dev/urandom of="$IMG" bs=4K count=1 seek=300 oflag=direct,dsync conv=notrunc status=none || fail "dd dsync"
fallocate -p -o 1M -l 64K "$IMG" || fail "discard"
dd if="$IMG" of=/dev/null bs=1M iflag=direct status=none || fail "read"
[ "$(attr power)" = on ] || fail "power reads '$(attr power)'"
[ "$(attr power_seed)" = 0 ] || fail "power_seed reads '$(attr power_seed)'"
[ "$(attr power_cut_policy)" = lose-all ] || fail "power_cut_policy reads '$(attr power_cut_policy)'"
[ -z "$(attr bad_sectors)" ] || fail "bad_sectors reads '$(attr bad_sectors)'"
[ "$(attr atomic_write_unit)" = 4096 ] || fail "atomic_write_unit reads '$(attr atomic_write_unit)'"
setfattr -n user.sectorfs.power -v on "$IMG" || fail "power=on refused"
setfattr -n user.sectorfs.bad_sectors -v clear "$IMG" || fail "bad_sectors=clear refused"
no_state "after I/O and the attributes"
pass "no failure state from I/O or the attributes' defaults"

python3 - "$MNT/.stats/d.json" <<'PY' || fail "the JSON stats changed"
import json, sys
d = json.load(open(sys.argv[1]))
assert "failures" not in d, "a failures key"
# as before the failure model: dd's fsync, the O_DSYNC write, and one that comes with the discard
assert d["flushes"] == 3, "flushes %d, want 3" % d["flushes"]
assert all(e["error"] != "EIO" for e in d["refused_recent"]), d["refused_recent"]
PY
grep -qE "^(power|write cache|failures|last cut) " "$MNT/.stats/d" && fail "failure lines in the text stats"
grep -qE "power_cuts|media_errors|power_on|cached_bytes" "$MNT/.stats/metrics" && fail "failure families in the metrics"
pass "the stats files are as they were: no failure key, line or family; the O_DSYNC write one flush"

restart_daemon
dd if="$IMG" of=/dev/null bs=1M iflag=direct status=none || fail "read after restart"
no_state "after a restart"
grep -q '"failures"' "$MNT/.stats/d.json" && fail "a failures key after a restart"
pass "and after a restart"
stop_daemon
