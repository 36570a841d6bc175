#!/bin/bash
# SPDX-License-Identifier: MIT
# metrics-file.sh - the metrics file itself: read-only (open for writing
# and truncate fail with EACCES, mode 0444), listed once in .stats even
# beside an image named "metrics" (whose metrics.json stays); a link named
# *.prom reads the same, and node_exporter's textfile collector (when
# installed) serves it from there; poll(2) says it is ready at once, as
# for a disk; -o nostats has none.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3

sidecar d4k 8M 4kn thin 64K
sidecar metrics 1M 512n thin 64K
start_daemon
dd if=/dev/urandom of="$MNT/d4k" bs=4096 count=10 oflag=direct conv=notrunc,fsync status=none || fail "write d4k"

ls -a "$MNT/.stats" > "$T/ls" || fail "ls .stats"
[ "$(grep -cx metrics "$T/ls")" = 1 ] || fail ".stats lists 'metrics' $(grep -cx metrics "$T/ls") times"
grep -qx metrics.json "$T/ls" || fail "the image named metrics lost its metrics.json"
head -c 20 "$MNT/.stats/metrics" | grep -q '^# HELP sectorfs_' || fail ".stats/metrics is not the exposition"
[ "$(stat -c %a "$MNT/.stats/metrics")" = 444 ] || fail "mode of .stats/metrics: $(stat -c %a "$MNT/.stats/metrics")"
expect_errno "Permission denied" sh -c "echo reset > '$MNT/.stats/metrics'"
expect_errno "Permission denied" truncate -s 0 "$MNT/.stats/metrics"
ln -s "$MNT/.stats/metrics" "$T/sectorfs.prom"
grep -q '^sectorfs_writes_total{image="d4k"} 10$' "$T/sectorfs.prom" || fail "reading through a *.prom link"
pass "read-only, listed once, readable through a *.prom link"

# poll(2), as an event loop asks it (node_exporter's Go runtime): ready at once, like any file
python3 - "$MNT/.stats/metrics" "$MNT/d4k" <<'EOF' || fail "poll(2) on the metrics file or a disk"
import select, sys
for f in sys.argv[1:]:
    with open(f, "rb") as fh:
        for _ in range(2):
            p = select.poll()
            p.register(fh, select.POLLIN | select.POLLOUT)
            ev = p.poll(5000)
            assert ev and ev[0][1] & select.POLLIN, (f, ev)
EOF
pass "poll(2) on the metrics file and a disk: ready at once"

# node_exporter itself, when installed (Debian: prometheus-node-exporter): its textfile collector
# reads the link and serves the samples, without a scrape error
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -n "$NE" ] && command -v curl >/dev/null; then
	mkdir -p "$T/textfile"
	ln -s "$MNT/.stats/metrics" "$T/textfile/sectorfs.prom"
	port=$((20000 + $$ % 10000))
	"$NE" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$T/textfile" > "$T/ne.log" 2>&1 &
	nepid=$!
	on_exit "kill $nepid"
	for ((i = 0; i < 50; i++)); do
		curl -sf "http://127.0.0.1:$port/metrics" > "$T/scrape" 2>/dev/null && break
		sleep 0.2
	done
	kill "$nepid"
	grep -qx 'node_textfile_scrape_error 0' "$T/scrape" || fail "node_exporter: scrape error: $(cat "$T/ne.log")"
	grep -qx 'sectorfs_writes_total{image="d4k"} 10' "$T/scrape" || fail "node_exporter does not serve the samples"
	pass "node_exporter's textfile collector serves them from the *.prom link"
fi

stop_daemon
start_daemon -o nostats
[ ! -e "$MNT/.stats/metrics" ] || fail "-o nostats mount has a metrics file"
stop_daemon
pass "-o nostats: no metrics file"
