#!/bin/bash
# SPDX-License-Identifier: MIT
# img-progress-tty.sh - on a terminal (script(1) makes one), sectorfs-img
# create of an eagerzeroedthick image draws a progress bar with percent
# and MB/s.
. "$(dirname "$0")/lib.sh"

requires_cmd script

script -qfec "$SECTORFS_IMG create -s 64M -b 64K -p eagerzeroedthick $STORE/tty" /dev/null > "$T/tty" 2>&1 ||
	fail "create on a terminal failed: $(cat "$T/tty")"
grep -q "zeroing .*100%.*MB/s" "$T/tty" || fail "no progress bar on a terminal: $(cat -v "$T/tty")"
pass "progress bar with percent and MB/s on a terminal"
