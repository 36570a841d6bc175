#!/bin/bash
# SPDX-License-Identifier: MIT
# sidecar-import.sh - a raw file with a sidecar and no map is imported
# with its data (holes included) intact, a map made, grown to the
# sidecar's size (the part past the raw file's end reads zeros).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-sidecars.sh"

serve_good_store

[ -f "$STORE/.sectorfs/gimport.map" ] || fail "no map made for the imported image"
expect_eq "$(stat -c %s "$MNT/gimport")" $((4 * M)) "size of the imported image"
expect_eq "$(sum "$MNT/gimport" 0 $((3 * M)))" "$(sum "$T/gimport.orig" 0 $((3 * M)))" "imported data"
expect_eq "$(sum "$MNT/gimport" $M $M)" "$(zsum $M)" "imported hole"
expect_eq "$(sum "$MNT/gimport" $((3 * M)) $M)" "$(zsum $M)" "imported image past the raw file's end"
pass "raw file with a sidecar and no map: imported, data and hole intact, grown to the sidecar's size"
stop_daemon
