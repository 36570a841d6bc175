# SPDX-License-Identifier: MIT
# lib-namespace.sh - what the tests of the mount's namespace (SPEC.md "The
# mount": create, truncate, fallocate, rename, unlink) share: the mount's
# defaults for new images, ranges read and written through the mount, a
# sidecar's keys, the three files of an image in the store and what ls
# shows.  Source it after lib.sh, then start_daemon "${OPTS[@]}":
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-namespace.sh"

OPTS=(-o sector=4kn,provisioning=thin,block_size=64K)
K=1024
M=$((1024 * 1024))
BS=$((64 * K))   # block_size of images created in this mount
SS=4096          # their logical sector

# range_sum FILE OFF LEN: sha256 of LEN bytes at OFF, read in 4 KiB I/Os.
range_sum() {
	dd if="$1" bs=$SS skip=$(($2 / SS)) count=$(($3 / SS)) status=none | sha256sum | cut -d' ' -f1
}

# zero_sum LEN: sha256 of LEN zero bytes.
zero_sum() { head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1; }

# expect_zeros FILE OFF LEN WHAT
expect_zeros() {
	[ "$(range_sum "$1" "$2" "$3")" = "$(zero_sum "$3")" ] ||
		fail "$4: $3 bytes at $2 of $1 do not read as zeros"
}

# write_random FILE OFF LEN: random data at OFF (O_DIRECT, 64 KiB I/Os).
write_random() {
	dd if=/dev/urandom of="$1" bs=$BS seek=$(($2 / BS)) count=$(($3 / BS)) \
		conv=notrunc oflag=direct status=none || fail "writing $3 bytes at $2 of $1 failed"
}

# json_num FILE KEY: the number KEY holds in a JSON file (sidecars).
json_num() { tr -d ' \n' < "$1" | grep -o "\"$2\":[0-9]*" | head -n1 | cut -d: -f2; }
# json_str FILE KEY
json_str() { tr -d ' \n' < "$1" | grep -o "\"$2\":\"[^\"]*\"" | head -n1 | cut -d'"' -f4; }


# three_files NAME present|absent: image, sidecar and map in the store.
three_files() {
	local f
	for f in "$STORE/$1" "$STORE/$1.json" "$STORE/.sectorfs/$1.map"; do
		if [ "$2" = present ]; then
			[ -f "$f" ] || fail "$f missing"
		else
			[ ! -e "$f" ] || fail "$f still exists"
		fi
	done
}

# check_listing NAMES: ls shows the images NAMES ("a b", sorted) and
# nothing else, ls -a adds .stats; no sidecar or .sectorfs shows.
check_listing() {
	local plain all first=${1%% *}
	plain=$(ls "$MNT" | tr '\n' ' ')
	all=$(ls -a "$MNT" | tr '\n' ' ')
	expect_eq "$plain" "$1 " "ls $MNT"
	expect_eq "$all" ". .. .stats $1 " "ls -a $MNT"
	[ ! -e "$MNT/$first.json" ] || fail "sidecar $first.json visible in the mount"
	[ ! -e "$MNT/.sectorfs" ] || fail ".sectorfs visible in the mount"
	[ -d "$MNT/.stats" ] || fail ".stats missing"
}
