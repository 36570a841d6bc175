#!/bin/bash
# SPDX-License-Identifier: MIT
# bad-sidecars.sh - with good sidecars beside bad ones (invalid JSON, an
# unknown key, a size not a multiple of the sector, physical < logical, a
# symlink, a FIFO, a 1 MiB file) the daemon starts, serves exactly the
# good images and logs one line per bad sidecar naming the file, the key
# (where there is one) and the reason, once, however often the names are
# looked up; it creates no image for a bad sidecar.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-sidecars.sh"

good_store
bad_store
log_mark
start_daemon

# ---- served: exactly the good ones ----
expect_eq "$(ls "$MNT" | tr '\n' ' ')" "$GOOD " "images served"
for n in $BAD; do
	[ ! -e "$MNT/$n" ] || fail "bad sidecar $n.json served an image"
	[ ! -e "$STORE/$n" ] || fail "bad sidecar $n.json got a backing file"
	[ ! -e "$STORE/.sectorfs/$n.map" ] || fail "bad sidecar $n.json got a map"
done
pass "daemon started; serves exactly: $GOOD"

# look the bad names up again: still one line each
ls "$MNT" >/dev/null; ls -l "$MNT" >/dev/null
for n in $BAD; do stat "$MNT/$n" >/dev/null 2>&1 && fail "$n visible"; done
expect_one_line badjson.json "" "JSON"
expect_one_line badkey.json "colour" "unknown"
expect_one_line badsize.json "size" "multiple"
expect_one_line badphys.json "physical_sector_size" "smaller|less|<"
expect_one_line badlink.json "" "symbolic link|symlink"
expect_one_line badfifo.json "" "regular|fifo"
expect_one_line badbig.json "" "large|big|KiB|MiB"
log_new | grep -iE 'error|warn' | grep -E "\b(${GOOD// /|})\b" && fail "errors or warnings about good sidecars"
pass "one log line per bad sidecar, naming file, key and reason:"
log_new | grep -F -f <(printf '%s.json\n' $BAD) | sed 's/^/#   /'

stop_daemon
