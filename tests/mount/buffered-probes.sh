#!/bin/bash
# SPDX-License-Identifier: MIT
# buffered-probes.sh - tools that probe a disk without O_DIRECT work on a
# 4kn image: qemu-img info (its format probe reads 512 bytes) finds raw,
# file -s reads it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-buffered.sh"
requires_cmd file

buffered_serve

if command -v qemu-img >/dev/null 2>&1; then
	qemu-img info "$MNT/k4" > "$T/qi" 2>&1 || fail "qemu-img info on a 4kn image: $(cat "$T/qi")"
	grep -q "file format: raw" "$T/qi" || fail "qemu-img info: $(cat "$T/qi")"
	pass "qemu-img info (no -f) on a 4kn image"
fi
file -s "$MNT/k4" > "$T/fs" 2>&1 || fail "file -s: $(cat "$T/fs")"
grep -q "data" "$T/fs" || fail "file -s: $(cat "$T/fs")"
pass "file -s reads a 4kn image"
stop_daemon
