#!/bin/bash
# SPDX-License-Identifier: MIT
# max-open.sh - with -o max_open=4 the daemon says it keeps up to 4
# images open at once, and reading 30 images leaves it holding the
# descriptors of at most 4; -o max_open=0 is refused (exit 1, naming it).
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

N=40
for ((i = 0; i < N; i++)); do
	printf '{ "size": "64K", "sector": "4kn", "provisioning": "thin", "block_size": "4K" }\n' \
		> "$STORE/$(printf 'img%04d' "$i")".json
done
fds() { ls "/proc/$DPID/fd" | wc -l; }

start_daemon -o max_open=4
grep -qF "up to 4 images open at once" "$T/daemon.log" || fail "-o max_open=4: $(grep 'open at once' "$T/daemon.log" | tail -n 1)"
base=$(fds)
for i in $(shuf -i 0-$((N - 1)) -n 30); do
	dd if="$MNT/$(printf 'img%04d' "$i")" of=/dev/null bs=4096 count=1 iflag=direct status=none || fail "read with max_open=4"
done
[ "$(fds)" -le $((base + 12)) ] || fail "-o max_open=4: $(fds) descriptors after reading 30 images, $base before"
stop_daemon
rc=0
"$SECTORFS" -f -o max_open=0 "$STORE" "$MNT" > "$T/mo.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "max_open=0" "$T/mo.out" || fail "-o max_open=0: exit $rc, $(cat "$T/mo.out")"
pass "-o max_open=4: the descriptors of at most 4 images held; -o max_open=0 refused"
