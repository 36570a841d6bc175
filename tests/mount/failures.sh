#!/bin/bash
# SPDX-License-Identifier: MIT
# failures.sh - what the daemon does when things go wrong around it: the
# mount pulled away under running I/O, a signal in the middle of a long
# write, a second daemon, an image removed from the store behind its back,
# kill -9 in the middle of writes.  Each case has one defined result:
#
#  a. Unmount with I/O in flight: O_DIRECT dd writers (each write fsynced,
#     conv=fsync) on two images and a reader are running; `fusermount3 -u`
#     fails with "busy" and leaves the mount alone; `fusermount3 -uz`
#     detaches it: writes already under way finish without error, the next
#     open fails (ENOENT, nothing is created under the mount point), and
#     once the writers, the reader and a process holding an image open are
#     gone the daemon exits 0.  Every read the reader made saw the data
#     written before.  Then `sectorfs-img check` is clean (exit 0) on both
#     images, and after remount every write whose dd exited 0 reads back
#     byte for byte, everything else reads as the written data or zeros.
#  b. SIGTERM during a long write (200 MiB, bs=1M, oflag=direct): the
#     daemon exits 0 within 30 s, the mount is gone; dd fails with
#     ENOTCONN/ECONNABORTED, or through io_uring also ECANCELED (a request
#     the kernel was handing to a ring entry as the rings closed), or has
#     finished; after remount the N blocks
#     dd reported written read back exactly, block N (the one in flight)
#     is the pattern or zeros, everything after it zeros; check clean.
#  c. A second daemon on the same store exits non-zero naming the holder
#     ("pid N, mounted at MNT"), mounts nothing, and the first one goes on
#     serving writes.
#  d. An image removed from the store while served, with a descriptor open
#     on it: the next directory listing no longer shows it and stat gives
#     ENOENT (at the latest once the kernel's 1 s entry cache expired);
#     the open descriptor still reads the old data and writes, and what it
#     writes lands in no file of the store; the map is removed; the daemon
#     logs a warning naming it; once the descriptor is closed the daemon
#     holds no deleted file; the other images are untouched.  Only the
#     backing file removed (sidecar kept): the next lookup serves a fresh
#     image of the sidecar's size that reads as zeros, not the old data.
#     Only the sidecar taken away for a moment (ls while it is away) with a
#     descriptor open: writes fsynced afterwards through a new open and
#     through the old descriptor are all there after remount.
#  e. kill -9 in the middle of writes (every third one fsynced) on a thin,
#     a zeroedthick (no zero offload) and an eagerzeroedthick image:
#     `sectorfs-img check` on each is clean, or, if it reports a problem,
#     `check --repair` fixes it (exit 1, then clean); which one happened is
#     printed.  After remount every write made before an fsync (an fsync
#     covers all earlier writes, not only its own) reads back, every other
#     sector reads as written or zeros.  Also kill -9 while the daemon
#     eager-zeroes a new image in the background: check is clean but for a
#     note saying so, --repair finishes it (exit 1, then clean), the image
#     then serves zeros.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd cmp awk comm timeout

requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"

# Processes this test starts in the background, ended by PID at exit if
# still running; each phase empties the list once it has waited for them.
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


# ====================================================================
# a. unmount while I/O is in flight
# ====================================================================
CH=$((256 * 1024))                   # one write; chunk c is at c * CH
NCH=$((32 * M / CH))
sidecar fa1 32M 4kn thin 64K
sidecar fa2 32M 512e zeroedthick 64K
declare -A LSS=([fa1]=4096 [fa2]=512)
for img in fa1 fa2; do head -c $((32 * M)) /dev/urandom > "$T/src.$img"; done
start_daemon
# chunks 0-3 (the first MiB): written and fsynced before; the reader's reference
for img in fa1 fa2; do
	dd if="$T/src.$img" of="$MNT/$img" bs=1M count=1 oflag=direct conv=notrunc,fsync status=none ||
		fail "$img: first MiB not written"
	printf '0\n1\n2\n3\n' > "$T/done.$img.pre"
done
head -c $M "$T/src.fa1" > "$T/ref"

