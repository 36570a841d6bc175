#!/bin/bash
# SPDX-License-Identifier: MIT
# powercut-determinism.sh - a power cut is a function of its seed and the
# writes: two mounts that run the same single-threaded writer with the same
# seed get the same report and the same disk.
#
# Proves, on a 512e image with a volatile write cache (rmw_power_safe
# false), the writer of tests/mount/power/det_writer.py (writes of 512 B
# to 64 KiB, an fdatasync after some) and cut-after-writes:300 with
# policy random:0.5:
#  - two runs, each from a new store and a new daemon, with seed 77: the
#    last cut in NAME.json (counts, lost, torn and damaged LBA ranges,
#    trigger, seed, policy; not its time), the bad-sector list and the
#    disk's data after power on are the same;
#  - a run with seed 78 gives another report (the seed decides).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_cmd python3 setfattr getfattr sha256sum

# run SEED OUT: a new store, the writer, the cut, power on; the report, list and data's hash into OUT.
run() {
	rm -rf "$STORE" && mkdir -p "$STORE"
	fail_sidecar d 4M 512e '"write_cache": "volatile", "rmw_power_safe": false'
	start_daemon
	arm_cut "$MNT/d" cut-after-writes:300 "$1" random:0.5
	python3 "$POWER_PY/det_writer.py" "$MNT/d" 123
	[ "$(power_of "$MNT/d")" = off ] || fail "seed $1: no cut after 300 writes"
	set_attr "$MNT/d" power on
	python3 - "$MNT/.stats/d.json" > "$2" <<'PY' || fail "seed $1: no report of the cut"
import json, sys
c = json.load(open(sys.argv[1]))["failures"]["last_cut"]
del c["time"], c["time_ns"]
print(json.dumps(c, sort_keys=True))
PY
	getfattr --absolute-names --only-values -n user.sectorfs.bad_sectors "$MNT/d" >> "$2"
	echo >> "$2"
	# the data, damaged sectors left out (they read EIO): the list above has them
	python3 - "$MNT/d" >> "$2" <<'PY'
import hashlib, mmap, os, sys
fd, buf, h = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT), mmap.mmap(-1, 512), hashlib.sha256()
for s in range((4 << 20) // 512):
    try:
        os.preadv(fd, [buf], s * 512)
        h.update(buf)
    except OSError:
        h.update(b"EIO %d" % s)
print(h.hexdigest())
PY
	stop_daemon
}

run 77 "$T/a"
run 77 "$T/b"
grep -q '"lost_writes": [1-9]' "$T/a" || fail "the cut lost nothing: $(cat "$T/a")"
cmp -s "$T/a" "$T/b" || fail "the same seed gave two outcomes: $(diff "$T/a" "$T/b")"
pass "seed 77 twice: the same report, bad-sector list and data ($(head -c 160 "$T/a")...)"
run 78 "$T/c"
cmp -s "$T/a" "$T/c" && fail "seeds 77 and 78 gave the same outcome"
pass "seed 78: another outcome"
