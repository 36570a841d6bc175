#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon.sh - the daemon's life cycle: readiness, the store lock, signals,
# the command line.
#
# Proves: the pid file appears only once the mount is up (checked while
# the daemon is slowed down by creating 200 declared images before mounting),
# in the foreground and in the background (there, before sectorfs returns;
# tests/mount/pidfile.sh has more), and holds the daemon's own pid;
# a second daemon on the same store exits non-zero naming the holder as
# the lock file does ("pid N, mounted at ..."), leaves its mount point
# unmounted and the holder's lock and mount alone; SIGTERM and SIGINT each
# unmount cleanly, the daemon exits 0 and data written (no fsync) just
# before the signal is there after remount; --help exits 0 and names
# sector=, provisioning=, block_size=, nostats, nonempty; bad command lines exit
# non-zero with a message saying what is wrong; -o nostats removes .stats.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))
MNT2="$T/mnt2"
mkdir -p "$MNT2"
on_exit "mountpoint -q $MNT2 && fusermount3 -uz $MNT2"   # if a daemon that should fail mounted it

# sum FILE LEN: sha256 of the first LEN bytes (64 KiB reads).
sum() { dd if="$1" bs=64K count=$(($2 / 65536)) status=none | sha256sum | cut -d' ' -f1; }


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
# Creating declared images (each map and backing file made durable) keeps
# the daemon busy between opening the store and mounting: the window a
# premature pid file shows in.  (Eager zeroing no longer does: it runs in
# the background, tests/mount/eager-zeroing-*.sh.)
for ((i = 1; i <= 200; i++)); do sidecar "slow$i" 64K 512n thin 64K; done

# ---- readiness, foreground ----
rm -f "$T/pid"
"$SECTORFS" -f -o pidfile="$T/pid" "$STORE" "$MNT" 2>>"$T/daemon.log" &
DPID=$!
early=0 ready=0
for ((i = 0; i < 3000; i++)); do
	if [ -e "$T/pid" ]; then
		mountpoint -q "$MNT" || fail "pid file exists but $MNT is not mounted yet"
		ready=1
		break
	fi
	kill -0 "$DPID" 2>/dev/null || { wait "$DPID"; fail "daemon exited with $? before it was ready"; }
	mountpoint -q "$MNT" || early=$((early + 1))
	sleep 0.01
done
[ $ready -eq 1 ] || fail "no pid file after 30 s"
[ "$(cat "$T/pid")" = "$DPID" ] || fail "pid file says $(cat "$T/pid"), the daemon is $DPID"
[ "$(cat "/proc/$DPID/comm")" = sectorfs ] || fail "pid $DPID is $(cat "/proc/$DPID/comm"), not sectorfs"
[ "$(stat -c %s "$MNT/slow200")" = 65536 ] || fail "slow200 not served once ready"
pass "foreground: pid file appears only with the mount up ($early polls saw neither), holds the daemon's pid $DPID"

# ---- a second daemon on the same store ----
holder="pid $DPID, mounted at $MNT"
[ "$(lock_text)" = "$holder" ] || fail "lock file says '$(lock_text)', expected '$holder'"
for attempt in 1 2; do
	rc=0
	timeout 20 "$SECTORFS" -f "$STORE" "$MNT2" >"$T/second.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || fail "second daemon hung"
	[ $rc -ne 0 ] || fail "second daemon on the same store exited 0"
	! mountpoint -q "$MNT2" || fail "second daemon left $MNT2 mounted"
	mountpoint -q "$MNT" || fail "second daemon unmounted the first one"
	kill -0 "$DPID" || fail "first daemon died"
	[ "$(stat -c %s "$MNT/a")" = $((4 * M)) ] || fail "first daemon no longer serves a"
	if grep -qF "$holder" "$T/second.out"; then
		pass "daemon $((attempt + 1)) on the store exits $rc, mnt2 unmounted: $(sed "s|$T|\$T|g" "$T/second.out")"
	elif [ $attempt -eq 1 ]; then
		fail "second daemon: message does not name the holder '$holder': $(cat "$T/second.out")"
	else
		not_ok "daemon $((attempt + 1)) on the store does not name the holder '$holder': $(cat "$T/second.out")"
	fi
	[ "$(lock_text)" = "$holder" ] ||
		not_ok "after refused daemon $((attempt + 1)) the lock file says '$(lock_text)', expected '$holder'"
