#!/bin/bash
# SPDX-License-Identifier: MIT
# daemon-signals.sh - SIGTERM (with an image held open) and SIGINT each
# unmount cleanly, the daemon exits 0, and data written (no fsync) just
# before the signal is there after remount.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd timeout sha256sum

M=$((1024 * 1024))

# sum FILE LEN: sha256 of the first LEN bytes (64 KiB reads).
sum() { dd if="$1" bs=64K count=$(($2 / 65536)) status=none | sha256sum | cut -d' ' -f1; }

sidecar a 4M 512n thin 64K
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
