#!/bin/bash
# SPDX-License-Identifier: MIT
# check-profile.sh - sectorfs-img check of images whose sidecar names a
# profile the daemon cannot load (missing, a FIFO, past the limits of
# physical sense, as an older version accepted: flush_us 1e300): the
# daemon refuses to serve them, so check names the key and the reason and
# exits 4, and --repair leaves the sidecar (it is the user's); an image
# with a good profile stays clean.
. "$(dirname "$0")/lib.sh"

R='"read": [{"size": 512, "us": 100}], "write": [{"size": 512, "us": 100}]'
printf '{ %s, "flush_us": 50 }\n' "$R" > "$STORE/good.prof"
printf '{ %s, "flush_us": 1e300 }\n' "$R" > "$STORE/absurd.prof"
mkfifo "$STORE/fifo.prof"
printf '{ "size": "1M", "profile": "./good.prof" }\n' > "$STORE/good.json"
printf '{ "size": "1M", "profile": "./absurd.prof" }\n' > "$STORE/absurd.json"
printf '{ "size": "1M", "profile": "./fifo.prof" }\n' > "$STORE/fifo.json"
printf '{ "size": "1M", "profile": "./missing.prof" }\n' > "$STORE/missing.json"

img 0 check "$STORE/good"
pass "an image with a good profile: clean (0)"
for n in absurd fifo missing; do
	timeout 20 "$SECTORFS_IMG" check "$STORE/$n" > "$T/out" 2>&1 && fail "check $n: exit 0"
	out_has "$STORE/$n: sidecar: $n.json: key 'profile': "
	out_lacks "clean"
	[ $n != fifo ] || out_has "not a regular file"
done
img 4 check "$STORE"
out_has "$STORE/absurd: sidecar: absurd.json: key 'profile': ./absurd.prof: key 'flush_us': expected microseconds"
out_has "$STORE/good: clean"
img 4 check --repair "$STORE"
grep -q absurd.prof "$STORE/absurd.json" || fail "--repair changed the user's sidecar"
pass "profiles the daemon refuses: check names the key (4), --repair leaves the sidecar"
