# SPDX-License-Identifier: MIT
# lib-zeroing.sh - what the tests of eager zeroing in the background share:
# a clock in milliseconds, an image's zeroing state from its stats, a key
# of sectorfs-img info, and the wait for a zeroing to finish.  Source it
# after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-zeroing.sh"
#
# It requires FUSE, GNU dd and sectorfs-img.

requires_fuse
requires_gnu_dd
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))
G=$((1024 * M))

# ms: a monotonic clock in milliseconds.
ms() { echo $(($(date +%s%N) / 1000000)); }

# zstate NAME: the "zeroing" string of NAME.json ("" when there is none).
zstate() { tr -d ' \n' < "$MNT/.stats/$1.json" | grep -o '"zeroing":"[a-z]*"' | cut -d'"' -f4; }

# info_key NAME KEY: a key of `sectorfs-img info --json STORE/NAME` (store not served).
info_key() {
	"$SECTORFS_IMG" info --json "$STORE/$1" | tr -d ' \n' | grep -o "\"$2\":[a-z0-9]*" | cut -d: -f2
}

# wait_zeroed NAME SECONDS: until NAME's zeroing is done; fails after SECONDS.
wait_zeroed() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ "$(zstate "$1")" = done ] && return 0
		sleep 0.05
	done
	fail "$1: zeroing not done after $2 s (stats say '$(zstate "$1")')"
}