done
stop_daemon
rm "$STORE"/slow* "$STORE"/.sectorfs/slow*

# ---- readiness, background (no -f) ----
rm -f "$T/pid"
rc=0
timeout 30 "$SECTORFS" -o pidfile="$T/pid" "$STORE" "$MNT" 2>>"$T/daemon.log" || rc=$?
[ -s "$T/pid" ] || fail "sectorfs in the background returned ($rc) before writing its pid file"
DPID=$(cat "$T/pid")   # for lib.sh's cleanup
[ $rc -eq 0 ] || fail "sectorfs in the background exited $rc"
mountpoint -q "$MNT" || fail "sectorfs returned but $MNT is not mounted"
[ "$(cat "/proc/$DPID/comm" 2>/dev/null)" = sectorfs ] || fail "pid file says $DPID, which is not a running sectorfs"
[ "$(lock_text)" = "pid $DPID, mounted at $MNT" ] || fail "lock file says '$(lock_text)', daemon is $DPID"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_gone "$DPID" 10 || fail "background daemon $DPID still running 10 s after unmount"
DPID=
pass "background: mounted and pid file written when sectorfs returns; pid file and lock name the daemon itself"

# ---- signals ----
# Background jobs of a script start with SIGINT ignored, and libfuse keeps
# an ignored signal ignored: start the daemon with SIGINT at its default.
cat > "$T/sectorfs-sigdfl" <<EOF
#!/bin/sh
exec env --default-signal=INT "$SECTORFS" "\$@"
EOF
chmod +x "$T/sectorfs-sigdfl"
REAL_SECTORFS=$SECTORFS
SECTORFS="$T/sectorfs-sigdfl"
for sig in TERM INT; do
	if [ $sig = TERM ]; then off=0; else off=$((2 * M)); fi
	start_daemon
	dd if=/dev/urandom of="$T/data" bs=1M count=1 status=none
	dd if="$T/data" of="$MNT/a" bs=64K seek=$((off / 65536)) conv=notrunc status=none ||
		fail "write before SIG$sig failed"
	want=$(sum "$T/data" $M)
	# SIGTERM with the image still open: the mount is busy, the daemon must not hang
	[ $sig = TERM ] && exec 3<"$MNT/a"
	kill -s "$sig" "$DPID"
	wait_gone "$DPID" 10 || fail "daemon still running 10 s after SIG$sig"
	rc=0
	wait "$DPID" || rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "daemon exited $rc after SIG$sig"
	! mountpoint -q "$MNT" || fail "$MNT still mounted after SIG$sig"
	[ $sig = TERM ] && exec 3<&-
	start_daemon
	got=$(dd if="$MNT/a" bs=64K skip=$((off / 65536)) count=16 status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "data written before SIG$sig is not there after remount"
	stop_daemon
	pass "SIG$sig: clean unmount$([ $sig = TERM ] && echo ' (image held open)'), exit 0, unsynced data there after remount"
done
SECTORFS=$REAL_SECTORFS

# ---- --help, --version ----
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

# ---- -o nostats ----
start_daemon -o nostats
ls -a "$MNT" | grep -q '^\.stats$' && fail "ls -a shows .stats with -o nostats"
[ ! -e "$MNT/.stats" ] || fail "$MNT/.stats exists with -o nostats"
[ ! -e "$MNT/.stats/a.json" ] || fail "$MNT/.stats/a.json exists with -o nostats"
[ "$(stat -c %s "$MNT/a")" = $((4 * M)) ] || fail "image a not served with -o nostats"
stop_daemon
start_daemon
[ -f "$MNT/.stats/a.json" ] || fail ".stats/a.json missing without nostats"
stop_daemon
pass "-o nostats removes .stats (and it is back without it)"

fail_if_not_ok
