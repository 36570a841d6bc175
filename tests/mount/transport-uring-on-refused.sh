#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-uring-on-refused.sh - -o io_uring=on refuses to start where the
# kernel gives no FUSE over io_uring.
#
# Proves: where the kernel has no fuse.enable_uring, -o io_uring=on exits
# non-zero saying there is no FUSE over io_uring; with it N, it exits
# non-zero (not hanging) with a message naming the module parameter and
# leaves no mount.  Skipped with the parameter Y (.ci/run's io_uring pass).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

[ "${SECTORFS_IO_URING:-}" != on ] || skip "the io_uring pass: $PARAM is Y"
requires_uring_param none N
TRANSPORT_OPTS=()

rc=0
if [ "$(uring_param)" = none ]; then
	"$SECTORFS" -f -o io_uring=on "$STORE" "$MNT" >"$T/on.out" 2>&1 || rc=$?
	[ $rc -ne 0 ] && grep -q "no FUSE over io_uring" "$T/on.out" ||
		fail "-o io_uring=on without kernel support: exit $rc, $(cat "$T/on.out")"
	pass "no FUSE over io_uring in the kernel: on refuses"
	exit 0
fi
timeout 20 "$SECTORFS" -f -o io_uring=on "$STORE" "$MNT" >"$T/on.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "-o io_uring=on with $PARAM N: exit $rc"
grep -q "enable_uring" "$T/on.out" || fail "-o io_uring=on with $PARAM N: the message does not name the parameter: $(cat "$T/on.out")"
! mountpoint -q "$MNT" || fail "-o io_uring=on with $PARAM N left a mount"
pass "-o io_uring=on with $PARAM N: exit $rc, '$(head -n1 "$T/on.out")'"
