#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - the daemon under valgrind through a short mount workload.
#
#   tests/valgrind/run.sh          (top_builddir/top_srcdir from the
#                                   environment, else this checkout)
#
# Starts fs/sectorfs -f under
#   valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
#            --error-exitcode=99 --track-fds=no
# with the pid file / readiness logic of tests/mount/lib.sh (up to 60 s:
# valgrind is slow to start), runs a workload that reaches every FUSE
# operation the daemon has, unmounts, and requires the daemon (that is,
# valgrind) to exit 0: no invalid read or write, no use of uninitialised
# memory, no definitely or indirectly lost block.  Valgrind's summary is
# printed; on failure its whole log is.
#
# Workload: images declared by sidecars (512e thin with 1M blocks, 4kn
# zeroedthick with 64K blocks, a small eagerzeroedthick one zeroed by
# writing at open); GNU dd O_DIRECT writes and reads (first writes,
# overwrites, 512-byte read-modify-writes on 512e, a misaligned write
# refused on 4kn, a write past the end refused), conv=fsync and
# conv=fdatasync, four writers at once on the same new blocks; an image created in the mount, grown with truncate,
# written, fallocated (allocate, punch hole, zero range), renamed and
# unlinked; shrinking past data refused, past nothing done; the .stats text,
# JSON and metrics files read (the recent lists and the metrics holding the
# read-modify-write), a
# stats reset and a refused bad write to a stats file; the user.sectorfs.*
# xattrs; directory listings and stat.  Then a second run under valgrind
# (-o nostats) reopens the images from their maps, checks the data is
# still there, writes, and ends with SIGTERM instead of an unmount.
#
# Exit 77 (skip) without valgrind, /dev/fuse, fusermount3 or GNU dd, or
# when the daemon was built with AddressSanitizer (valgrind cannot run it).

# Under valgrind a daemon served over io_uring answers no request (its
# first one waits for ever), so this daemon always runs over /dev/fuse;
# nor does the /dev/fuse event loop, whose reads of the device are
# io_uring operations valgrind does not follow, so it runs with a thread
# per request (-o serve=threads).  The event loops run under ASan+UBSan
# in make distcheck.
SECTORFS_IO_URING=off
SECTORFS_SERVE=threads
. "$(dirname "$0")/../mount/lib.sh"
requires_fuse
requires_gnu_dd
command -v valgrind >/dev/null 2>&1 || skip "needs valgrind"
if grep -q __asan_init "$SECTORFS" 2>/dev/null; then
	skip "$SECTORFS is built with AddressSanitizer; valgrind needs a build without it"
fi

K=1024
M=$((1024 * K))
READY_TIMEOUT=60                 # valgrind is slow to start
STOP_TIMEOUT=120                 # and checks for leaks at exit
FAIL_LOGS="$T/valgrind.log $T/valgrind2.log"   # printed when the test fails

# start_vg_daemon LOG [sectorfs options...]: lib.sh's start_daemon under
# valgrind, which exits 99 when it found errors or definite/indirect leaks.
start_vg_daemon() {
	VGLOG=$1
	shift
	DAEMON_WRAPPER=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
		--error-exitcode=99 --track-fds=no --num-callers=30 --log-file="$VGLOG")
	start_daemon "$@"
}

# summary: valgrind's error and leak lines.
summary() {
	grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|in use at exit|All heap blocks were freed' \
		"$VGLOG" | sed 's/^==[0-9]*== */valgrind: /'
}

# ok_run WHAT CMD...: CMD must succeed.
ok_run() {
	local what=$1
	shift
	"$@" >"$T/cmd.out" 2>&1 || fail "$what failed: $(cat "$T/cmd.out")"
}

# dd_w IMG OFF LEN [dd conv]: one O_DIRECT write of random bytes.
dd_w() {
	ok_run "write $1 @$2+$3" dd if="$T/pat" of="$MNT/$1" bs="$3" count=1 seek="$2" \
		oflag=direct,seek_bytes conv=notrunc${4:+,$4} status=none
}

# dd_r IMG OFF LEN: one O_DIRECT read, to stdout.
dd_r() {
	dd if="$MNT/$1" bs="$3" count=1 skip="$2" iflag=direct,skip_bytes status=none
}

head -c $((2 * M)) /dev/urandom > "$T/pat" || fail "cannot make the pattern"

sidecar e512 16M 512e thin 1M
sidecar k4 16M 4kn zeroedthick 64K
sidecar ez 4M 512n eagerzeroedthick 256K false
start_vg_daemon "$T/valgrind.log"
pass "daemon up under valgrind"

# ---- I/O on the declared images ----
dd_w e512 0 1M                         # first write of a whole block
dd_w e512 $((4 * M + 4 * K)) 32K       # first write inside a block: zeroing
dd_w e512 $((4 * M + 4 * K)) 4K        # overwrite
dd_w e512 $((8 * M + 512)) 512         # 512 B on 512e: read-modify-write
dd_w e512 $((12 * M)) 8K fsync
[ "$(dd_r e512 $((4 * M + 4 * K)) 4K | cmp - <(head -c 4096 "$T/pat") && echo same)" = same ] ||
	fail "e512: read back differs"
