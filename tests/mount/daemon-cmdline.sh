#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon-cmdline.sh - sectorfs --help exits 0 and names sector=,
# provisioning=, block_size=, nostats, nonempty; --version says sectorfs;
# bad command lines (no arguments, no mount point, a bad sector format,
# provisioning or block size, a missing store, an unknown option) exit
# non-zero, without hanging, with a message saying what is wrong, and
# mount nothing.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"   # if a daemon that should fail mounted it

# run_bad WANT ARGS...: sectorfs ARGS must exit non-zero (not hang), say WANT
# on stderr, and mount nothing on MNT2.
run_bad() {
	local want=$1 rc=0
	shift
	timeout 20 "$SECTORFS" "$@" >"$T/bad.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "sectorfs $* hung"
	[ $rc -ne 0 ] || fail "sectorfs $* exited 0"
	grep -qF -- "$want" "$T/bad.out" || fail "sectorfs $*: expected a message with '$want', got: $(cat "$T/bad.out")"
	! mountpoint -q "$MNT2" || fail "sectorfs $* left $MNT2 mounted"
	local args="${*:-(no arguments)}"
	pass "sectorfs ${args//$T/\$T} exits $rc: $(head -n1 "$T/bad.out" | sed "s|$T|\$T|g")"
}

sidecar a 4M 512n thin 64K
rc=0
timeout 20 "$SECTORFS" --help >"$T/help.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "--help exited $rc"
for word in sector= provisioning= block_size= nostats nonempty; do
	grep -qF "$word" "$T/help.out" || fail "--help does not mention $word"
done
pass "--help exits 0 and mentions sector=, provisioning=, block_size=, nostats, nonempty"
timeout 20 "$SECTORFS" --version >"$T/version.out" 2>&1 || fail "--version exited non-zero"
grep -q sectorfs "$T/version.out" || fail "--version does not say sectorfs: $(cat "$T/version.out")"
pass "--version: $(head -n1 "$T/version.out")"

# ---- bad command lines ----
run_bad "usage"
run_bad "usage" "$STORE"
run_bad "sector=999n" -o sector=999n "$STORE" "$MNT2"
run_bad "provisioning=bogus" -o provisioning=bogus "$STORE" "$MNT2"
run_bad "block_size" -o block_size=3K "$STORE" "$MNT2"
run_bad "No such file or directory" "$T/no-such-store" "$MNT2"
run_bad "bogus_option" -o bogus_option "$STORE" "$MNT2"
