#!/bin/bash
# SPDX-License-Identifier: MIT
# profile-stop.sh - SIGTERM ends the daemon within a second even while a
# device profile holds requests, and those requests fail with EIO.
#
# Two images with profiles at the limits of sectorfs.json(5): "w", whose
# 4 KiB writes take 20 s, and "f", whose flush takes 60 s.  A 4 KiB
# O_DIRECT write to w and a write + fsync to f are held by the model when
# the daemon gets SIGTERM.  Proves: the daemon exits 0 within 2 s (it
# exits in about 0.1 s; before the model's waits could be stopped it
# waited out the 20 and 60 s), the mount is gone, both callers get
# "Input/output error" (the requests in flight fail), and after a restart
# f's block (written before its fsync) reads back, w's block reads as
# written or as zeros (never anything else), and sectorfs-img check is
# clean: what was completed was flushed.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd
requires_cmd timeout cmp
IMG_TOOL="$top_builddir/tools/sectorfs-img"

cat > "$T/slowwrite.json" <<'EOF'
{ "read": [{"size": "4K", "us": 10}],
  "write": [{"size": "4K", "us": 20000000}, {"size": "64M", "us": 60000000}], "flush_us": 0 }
EOF
cat > "$T/slowflush.json" <<'EOF'
{ "read": [{"size": "4K", "us": 10}], "write": [{"size": "4K", "us": 10}], "flush_us": 60000000 }
EOF
printf '{ "size": "8M", "sector": "4kn", "provisioning": "thin", "profile": "%s" }\n' "$T/slowwrite.json" \
	> "$STORE/w.json"
printf '{ "size": "8M", "sector": "4kn", "provisioning": "thin", "profile": "%s" }\n' "$T/slowflush.json" \
	> "$STORE/f.json"
head -c 4096 /dev/urandom > "$T/w.src"
head -c 4096 /dev/urandom > "$T/f.src"
start_daemon

dd if="$T/w.src" of="$MNT/w" bs=4k count=1 oflag=direct conv=notrunc 2>"$T/dd.w" &
WPID=$!
dd if="$T/f.src" of="$MNT/f" bs=4k count=1 oflag=direct conv=notrunc,fsync 2>"$T/dd.f" &
FPID=$!
on_exit "kill -9 $WPID $FPID"
sleep 1
kill -0 $WPID 2>/dev/null || fail "the write to w was not held by its profile: $(cat "$T/dd.w")"
kill -0 $FPID 2>/dev/null || fail "the fsync of f was not held by its profile: $(cat "$T/dd.f")"
[ "$(stats_key f flushes)" = 0 ] || fail "f's fsync was counted before it completed"

t0=$(date +%s%N)
kill -TERM "$DPID"
STOP_TIMEOUT=2 wait_daemon "SIGTERM with a 20 s write and a 60 s flush held"
ms=$((($(date +%s%N) - t0) / 1000000))
! mountpoint -q "$MNT" || fail "$MNT still mounted after SIGTERM"
pass "SIGTERM with a 20 s write and a 60 s flush held: the daemon exits 0 in $ms ms"

for x in w f; do
	pid=$WPID
	[ $x = f ] && pid=$FPID
	wait_gone $pid 5 || fail "dd on $x still running 5 s after the daemon exited"
	rc=0
	wait $pid || rc=$?
	[ $rc -ne 0 ] || fail "dd on $x succeeded although its request was in flight"
	grep -q "Input/output error" "$T/dd.$x" || fail "dd on $x: expected Input/output error, got: $(cat "$T/dd.$x")"
done
pass "the held write and fsync fail with Input/output error"

step "check after SIGTERM" "$IMG_TOOL" check "$STORE"
start_daemon
dd if="$MNT/f" of="$T/f.got" bs=4k count=1 iflag=direct status=none
cmp -s "$T/f.got" "$T/f.src" || fail "f: the block written before its fsync does not read back"
dd if="$MNT/w" of="$T/w.got" bs=4k count=1 iflag=direct status=none
if cmp -s "$T/w.got" "$T/w.src"; then
	how="as written"
elif cmp -s "$T/w.got" <(head -c 4096 /dev/zero); then
	how="as zeros"
else
	fail "w: the block whose write failed reads as neither its data nor zeros"
fi
pass "after a restart f's block reads back, w's (its write failed) reads $how; check clean"
stop_daemon
