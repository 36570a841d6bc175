#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon-nostats.sh - -o nostats removes .stats from the mount (ls -a,
# stat, the image's stats file), the images still served; without it
# .stats is back.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))

sidecar a 4M 512n thin 64K
start_daemon -o nostats
ls -a "$MNT" | grep -q '^\.stats$' && fail "ls -a shows .stats with -o nostats"
[ ! -e "$MNT/.stats" ] || fail "$MNT/.stats exists with -o nostats"
[ ! -e "$MNT/.stats/a.json" ] || fail "$MNT/.stats/a.json exists with -o nostats"
[ "$(stat -c %s "$MNT/a")" = $((4 * M)) ] || fail "image a not served with -o nostats"
stop_daemon
start_daemon
[ -f "$MNT/.stats/a.json" ] || fail ".stats/a.json missing without nostats"
stop_daemon
pass "-o nostats removes .stats (and it is back without it)"