# writer IMG J: chunks 4+J, 6+J, ... each one O_DIRECT dd with conv=fsync;
# a chunk goes into done.IMG.J after its dd exited 0; stops at the first
# failure (conv=nocreat: once the mount is gone, nothing is created there).
writer() {
	local img=$1 j=$2 c
	for ((c = 4 + j; c < NCH; c += 2)); do
		dd if="$T/src.$img" of="$MNT/$img" bs=$CH count=1 skip=$c seek=$c \
			oflag=direct conv=notrunc,nocreat,fsync status=none 2>>"$T/werr.$img.$j" || return 0
		echo $c >> "$T/done.$img.$j"
	done
}
# reader: the first MiB of fa1 over and over, until an open fails.
reader() {
	local n=0
	while dd if="$MNT/fa1" of="$T/rd" bs=1M count=1 iflag=direct status=none 2>>"$T/rerr"; do
		cmp -s "$T/rd" "$T/ref" || echo "read $n: $(cmp "$T/rd" "$T/ref" 2>&1)" >> "$T/reader.bad"
		n=$((n + 1))
		echo $n > "$T/reads"
	done
}
WPIDS=()
for img in fa1 fa2; do
	for j in 0 1; do
		: > "$T/done.$img.$j"
		writer $img $j &
		WPIDS+=($!)
	done
done
reader &
RPID=$!
sleep 120 3<"$MNT/fa2" &             # holds fa2 open until ended
HPID=$!
BG+=("${WPIDS[@]}" "$RPID" "$HPID")
# wait until every writer has made some writes durable
for ((i = 0; i < 200; i++)); do
	min=$(wc -l "$T"/done.fa?.[01] | awk '$2 != "total" { if (m == "" || $1 < m) m = $1 } END { print m }')
	[ "$min" -ge 3 ] && [ -s "$T/reads" ] && break
	sleep 0.05
done
[ "$min" -ge 3 ] && [ -s "$T/reads" ] ||
	fail "writers or reader too slow: $(wc -l "$T"/done.fa?.[01]; cat "$T"/werr.* "$T/rerr" 2>/dev/null)"
running=0
for p in "${WPIDS[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
[ $running -gt 0 ] || fail "test bug: every writer was done before the unmount"
cat "$T"/done.fa?.[01] | wc -l > "$T/before"
rc=0
fusermount3 -u "$MNT" >"$T/u.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "fusermount3 -u succeeded with files open (expected: busy)"
grep -qi busy "$T/u.out" || fail "fusermount3 -u with files open: expected 'busy', got: $(cat "$T/u.out")"
mountpoint -q "$MNT" || fail "mount gone after a refused fusermount3 -u"
kill -0 "$DPID" 2>/dev/null || fail "daemon died after a refused fusermount3 -u"
fusermount3 -uz "$MNT" || fail "fusermount3 -uz failed"
! mountpoint -q "$MNT" || fail "still mounted after fusermount3 -uz"
cat "$T"/done.fa?.[01] | wc -l > "$T/at_uz"
for p in "${WPIDS[@]}"; do
	wait_gone "$p" 20 || fail "writer (pid $p) still runs 20 s after the lazy unmount; under the mount point: $(ls -A "$MNT")"
done
[ -z "$(ls -A "$MNT")" ] || fail "files created under the mount point after the lazy unmount: $(ls -A "$MNT")"
wait_gone $RPID 20 || fail "reader (pid $RPID) still runs 20 s after the lazy unmount"
kill -0 "$DPID" 2>/dev/null || fail "daemon exited while a process (pid $HPID) still held an image open"
kill "$HPID"
wait "$HPID" 2>/dev/null
daemon_exit 30 "the lazy unmount and the last close"
BG=()
before=$(cat "$T/before") at_uz=$(cat "$T/at_uz") after=$(cat "$T"/done.fa?.[01] | wc -l)
for w in fa1.0 fa1.1 fa2.0 fa2.1; do
	# the only error a writer may see: the open after the mount went away
	f="$T/werr.$w"
	if [ ! -f "$f" ] || [ "$(wc -l < "$f")" -ne 1 ] || ! grep -q "failed to open.*No such file or directory" "$f"; then
		fail "writer $w: expected one error, the open after the unmount failing with ENOENT; got: $(cat "$f" 2>/dev/null || echo none)"
	fi
