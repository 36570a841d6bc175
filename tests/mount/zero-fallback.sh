#!/bin/bash
# SPDX-License-Identifier: MIT
# zero-fallback.sh - the reports say whether zero offload is in force.
#
# Proves: on a store in tmpfs (/dev/shm), which has no
# FALLOC_FL_ZERO_RANGE, an image with zero_offload true is reported as
# having fallen back to writing zeros, and why, by the stats text, the
# stats JSON (zero_offload false, zero_offload_fallback the reason), the
# Prometheus metrics (zero_offload="fallback") and `sectorfs-img info`
# (text and --json), before and after its first zeroing; an image with
# zero_offload false says "off" everywhere; and on the test's own store
# (ext4 or XFS) the same sidecar says "on".  (Before, everything said "on"
# on tmpfs while the daemon wrote zeros.)

. "$(dirname "$0")/lib.sh"
requires_fuse
[ -d /dev/shm ] || skip "no /dev/shm"
[ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "/dev/shm is not tmpfs"
REASON="the backing filesystem has no FALLOC_FL_ZERO_RANGE: Operation not supported"

SHM=$(mktemp -d /dev/shm/sectorfs-zero-fallback.XXXXXX)
on_exit "rm -rf $SHM"
: > "$SHM/probe"
if fallocate -z -l 4096 "$SHM/probe" 2>/dev/null; then
	skip "tmpfs here has FALLOC_FL_ZERO_RANGE"
fi
rm -f "$SHM/probe"
EXT_STORE=$STORE
STORE=$SHM

sidecar a 16M 4kn thin 1M true
sidecar b 16M 4kn thin 1M false
json_val() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# reports IMAGE OFFLOAD FALLBACK TEXT METRIC WHEN: what stats and info say of IMAGE.
reports() {
	local name=$1 off=$2 fb=$3 text=$4 metric=$5 when=$6
	grep -qF "zero offload $text" "$MNT/.stats/$name" ||
		fail "$when: stats of $name: $(grep 'zero offload' "$MNT/.stats/$name")"
	cp "$MNT/.stats/$name.json" "$T/s.json"
	[ "$(json_val "$T/s.json" zero_offload)" = "$off" ] &&
		[ "$(json_val "$T/s.json" zero_offload_fallback)" = "$fb" ] ||
		fail "$when: $name.json says zero_offload $(json_val "$T/s.json" zero_offload), fallback $(json_val "$T/s.json" zero_offload_fallback)"
	grep -q "^sectorfs_image_info{image=\"$name\",.*zero_offload=\"$metric\"" "$MNT/.stats/metrics" ||
		fail "$when: metrics: $(grep "^sectorfs_image_info{image=\"$name\"" "$MNT/.stats/metrics")"
	"$SECTORFS_IMG" info "$STORE/$name" > "$T/info" || fail "info $name"
	grep -qF "zero offload:   $text" "$T/info" || fail "$when: info $name: $(grep offload "$T/info")"
	"$SECTORFS_IMG" info --json "$STORE/$name" > "$T/info.json" || fail "info --json $name"
	[ "$(json_val "$T/info.json" zero_offload)" = "$off" ] &&
		[ "$(json_val "$T/info.json" zero_offload_fallback)" = "$fb" ] ||
		fail "$when: info --json $name: $(grep offload "$T/info.json")"
}

start_daemon
reports a False "$REASON" "fell back to writing zeros ($REASON)" fallback "tmpfs, before any zeroing"
reports b False null off false "tmpfs, zero_offload false"
dd if=/dev/urandom of="$MNT/a" bs=4k count=1 seek=3 oflag=direct conv=notrunc status=none || fail "write a"
[ "$(stats_key a zeroed_bytes)" = $((1024 * 1024 - 4096)) ] || fail "zeroed_bytes $(stats_key a zeroed_bytes)"
reports a False "$REASON" "fell back to writing zeros ($REASON)" fallback "tmpfs, after a first write"
pass "tmpfs: stats text, JSON, metrics and info say zero offload fell back, and why; off says off"
stop_daemon

# A backing file bind-mounted into the tmpfs store from the test's own filesystem, which has
# ZERO_RANGE: the store's probe does not speak for it, its own zeroing does.
if [ "$(id -u)" -eq 0 ] && command -v mount >/dev/null; then
	: > "$T/probe"
	if fallocate -z -l 4096 "$T/probe" 2>/dev/null; then
		sidecar c 16M 4kn thin 1M true
		truncate -s 16M "$T/c.backing" "$STORE/c"
		mount --bind "$T/c.backing" "$STORE/c" || fail "mount --bind"
		on_exit "umount $STORE/c"
		start_daemon
		grep -q "zero offload on" "$MNT/.stats/c" || fail "bound c: $(grep 'zero offload' "$MNT/.stats/c")"
		dd if=/dev/urandom of="$MNT/c" bs=4k count=1 seek=3 oflag=direct conv=notrunc status=none ||
			fail "write c"
		grep -q "zero offload on" "$MNT/.stats/c" ||
			fail "bound c after a write: $(grep 'zero offload' "$MNT/.stats/c")"
		stop_daemon
		umount "$STORE/c"
		pass "a backing file bound in from a filesystem with ZERO_RANGE keeps zero offload on"
	fi
fi

STORE=$EXT_STORE
sidecar a 16M 4kn thin 1M true
: > "$T/probe"
fallocate -z -l 4096 "$T/probe" 2>/dev/null || skip "the test store has no FALLOC_FL_ZERO_RANGE either"
start_daemon
FSTYPE=$(df --output=fstype "$STORE" | tail -n1)
reports a True null on true "$FSTYPE"
pass "$FSTYPE: the same sidecar says zero offload on"
stop_daemon
