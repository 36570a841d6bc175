# SPDX-License-Identifier: MIT
# lib-map.sh - what the tests of a damaged or old allocation map share: a
# thin 64M image (1024 blocks of 64K, one bitmap page) with 4 blocks
# written through the mount, the version its map says, and the check that
# the 4 blocks read back and a block never written reads zeros.  Source it
# after tests/img/lib.sh (which gives img and out_has, and sources lib.sh):
#
#   . "$(dirname "$0")/../img/lib.sh"
#   . "$(dirname "$0")/lib-map.sh"
#   map_setup

MAP="$STORE/.sectorfs/thin.map"
BS=65536
BLOCKS="0 5 700 1023"

# blk_sum FILE N: sha256 of block N of FILE.
blk_sum() { dd if="$1" bs=$BS skip="$2" count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1; }
# map_version: the version in thin's map header.
map_version() { od -An -tu4 -j8 -N4 "$MAP" | tr -d ' '; }
# expect_data WHEN: thin's 4 written blocks read as written, block 3 as zeros.
expect_data() {
	local b
	for b in $BLOCKS; do
		expect_eq "$(blk_sum "$MNT/thin" "$b")" "$(blk_sum "$T/src.$b" 0)" "$1: block $b"
	done
	expect_eq "$(blk_sum "$MNT/thin" 3)" "$(head -c $BS /dev/zero | sha256sum | cut -d' ' -f1)" \
		"$1: block 3, never written"
}

# map_setup: the images thin (4 blocks written, map version 2) and other,
# the daemon stopped.
map_setup() {
	local b
	sidecar thin 64M 4kn thin 64K
	sidecar other 1M 512n thin
	start_daemon
	for b in $BLOCKS; do
		dd if=/dev/urandom of="$T/src.$b" bs=$BS count=1 status=none
		dd if="$T/src.$b" of="$MNT/thin" bs=$BS seek="$b" oflag=direct conv=notrunc,fsync status=none ||
			fail "write block $b"
	done
	expect_eq "$(stats_key thin allocated_blocks)" 4 "allocated blocks after 4 writes"
	stop_daemon
	expect_eq "$(map_version)" 2 "version of a new map"
}