done
[ ! -s "$T/reader.bad" ] || fail "reader saw other data than the fsynced first MiB: $(head -n3 "$T/reader.bad")"
[ "$(wc -l < "$T/rerr")" -eq 1 ] && grep -q "failed to open.*No such file or directory" "$T/rerr" ||
	fail "reader: expected one error, the open after the unmount failing with ENOENT; got: $(cat "$T/rerr")"
pass "unmount under I/O ($running of 4 writers running): fusermount3 -u says busy; -uz detaches, writes already open finish ($((after - at_uz)) completed after it), the next opens get ENOENT, the daemon exits 0 after the last close; $(cat "$T/reads") reads all saw the fsynced data"
for img in fa1 fa2; do check_clean $img "after the lazy unmount"; done
pass "unmount under I/O: sectorfs-img check clean on both images"
start_daemon
for img in fa1 fa2; do
	dump "$img" "$T/got"
	verify "$img" "$T/got" "$T/src.$img" $CH "${LSS[$img]}" "$T"/done.$img.*
	echo "# $img: $(cat "$T"/done.$img.* | wc -l) chunks fsynced; of the others $NEXACT read as written, $NZERO as zeros, $NMIXED mixed"
done
pass "unmount under I/O: after remount all $after writes completed with fsync ($before before the unmount) read back, the rest is data or zeros"
stop_daemon
rm -f "$STORE"/fa1* "$STORE"/fa2* "$STORE"/.sectorfs/fa?.map "$T"/src.fa?

# ====================================================================
# b. SIGTERM during a long write
# ====================================================================
NB=200
sidecar fb 256M 4kn thin 1M
head -c $((NB * M)) /dev/urandom > "$T/src.fb"
start_daemon
dd if="$T/src.fb" of="$MNT/fb" bs=1M count=$NB oflag=direct conv=notrunc 2>"$T/dd.fb" &
DDPID=$!
BG+=("$DDPID")
# signal once 40 MiB have reached the backing file
for ((i = 0; i < 30000; i++)); do
	[ "$(stat -c %b "$STORE/fb")" -ge $((40 * 2048)) ] && break
	kill -0 $DDPID 2>/dev/null || break
done
at=$(($(stat -c %b "$STORE/fb") / 2048))
t0=$(date +%s%N)
kill -TERM "$DPID"
daemon_exit 30 "SIGTERM during a write"
t1=$(date +%s%N)
! mountpoint -q "$MNT" || fail "$MNT still mounted after SIGTERM"
wait_gone $DDPID 10 || fail "dd still running 10 s after the daemon exited"
ddrc=0
wait $DDPID || ddrc=$?
BG=()
out=$(grep -o '^[0-9]*+[0-9]* records out' "$T/dd.fb" | cut -d+ -f1)
[ -n "$out" ] || fail "no record count from dd: $(cat "$T/dd.fb")"
errs="Transport endpoint is not connected|Software caused connection abort"
grep -q "FUSE over io_uring" "$T/daemon.log" && errs="$errs|Operation canceled"
if [ $ddrc -ne 0 ]; then
	grep -qE "$errs" "$T/dd.fb" ||
		fail "dd after SIGTERM: expected ${errs//|/ or }, got: $(cat "$T/dd.fb")"
	how="dd failed after $out MiB: $(grep -oE "$errs" "$T/dd.fb")"
else
	[ "$out" -eq $NB ] || fail "dd exited 0 having written $out of $NB MiB"
	how="dd had finished"
fi
pass "SIGTERM at ~$at MiB of a $NB MiB write: daemon exits 0 in $(((t1 - t0) / 1000000)) ms, mount gone, $how"
check_clean fb "after SIGTERM"
start_daemon
dump fb "$T/got"
for ((b = 0; b < 256; b++)); do
	if ((b < out)); then
		cmp -s -i $((b * M)):$((b * M)) -n $M "$T/got" "$T/src.fb" ||
			fail "fb: MiB $b, written (dd counted it) before SIGTERM, does not read back"
	elif ((b == out && b < NB)) && cmp -s -i $((b * M)):$((b * M)) -n $M "$T/got" "$T/src.fb"; then
		echo "# fb: the write in flight (MiB $b) reads as written"
	elif ! cmp -s -i $((b * M)):0 -n $M "$T/got" /dev/zero; then
		if ((b == out && b < NB)); then
			fail "fb: MiB $b, in flight at SIGTERM, is neither the pattern nor zeros"
		else
			fail "fb: MiB $b, past the $out MiB dd wrote and the one in flight, does not read as zeros"
		fi
	fi
