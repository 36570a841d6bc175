#!/bin/bash
# SPDX-License-Identifier: MIT
# check-state-not-dir.sh - a store whose .sectorfs is not a directory (a
# file, a symbolic link, a FIFO put there): the daemon refuses to serve
# it, so check STORE says why and exits 4 (a problem left), never "all
# clean" with an unexplained exit status; --repair leaves it (it may be
# the user's) and says so.
. "$(dirname "$0")/lib.sh"

printf '{ "size": "1M" }\n' > "$STORE/a.json"
for kind in file symlink fifo; do
	rm -rf "$STORE/.sectorfs" "$T/elsewhere"
	case $kind in
	file) echo mine > "$STORE/.sectorfs" ;;
	symlink) mkdir "$T/elsewhere" && ln -s "$T/elsewhere" "$STORE/.sectorfs" ;;
	fifo) mkfifo "$STORE/.sectorfs" ;;
	esac
	img 4 check "$STORE"
	out_has "$STORE/.sectorfs: the state directory is not a directory"
	img 4 check --repair "$STORE"
	out_has "$STORE/.sectorfs: the state directory is not a directory"
	[ -e "$STORE/.sectorfs" ] || [ -L "$STORE/.sectorfs" ] || fail "--repair removed .sectorfs ($kind)"
	pass ".sectorfs as a $kind: check says so and exits 4, --repair leaves it"
done
