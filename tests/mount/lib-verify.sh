# SPDX-License-Identifier: MIT
# lib-verify.sh - what the tests of a failure around the daemon share (an
# unmount under I/O, SIGTERM or kill -9 during writes, a second daemon):
# background processes ended at exit, the daemon's exit awaited,
# sectorfs-img check required clean, and a disk read whole and compared,
# chunk by chunk and sector by sector, with what was written to it.
# Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-verify.sh"
#
# It requires FUSE, GNU dd and sectorfs-img (the tests skip, 77, or fail
# as lib.sh's requires_* say).

requires_fuse
requires_gnu_dd
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

# BG: processes the test starts in the background, ended by PID at exit if
# still running; a test empties the list once it has waited for them.
BG=()
# ours PID: PID is still a child of this shell (not a PID reused since).
ours() { [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2)" = "$$" ]; }
on_exit 'for p in "${BG[@]}"; do ours "$p" && kill "$p"; done; for p in "${BG[@]}"; do wait "$p"; done'

# daemon_exit SECONDS WHAT: the daemon must exit within SECONDS, with 0.
daemon_exit() {
	local rc=0
	wait_gone "$DPID" "$1" || fail "daemon still running $1 s after $2"
	wait "$DPID" || rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "daemon exited $rc after $2"
}

# serve_written IMG...: random data in $T/src.d (8 MiB), the store served,
# its first 2 MiB written (fsynced) to each IMG, and to c, whose whole
# disk is then kept in $T/c.before to show it untouched.
serve_written() {
	local img
	head -c $((8 * M)) /dev/urandom > "$T/src.d"
	start_daemon
	for img in "$@" c; do
		dd if="$T/src.d" of="$MNT/$img" bs=1M count=2 oflag=direct conv=notrunc,fsync status=none ||
			fail "$img: write failed"
	done
	dd if="$MNT/c" of="$T/c.before" bs=1M iflag=direct status=none
}

# check_clean NAME WHEN: sectorfs-img check STORE/NAME must exit 0.
check_clean() {
	local rc=0
	"$SECTORFS_IMG" check "$STORE/$1" >"$T/check.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || fail "sectorfs-img check $1 $2 exited $rc (want 0, clean): $(cat "$T/check.out")"
}

# dump NAME FILE: the whole disk, read through the mount.
dump() {
	local size
	size=$(stat_val %s "$MNT/$1")
	dd if="$MNT/$1" of="$2" bs=1M iflag=direct status=none || fail "$1: reading the disk failed"
	[ "$(stat_val %s "$2")" -eq "$size" ] || fail "$1: short read of the disk"
}

# sectors_ok GOT SRC OFF LEN LSS: each sector of [OFF, OFF+LEN) in GOT is
# that sector of SRC or zeros; prints the first bad offset, 1 if any.
sectors_ok() {
	local bad
	dd if="$1" of="$T/x.got" bs=64K skip="$3" count="$4" iflag=skip_bytes,count_bytes status=none
	dd if="$2" of="$T/x.src" bs=64K skip="$3" count="$4" iflag=skip_bytes,count_bytes status=none
	head -c "$4" /dev/zero > "$T/x.zero"
	bad=$(comm -12 \
		<(cmp -l "$T/x.got" "$T/x.src" 2>/dev/null | awk -v L="$5" '{ print int(($1 - 1) / L) }' | uniq | sort) \
		<(cmp -l "$T/x.got" "$T/x.zero" 2>/dev/null | awk -v L="$5" '{ print int(($1 - 1) / L) }' | uniq | sort) |
		sort -n | head -n1)
	[ -z "$bad" ] && return 0
	echo $(($3 + bad * $5))
	return 1
}

# verify NAME GOT SRC CHUNK LSS DONE...: chunks (CHUNK bytes) listed in the
# DONE files read exactly as SRC; every other chunk as SRC or zeros per
# sector.  Sets NEXACT, NZERO, NMIXED (chunks not listed: as written, zeros,
# a mix).
verify() {
	local name=$1 got=$2 src=$3 ch=$4 lss=$5 c off n size bad
	shift 5
	declare -A isdone=()
	for c in $(cat "$@" 2>/dev/null); do isdone[$c]=1; done
	size=$(stat_val %s "$got")
	n=$((size / ch))
	NEXACT=0 NZERO=0 NMIXED=0
	for ((c = 0; c < n; c++)); do
		off=$((c * ch))
		if cmp -s -i "$off:$off" -n "$ch" "$got" "$src"; then
			[ -n "${isdone[$c]:-}" ] || NEXACT=$((NEXACT + 1))
			continue
		fi
		[ -z "${isdone[$c]:-}" ] ||
			fail "$name: chunk $c (offset $off, $ch bytes), written with a dd that exited 0, does not read back: $(cmp -i "$off:$off" -n "$ch" "$got" "$src" 2>&1)"
		if cmp -s -i "$off:0" -n "$ch" "$got" /dev/zero; then
			NZERO=$((NZERO + 1))
			continue
		fi
		bad=$(sectors_ok "$got" "$src" "$off" "$ch" "$lss") ||
			fail "$name: sector at offset $bad (chunk $c) is neither the data written there nor zeros"
		NMIXED=$((NMIXED + 1))
	done
}
