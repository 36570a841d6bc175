#!/bin/bash
# SPDX-License-Identifier: MIT
# kill9-mid-writes.sh - kill -9 in the middle of writes (every third one
# fsynced) on a thin, a zeroedthick (no zero offload) and an
# eagerzeroedthick image: `sectorfs-img check` on each is clean, or, if it
# reports a problem, `check --repair` fixes it (exit 1, then clean); which
# one happened is printed.  After remount every write made before an fsync
# (an fsync covers all earlier writes, not only its own) reads back, every
# other sector reads as written or zeros.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp awk comm

ECH=$((64 * 1024))
sidecar e4k 16M 4kn thin 64K
sidecar e5e 16M 512e zeroedthick 64K false
sidecar ez 8M 512n eagerzeroedthick 64K
declare -A ELSS=([e4k]=4096 [e5e]=512 [ez]=512) ESIZE=([e4k]=16 [e5e]=16 [ez]=8)
EIMGS=(e4k e5e ez)
for img in "${EIMGS[@]}"; do head -c $((ESIZE[$img] * M)) /dev/urandom > "$T/src.$img"; done
start_daemon
# ewriter IMG: every chunk once, in a scattered order (chunk 37k mod n),
# every third dd with conv=fsync; each completed dd (exit 0) is logged in
# order in wlog.IMG, "C f" when it was fsynced.  Stops when an open fails.
ewriter() {
	local img=$1 n k c fs
	n=$((ESIZE[$img] * M / ECH))
	for ((k = 0; k < n; k++)); do
		c=$(((k * 37) % n))
		if ((k % 3 == 2)); then fs=,fsync; else fs=; fi
		dd if="$T/src.$img" of="$MNT/$img" bs=$ECH count=1 skip=$c seek=$c \
			oflag=direct conv=notrunc,nocreat$fs status=none 2>/dev/null || return 0
		echo "$c${fs:+ f}" >> "$T/wlog.$img"
	done
}
EPIDS=()
for img in "${EIMGS[@]}"; do
	: > "$T/wlog.$img"
	ewriter "$img" &
	EPIDS+=($!)
done
BG+=("${EPIDS[@]}")
for ((i = 0; i < 200; i++)); do
	[ "$(grep -c ' f' "$T"/wlog.* | awk -F: '{ n += $2 } END { print n }')" -ge 15 ] && break
	sleep 0.05
done
sleep 0.0$((RANDOM % 5))   # not always right after an fsync
kill9_daemon
for p in "${EPIDS[@]}"; do
	wait_gone "$p" 20 || fail "writer $p still running 20 s after kill -9"
done
BG=()
# fsync makes every write before it durable, not only its own: what is
# durable is every chunk logged up to the last fsynced one.
for img in "${EIMGS[@]}"; do
	awk '{ c[NR] = $1 } $2 == "f" { last = NR } END { for (i = 1; i <= last; i++) print c[i] }' \
		"$T/wlog.$img" > "$T/dur.$img"
done
verdict=
for img in "${EIMGS[@]}"; do
	rc=0
	"$SECTORFS_IMG" check "$STORE/$img" >"$T/check.out" 2>&1 || rc=$?
	case $rc in
	0) verdict="$verdict $img: clean;" ;;
	1 | 4)
		echo "# check $img after kill -9 exited $rc: $(cat "$T/check.out")"
		rc2=0
		"$SECTORFS_IMG" check --repair "$STORE/$img" >"$T/repair.out" 2>&1 || rc2=$?
		[ $rc2 -eq 1 ] || fail "check --repair $img exited $rc2 (want 1, repaired): $(cat "$T/repair.out")"
		check_clean "$img" "after --repair"
		verdict="$verdict $img: check exit $rc, repaired;" ;;
	*) fail "sectorfs-img check $img after kill -9 exited $rc: $(cat "$T/check.out")" ;;
	esac
done
start_daemon
for img in "${EIMGS[@]}"; do
	dump "$img" "$T/got"
	verify "$img" "$T/got" "$T/src.$img" $ECH "${ELSS[$img]}" "$T/dur.$img"
	echo "# $img: $(wc -l < "$T/wlog.$img") chunks written, $(wc -l < "$T/dur.$img") of them before an fsync; of the others $NEXACT read as written, $NZERO as zeros, $NMIXED mixed"
done
pass "kill -9 during writes:$verdict after remount every write made before an fsync reads back, the rest is data or zeros"
stop_daemon
