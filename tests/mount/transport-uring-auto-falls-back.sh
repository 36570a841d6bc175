#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-uring-auto-falls-back.sh - -o io_uring=auto serves over
# /dev/fuse where the kernel gives no FUSE over io_uring, and says why.
#
# Proves: where the kernel has no fuse.enable_uring, auto serves over
# /dev/fuse; with it N, auto serves over /dev/fuse (the stats JSON says
# so, I/O works) and logs one line naming the module parameter, nothing
# else.  Skipped with the parameter Y (.ci/run's io_uring pass), which
# transport-uring-auto-default.sh covers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

[ "${SECTORFS_IO_URING:-}" != on ] || skip "the io_uring pass: $PARAM is Y"
requires_uring_param none N
TRANSPORT_OPTS=()

if [ "$(uring_param)" = none ]; then
	echo "# no $PARAM: this kernel has no FUSE over io_uring"
	expect_transport /dev/fuse
	stop_daemon
	pass "no FUSE over io_uring in the kernel: auto serves over /dev/fuse"
	exit 0
fi
expect_transport /dev/fuse -o io_uring=auto
stop_daemon
want="sectorfs: info: /dev/fuse (FUSE over io_uring is off in this kernel: $PARAM is N), up to"
grep -qF "$want" "$T/daemon.log" || fail "auto with $PARAM N: no line '$want...': $(cat "$T/daemon.log")"
others=$(grep -v -e '^sectorfs: info: /dev/fuse (' -e '^sectorfs: serving ' -e '^sectorfs: up to ' "$T/daemon.log")
[ -z "$others" ] || fail "auto with $PARAM N: more than the one line: $others"
pass "auto with $PARAM N: /dev/fuse, and only the line '$(grep -F "$want" "$T/daemon.log" | cut -c1-90)...'"
