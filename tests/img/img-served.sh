#!/bin/bash
# SPDX-License-Identifier: MIT
# img-served.sh - while a daemon serves the store, every changing
# sectorfs-img command (create, resize, inflate, check --repair) refuses,
# naming the holder (pid and mount point), and changes nothing; info
# (which says by whom it is served), info --json, map and check work.
. "$(dirname "$0")/lib.sh"
requires_mount

img 0 create -s 16M -f 4kn -b 64K "$STORE/thin4k"
start_daemon
HOLDER="pid $DPID, mounted at $MNT"

img 1 create -s 8M "$STORE/new"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
gone new
img 1 resize "$STORE/thin4k" 32M
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 1 inflate "$STORE/thin4k"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 8 check --repair "$STORE/thin4k"
err_is "sectorfs-img: $STORE: store is served by sectorfs ($HOLDER); unmount it first"
img 0 check "$STORE/thin4k"
img 0 info "$STORE/thin4k"
out_is "served:         yes, by $HOLDER (allocation as of its last flush)"
img 0 info --json "$STORE/thin4k"
[ "$(jv served)" = true ] && [ "$(jv holder)" = "$HOLDER" ] || fail "info --json while served: $(cat "$T/out")"
img 0 map "$STORE/thin4k"
pass "changes refused while served, naming the holder; info, map, check work"
stop_daemon
