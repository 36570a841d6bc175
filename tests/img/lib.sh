# SPDX-License-Identifier: MIT
# lib.sh - what the sectorfs-img tests share, on top of tests/mount/lib.sh:
# the tool, a run of it with its exit status required, the checks of what
# that run printed, of an image's files and map, and the raw files that
# --from imports.  Sourced; needs no mount (requires_mount says when a
# test does).
. "$(dirname "$0")/../mount/lib.sh"

requires_built "$SECTORFS_IMG"

# img RC ARGS...: run sectorfs-img ARGS, require exit status RC.
# stdout goes to $T/out, stderr to $T/err.
img() {
	local want=$1 rc=0
	shift
	"$SECTORFS_IMG" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "sectorfs-img $* exited $rc, expected $want; stdout: $(cat "$T/out") stderr: $(cat "$T/err")"
}
# out_is LINE / err_is LINE: the last run printed exactly this line.
out_is() { grep -qxF -- "$1" "$T/out" || fail "stdout lacks the line '$1'; got: $(cat "$T/out")"; }
err_is() { grep -qxF -- "$1" "$T/err" || fail "stderr lacks the line '$1'; got: $(cat "$T/err")"; }
# out_has TEXT / err_has TEXT: ... or contains this text; out_lacks TEXT: ... or does not.
out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1'; got: $(cat "$T/out")"; }
err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1'; got: $(cat "$T/err")"; }
out_lacks() { ! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'; got: $(cat "$T/out")"; }

M=$((1024 * 1024))

# jv KEY: a top-level scalar of the JSON object in $T/out.
jv() {
	sed -n -e "s/^  \"$1\": \"\(.*\)\",\{0,1\}\$/\1/p" -e "s/^  \"$1\": \([^\",]*\),\{0,1\}\$/\1/p" "$T/out" | head -n1
}
# gone NAME: none of the image's files exists.
gone() {
	local f
	for f in "$STORE/$1" "$STORE/$1.json" "$STORE/.sectorfs/$1.map" "$STORE/.sectorfs/$1.map.new"; do
		[ ! -e "$f" ] || fail "$f left behind"
	done
}
# map_is NAME LINES...: 'sectorfs-img map' rows, "offset length allocated" each.
map_is() {
	local name=$1 want got
	shift
	img 0 map "$STORE/$name"
	want=$(printf '%s\n' "Offset Length Allocated" "$@")
	got=$(tr -s ' ' < "$T/out")
	[ "$got" = "$want" ] || fail "map of $name: expected
$want
got
$got"
}
# xattr_get FILE NAME: the value of an xattr (getfattr, else python3).
xattr_get() {
	if command -v getfattr >/dev/null 2>&1; then
		getfattr --only-values -n "$2" "$1" 2>/dev/null
	else
		python3 -c 'import os, sys; sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$1" "$2"
	fi
}
# disk_sha NAME: sha256 of the disk MNT/NAME, read with O_DIRECT.
disk_sha() { dd if="$MNT/$1" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1; }

# requires_mount: what a test that mounts the store needs (else exit 77).
requires_mount() {
	requires_fuse
	requires_gnu_dd
	command -v getfattr >/dev/null 2>&1 || requires_cmd python3
}

# make_raw: $RAW, a 10M raw disk with data in [192K, 320K) and in its last
# 3000 bytes, holes elsewhere.
RAW="$T/disk.raw"
make_raw() {
	truncate -s 10M "$RAW"
	head -c $((128 * 1024)) /dev/urandom | dd of="$RAW" bs=64K seek=3 conv=notrunc status=none
	head -c 3000 /dev/urandom | dd of="$RAW" bs=1 seek=$((10 * M - 3000)) conv=notrunc status=none
}

# make_small_raw: $T/small.raw, 10000 random bytes.
make_small_raw() { head -c 10000 /dev/urandom > "$T/small.raw"; }