done
pass "SIGTERM: after remount the $out MiB written read back, the rest is zeros; sectorfs-img check clean"
stop_daemon
rm -f "$STORE"/fb* "$STORE"/.sectorfs/fb.map "$T/src.fb" "$T/got"

# ====================================================================
# c. a second daemon on the same store
# ====================================================================
sidecar cc 4M 512n thin 64K
head -c $M /dev/urandom > "$T/src.cc"
start_daemon
rc=0
timeout 20 "$SECTORFS" -f "$STORE" "$MNT2" >"$T/second.out" 2>&1 || rc=$?
[ $rc -ne 124 ] || fail "second daemon on the store hung"
[ $rc -ne 0 ] || fail "second daemon on the same store exited 0"
grep -qF "pid $DPID, mounted at $MNT" "$T/second.out" ||
	fail "second daemon does not name the holder 'pid $DPID, mounted at $MNT': $(cat "$T/second.out")"
! mountpoint -q "$MNT2" || fail "second daemon mounted $MNT2"
kill -0 "$DPID" 2>/dev/null || fail "first daemon died"
dd if="$T/src.cc" of="$MNT/cc" bs=64K seek=16 oflag=direct conv=notrunc,fsync status=none ||
	fail "first daemon no longer serves writes"
dd if="$MNT/cc" of="$T/got" bs=64K skip=16 count=16 iflag=direct status=none
cmp -s "$T/got" "$T/src.cc" || fail "first daemon: write after the refused second daemon does not read back"
pass "second daemon exits $rc naming the holder ($(head -n1 "$T/second.out" | sed "s|$T|\$T|g")); the first goes on serving writes"
stop_daemon
rm -f "$STORE"/cc* "$STORE"/.sectorfs/cc.map

# ====================================================================
# d. an image removed from the store while served
# ====================================================================
sidecar a 8M 4kn thin 64K
sidecar b 4M 512e zeroedthick 64K
sidecar c 4M 512n thin 64K
head -c $((8 * M)) /dev/urandom > "$T/src.d"
start_daemon
for img in a b c; do
	dd if="$T/src.d" of="$MNT/$img" bs=1M count=2 oflag=direct conv=notrunc,fsync status=none ||
		fail "$img: write failed"
done
dd if="$MNT/c" of="$T/c.before" bs=1M iflag=direct status=none
exec 3<>"$MNT/a" 4<"$MNT/a"
log_mark
rm "$STORE/a" "$STORE/a.json"
ls "$MNT" > "$T/ls" || fail "ls $MNT failed after removing a from the store"
grep -qx a "$T/ls" && fail "ls $MNT still lists a after STORE/a and STORE/a.json were removed: $(tr '\n' ' ' < "$T/ls")"
grep -qx c "$T/ls" || fail "ls $MNT no longer lists c: $(tr '\n' ' ' < "$T/ls")"
for ((i = 0; i < 30; i++)); do
	err=$(stat "$MNT/a" 2>&1) && { sleep 0.1; continue; }
	break
done
case "$err" in
*"No such file or directory"*) ;;
*) fail "stat $MNT/a after a was removed from the store: expected ENOENT, got: $err" ;;
esac
echo "# stat MNT/a gave ENOENT after $((i * 100)) ms"
[ ! -e "$STORE/.sectorfs/a.map" ] || fail "STORE/.sectorfs/a.map still there after a was removed"
log_new | grep -i warn | grep -qE "(^|[ '\"/])a([:'\" ,]|$)" ||
	fail "no warning naming a in the daemon log; new lines: $(log_new)"
# the open descriptors: fd 3 writes MiB 0 (new data, fsynced) and reads MiB 1 (old);
# fd 4 reads MiB 0 (the write) -- each dd moves its descriptor's offset.
ls -A "$STORE" > "$T/store.before"
dd if="$T/src.d" bs=1M skip=4 count=1 oflag=direct conv=fsync status=none >&3 ||
	fail "write through the descriptor open on the removed a failed"
