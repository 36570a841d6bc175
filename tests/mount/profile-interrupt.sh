#!/bin/bash
# SPDX-License-Identifier: MIT
# profile-interrupt.sh - a process killed while a device profile holds its
# request goes at once: the kernel sends the daemon a FUSE interrupt and
# the model's wait for that request ends.
#
# An image whose profile takes 20 s per 4 KiB write and 60 s per flush
# (the limits of sectorfs.json(5)).  A process waiting in fsync, then one
# waiting in a 4 KiB O_DIRECT write, is killed with SIGKILL after a
# second.  Proves: each is gone within 2 s (a process in a FUSE request
# the daemon has taken cannot die before the reply: before the wait could
# end early, the killed fsync stayed in D state for the whole 60 s); a
# wait whose caller is alive is not cut by the other's interrupt (a
# second write, started before the kill and left alone, is still held
# after it); the daemon serves on (a read returns what the first write
# wrote) and exits 0 at the unmount.

. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout python3

cat > "$T/slow.json" <<'EOF'
{ "read": [{"size": "4K", "us": 10}],
  "write": [{"size": "4K", "us": 20000000}, {"size": "64M", "us": 60000000}], "flush_us": 60000000 }
EOF
for x in a b; do
	printf '{ "size": "8M", "sector": "4kn", "provisioning": "thin", "profile": "%s" }\n' "$T/slow.json" \
		> "$STORE/$x.json"
done
start_daemon

# held PID WHAT: PID is still in its request 1 s after it started
held() {
	sleep 1
	kill -0 "$1" 2>/dev/null || fail "$2 was not held by the profile"
}

# killed_goes PID WHAT: SIGKILL PID; it must be gone within 2 s
killed_goes() {
	local t0 ms
	t0=$(date +%s%N)
	kill -9 "$1"
	wait_gone "$1" 2 || fail "$2: still there 2 s after SIGKILL ($(ps -o stat= -p "$1"))"
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait "$1" 2>/dev/null
	pass "$2: killed with SIGKILL, gone in $ms ms"
}

# an fsync held 60 s
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' "$MNT/a" &
P=$!
on_exit "kill -9 $P"
held $P "the fsync"
killed_goes $P "a process waiting 60 s in fsync"

# a write held 20 s, and another one on b left alone (python3 itself in the background: the
# pid killed is the one in the request)
WRITE4K='import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
m = mmap.mmap(-1, 4096)
m.write(b"sectorfs" * 512)
os.pwrite(fd, m, 0)'
python3 -c "$WRITE4K" "$MNT/b" &
KEEP=$!
on_exit "kill -9 $KEEP"
python3 -c "$WRITE4K" "$MNT/a" &
P=$!
on_exit "kill -9 $P"
held $P "the write"
killed_goes $P "a process waiting 20 s in a 4 KiB write"
sleep 0.5
kill -0 $KEEP 2>/dev/null || fail "the write of a process that was not killed ended with the other's interrupt"
pass "a write whose caller lives is still held after another's interrupt"
kill -9 $KEEP
wait_gone $KEEP 2 || fail "the second writer did not go either"

[ "$(head -c 8 "$MNT/a")" = sectorfs ] || fail "a does not read back what the killed write wrote"
stop_daemon
pass "the daemon serves on and exits 0 at the unmount"
