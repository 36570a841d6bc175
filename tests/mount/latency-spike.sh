#!/bin/bash
# SPDX-License-Identifier: MIT
# latency-spike.sh - a sidecar's latency_spike alone (no profile) makes
# every Nth request of the image take the extra time: the long tail that
# makes timeouts fire.
#
# Proves, on a 4kn image with "latency_spike": {"every": 5, "extra_us":
# 300000} and no profile:
#  - 10 reads of 4 KiB (dd iflag=direct) take at least 600 ms (the 5th
#    and 10th each 300 ms more), and the stats count about 600 ms of
#    model delay on reads (less the reads' own time on the store), under
#    the profile name "latency_spike";
#  - an image beside it without the key reads 10 blocks in well under
#    that, with no profile in its stats.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-power.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3

fail_sidecar slow 8M 4kn '"latency_spike": {"every": 5, "extra_us": 300000}'
fail_sidecar plain 8M 4kn
start_daemon

# ms NAME: the milliseconds 10 reads of 4 KiB of $MNT/NAME take into MS.
ms() {
	local t0=$(date +%s%N)
	dd if="$MNT/$1" of=/dev/null bs=4K count=10 iflag=direct status=none || fail "dd of $1"
	MS=$((($(date +%s%N) - t0) / 1000000))
}
ms slow
slow=$MS
ms plain
plain=$MS
[ "$slow" -ge 600 ] || fail "10 reads with a spike every 5th took $slow ms, want at least 600"
[ "$plain" -lt 300 ] || fail "10 reads without a spike took $plain ms"
python3 - "$MNT/.stats" <<'PY' || fail "the stats do not show the spikes"
import json, sys
s = json.load(open(sys.argv[1] + "/slow.json"))
p = json.load(open(sys.argv[1] + "/plain.json"))
assert s["profile"] == "latency_spike", s["profile"]
# what the spikes added beyond the reads' own time on the store: 2 x 300 ms, less that time
assert s["model_delay_us"]["read"] >= 599000, s["model_delay_us"]
assert p["profile"] is None and "model_delay_us" not in p, p.get("profile")
PY
pass "every 5th request 300 ms more: $slow ms for 10 reads ($plain ms without)"
stop_daemon