dd of="$T/got" bs=1M count=1 iflag=direct status=none <&3 ||
	fail "read through the descriptor open on the removed a failed"
cmp -s "$T/got" <(dd if="$T/src.d" bs=1M skip=1 count=1 status=none) ||
	fail "the descriptor open on the removed a does not read a's old data (MiB 1)"
dd of="$T/got" bs=1M count=1 iflag=direct status=none <&4 || fail "read through fd 4 on the removed a failed"
cmp -s "$T/got" <(dd if="$T/src.d" bs=1M skip=4 count=1 status=none) ||
	fail "the write through the descriptor on the removed a does not read back through another descriptor"
ls -A "$STORE" | diff "$T/store.before" - >/dev/null || fail "the store changed by writing to the removed a: $(ls -A "$STORE")"
exec 3>&- 4<&-
sleep 0.2
[ ! -e "$STORE/a" ] && [ ! -e "$STORE/a.json" ] && [ ! -e "$STORE/.sectorfs/a.map" ] ||
	fail "after closing the descriptors: $(ls -A "$STORE" "$STORE/.sectorfs" | tr '\n' ' ')"
deleted=$(ls -l "/proc/$DPID/fd" 2>/dev/null | grep -c '(deleted)')
[ "$deleted" -eq 0 ] ||
	not_ok "the daemon still holds $deleted deleted file(s) after the last descriptor on the removed a was closed: $(ls -l "/proc/$DPID/fd" | grep '(deleted)' | sed 's/.*-> //' | tr '\n' ' ')"
dd if="$MNT/c" of="$T/got" bs=1M iflag=direct status=none
cmp -s "$T/got" "$T/c.before" || fail "c changed when a was removed from the store"
pass "image a removed from the store: gone from ls and stat (ENOENT), the open descriptor reads old data and writes, the map is removed, a warning names it, c untouched"

# only the backing file of b removed; its sidecar declares it again
rm "$STORE/b"
ls "$MNT" > "$T/ls"
grep -qx b "$T/ls" || fail "ls $MNT does not list b after only its backing file was removed (its sidecar declares it): $(tr '\n' ' ' < "$T/ls")"
[ "$(stat_val %s "$MNT/b")" -eq $((4 * M)) ] || fail "b: size $(stat_val %s "$MNT/b"), the sidecar says 4M"
dd if="$MNT/b" of="$T/got" bs=1M iflag=direct status=none || fail "reading the new b failed"
[ "$(stat_val %s "$T/got")" -eq $((4 * M)) ] || fail "b: read $(stat_val %s "$T/got") bytes, the sidecar says 4M"
cmp -s "$T/got" <(head -c $((4 * M)) /dev/zero) ||
	fail "b, served again from its sidecar after its backing file was removed, does not read as zeros: $(cmp "$T/got" <(head -c $((4 * M)) /dev/zero) 2>&1)"
[ "$(stats_key b allocated_blocks)" = 0 ] || fail "b: allocated_blocks $(stats_key b allocated_blocks) in the fresh image"
[ -f "$STORE/b" ] && [ -f "$STORE/.sectorfs/b.map" ] || fail "b: no new backing file or map: $(ls -A "$STORE" "$STORE/.sectorfs" | tr '\n' ' ')"
dd if="$MNT/c" of="$T/got" bs=1M iflag=direct status=none
cmp -s "$T/got" "$T/c.before" || fail "c changed when b's backing file was removed"
pass "backing file of b removed, sidecar kept: b is served again as a fresh 4M image of zeros, the old data gone, c untouched"

# only the sidecar of s taken away for a moment (as an editor that does not
# save in place does), with s open: s leaves the namespace while the
# sidecar is away and is served again when it is back.  Writes made and
# fsynced through the mount afterwards, and through the descriptor still
# open, are all durable: fsync makes them so, whichever way they came.
sidecar s 4M 4kn thin 64K
dd if="$T/src.d" of="$MNT/s" bs=64K count=2 oflag=direct conv=notrunc,fsync status=none || fail "s: write failed"
exec 5<>"$MNT/s"
mv "$STORE/s.json" "$T/s.json.away"
ls "$MNT" | grep -qx s && fail "ls $MNT still lists s while its sidecar is away"
mv "$T/s.json.away" "$STORE/s.json"
ls "$MNT" | grep -qx s || fail "ls $MNT does not list s once its sidecar is back"
# block 2 through a new open, block 3 through the descriptor open all along
dd if="$T/src.d" of="$MNT/s" bs=64K count=1 skip=2 seek=2 oflag=direct conv=notrunc,fsync status=none ||
	fail "s: write through a new open failed"
