#!/bin/bash
# SPDX-License-Identifier: MIT
# touched-memory.sh - images read once give their memory back when idle.
#
# sectorfs-bench scale on a store of 10,000 images: after its touch pass
# (one 4 KiB O_DIRECT read of each image, so that each has statistics and
# its descriptors, map and locks were opened) and 10 s of quiet, the
# daemon's RSS must be under 64 MiB, every image listed and read.  Each
# touched image had kept its statistics (about 180 KiB) for as long as it
# was loaded: 1.8 GiB on the code before (190 KB per image read); now the
# idle look packs them and closes the images nobody holds open (about
# 24 MiB, some 300 B per image read).  The daemon runs on the transport
# SECTORFS_IO_URING asks for, as start_daemon's do.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3
requires_built "$SECTORFS_BENCH"
# AddressSanitizer's allocator keeps freed memory in quarantine: RSS is its own
if command -v ldd >/dev/null 2>&1 && ldd "$SECTORFS" 2>/dev/null | grep -q 'libasan'; then
	skip "the daemon is built with AddressSanitizer, whose allocator sets the RSS"
fi

N=10000
LIMIT_KIB=$((64 * 1024))
DAEMON="$SECTORFS"
if [ ${#TRANSPORT_OPTS[@]} -gt 0 ]; then
	DAEMON="$T/sectorfs-transport"
	printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$SECTORFS" "${TRANSPORT_OPTS[*]}" > "$DAEMON"
	chmod +x "$DAEMON"
fi
mkdir -p "$T/bench"
"$SECTORFS_BENCH" scale --images $N --load-seconds 0 --repeat 0 --touch-idle-seconds 10 --dir "$T/bench" \
	--daemon "$DAEMON" --json > "$T/scale.json" 2>"$T/scale.err" ||
	fail "sectorfs-bench scale failed: $(tail -n 20 "$T/scale.err")"
python3 - "$T/scale.json" $N $LIMIT_KIB <<'EOF' || fail "$(cat "$T/scale.json")"
import json, sys
r, n, limit = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
assert r["images_listed"] == n, "listed %d of %d" % (r["images_listed"], n)
assert r["images_touched"] == n, "read %d of %d" % (r["images_touched"], n)
kib = r["rss_touched_idle_kib"]
print("# RSS idle %.1f MiB, after one read of each image %.1f MiB, %.0f s later %.1f MiB (%.0f B per image read)" %
      (r["rss_idle_kib"] / 1024, r["rss_touched_kib"] / 1024, r["touch_idle_seconds"], kib / 1024,
       r["rss_per_touched_image_bytes"]))
assert kib < limit, "RSS %.1f MiB 10 s after one read of each of %d images: not under %d MiB" % (kib / 1024, n, limit // 1024)
EOF
pass "$N images read once, then 10 s idle: RSS $(python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["rss_touched_idle_kib"] / 1024))' "$T/scale.json") MiB, under 64 MiB"