dd_r e512 0 2M | cmp -s - <(head -c $M "$T/pat"; head -c $M /dev/zero) ||
	fail "e512: first 2 MiB differ"
dd_w k4 0 64K
dd_w k4 $((1 * M + 8 * K)) 4K fdatasync
dd_w ez 0 4K
dd_r k4 0 1M > /dev/null || fail "k4: read failed"
dd_r ez 0 4M > /dev/null || fail "ez: read failed"
expect_errno "Invalid argument" dd if="$T/pat" of="$MNT/k4" bs=512 count=1 oflag=direct conv=notrunc status=none
expect_errno "No space left" dd if="$T/pat" of="$MNT/e512" bs=4K count=1 seek=$((16 * M)) \
	oflag=direct,seek_bytes conv=notrunc status=none
ok_run "sync e512" sync "$MNT/e512"
# Four writers at once, racing on first writes to the same blocks.
pids=()
for i in 0 1 2 3; do
	dd if="$T/pat" of="$MNT/e512" bs=4K count=64 seek=$((i * 64 + 1536)) oflag=direct conv=notrunc \
		status=none 2>"$T/par$i.err" &
	pids+=($!)
done
for i in 0 1 2 3; do
	wait "${pids[$i]}" || fail "parallel writer $i failed: $(cat "$T/par$i.err")"
done
pass "O_DIRECT writes and reads, fsync, fdatasync, refused I/O, 4 parallel writers"

# ---- namespace ----
ok_run "create" touch "$MNT/new"
ok_run "grow new" truncate -s 8M "$MNT/new"
dd_w new $((1 * M)) 64K
ok_run "fallocate new" fallocate -o $((2 * M)) -l 1M "$MNT/new"
ok_run "punch hole" fallocate -p -o $((1 * M)) -l 1M "$MNT/new"
ok_run "zero range" fallocate -z -o $((2 * M)) -l 4K "$MNT/new"
dd_w new $((6 * M)) 64K
expect_errno "Invalid argument" truncate -s 4M "$MNT/new"
ok_run "shrink what holds nothing" truncate -s 7M "$MNT/new"
ok_run "rename" mv "$MNT/new" "$MNT/renamed"
if [ ! -e "$MNT/renamed" ] || [ -e "$MNT/new" ]; then fail "rename did not show"; fi
ok_run "stat" stat "$MNT/renamed" "$MNT/e512"
ok_run "ls" ls -la "$MNT" "$MNT/.stats"
ok_run "getfattr" getfattr -d -m - "$MNT/e512"
ok_run "unlink" rm "$MNT/renamed"
[ ! -e "$MNT/renamed" ] || fail "unlink did not show"
expect_errno "" touch "$MNT/bad.json"
pass "create, truncate, fallocate (allocate, punch, zero), rename, unlink, xattrs"

# ---- stats ----
ok_run "stats text" cat "$MNT/.stats/e512"
ok_run "stats json" cat "$MNT/.stats/e512.json" "$MNT/.stats/k4.json" "$MNT/.stats/ez"
ok_run "stats metrics" cat "$MNT/.stats/metrics"
grep -q '^sectorfs_rmw_writes_total{image="e512"} [1-9]' "$MNT/.stats/metrics" || fail "metrics: no rmw write of e512"
grep -q '"rmw_recent":\[{' "$MNT/.stats/e512.json" || fail "e512.json: the rmw write is not in rmw_recent"
[ "$(stats_key e512 writes)" -ge 5 ] || fail "e512: writes counter is $(stats_key e512 writes)"
ok_run "stats reset" bash -c "echo reset > '$MNT/.stats/e512'"
[ "$(stats_key e512 writes)" = 0 ] || fail "e512: writes after reset is $(stats_key e512 writes)"
expect_errno "Invalid argument" bash -c "printf nonsense > '$MNT/.stats/k4'"
pass ".stats read, reset, bad write refused"

stop_daemon
summary
pass "valgrind: no errors, no definite or indirect leaks; daemon exited 0 after unmount"

# ---- again: reopen the images from their maps, then end with SIGTERM ----
start_vg_daemon "$T/valgrind2.log" -o nostats
dd_r e512 0 1M | cmp -s - <(head -c $M "$T/pat") || fail "e512: data not there after remount"
dd_w k4 $((2 * M)) 64K fsync
[ ! -e "$MNT/.stats" ] || fail "-o nostats still shows .stats"
kill -TERM "$DPID"
wait_daemon SIGTERM
summary
! mountpoint -q "$MNT" || fail "SIGTERM left $MNT mounted"
pass "valgrind: reopen from the maps, -o nostats, SIGTERM: no errors, no leaks; daemon exited 0"