dd if="$T/src.d" bs=64K count=1 skip=3 seek=3 oflag=direct conv=notrunc,fsync status=none >&5 ||
	fail "s: write through the descriptor held open failed"
exec 5>&-
stop_daemon
start_daemon
dd if="$MNT/s" of="$T/got" bs=64K count=4 iflag=direct status=none
lost=
for blk in 0 1 2 3; do
	cmp -s -i $((blk * 65536)):$((blk * 65536)) -n 65536 "$T/got" "$T/src.d" || lost="$lost $blk"
done
if [ -n "$lost" ]; then
	not_ok "s: fsynced 64K block(s)$lost lost after a clean unmount: s was held open (fd 5) while its sidecar was moved away (ls) and back (ls); block 2 was written with dd conv=fsync through a new open, block 3 with dd conv=fsync through fd 5; after remount they read as $(for blk in $lost; do cmp -s -i $((blk * 65536)):0 -n 65536 "$T/got" /dev/zero && echo -n "zeros " || echo -n "other data "; done)(map: $("$SECTORFS_IMG" map "$STORE/s" 2>&1 | awk 'NR > 1 && $3 == "true" { printf "%s+%s ", $1, $2 }')allocated)"
else
	pass "sidecar of s away for a moment while s was open: every write fsynced through a new open and through the old descriptor is there after remount"
fi
stop_daemon
for img in b c s; do check_clean $img "after the removals"; done
rm -f "$STORE"/[abcs] "$STORE"/[abcs].json "$STORE"/.sectorfs/[abcs].map

# ====================================================================
# e. kill -9 in the middle of writes
# ====================================================================
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

# kill -9 while the daemon eager-zeroes a new image in the background
sidecar ezbig 512M 512n eagerzeroedthick 1M false
start_daemon
stat "$MNT/ezbig" > /dev/null || fail "ezbig is not served"
for ((i = 0; i < 3000; i++)); do
	[ "$(stats_key ezbig allocated_blocks)" -gt 0 ] && break
	sleep 0.01
done
tr -d ' \n' < "$MNT/.stats/ezbig.json" | grep -q '"zeroing":"running"' ||
	fail "test bug: ezbig was zeroed before the eager zeroing could be interrupted"
kill9_daemon
rc=0
"$SECTORFS_IMG" check "$STORE/ezbig" >"$T/check-ez.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "check after kill -9 during eager zeroing exited $rc (want 0, with a note): $(cat "$T/check-ez.out")"
grep -q "note: eager zeroing not finished" "$T/check-ez.out" ||
	fail "check after kill -9 during eager zeroing does not note it: $(cat "$T/check-ez.out")"
sed "s|$T|\$T|g; s/^/# check: /" "$T/check-ez.out"
rc=0
"$SECTORFS_IMG" check --repair "$STORE/ezbig" >"$T/repair.out" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "check --repair ezbig exited $rc (want 1, repaired): $(cat "$T/repair.out")"
check_clean ezbig "after --repair"
grep -q "note: eager zeroing" "$T/check.out" && fail "after --repair check still notes unfinished zeroing: $(cat "$T/check.out")"
start_daemon
[ "$(stats_key ezbig allocated_blocks)" = 512 ] || fail "ezbig: allocated_blocks $(stats_key ezbig allocated_blocks) after repair, want 512"
dd if="$MNT/ezbig" bs=1M iflag=direct status=none | cmp -s - <(head -c $((512 * M)) /dev/zero) || fail "ezbig does not read as zeros after repair"
pass "kill -9 during eager zeroing: check exits 0 with a note ($(grep -m1 note "$T/check-ez.out" | sed 's/.*note: //; s/:.*//')), --repair exits 1, then clean; the image reads as zeros"
stop_daemon

fail_if_not_ok
