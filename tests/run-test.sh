#!/bin/bash
# SPDX-License-Identifier: MIT
# run-test.sh TEST.sh - how make check runs each shell test: under a shared
# flock on /tmp/sectorfs-tests.alone.lock, whose descriptor the test
# inherits (SFS_TESTS_LOCK_FD).  A test that times things calls run_alone
# (tests/mount/lib.sh), which turns that lock exclusive: it then runs while
# no other shell test runs, in this tree or another on the machine, and the
# others wait for it.  Under make -j2 check the rest still run side by side.
lock=/tmp/sectorfs-tests.alone.lock
wait_s=${SFS_TESTS_LOCK_WAIT:-1800}

[ $# -ge 1 ] || { echo "usage: run-test.sh TEST.sh [ARGS...]" >&2; exit 99; }
if command -v flock >/dev/null 2>&1; then
	[ -e "$lock" ] || { : >>"$lock" && chmod 0666 "$lock"; } 2>/dev/null
	if exec {fd}<"$lock"; then
		flock -s -w "$wait_s" "$fd" || { echo "run-test.sh: $lock: no shared lock in $wait_s s" >&2; exit 99; }
		SFS_TESTS_LOCK_FD=$fd
		export SFS_TESTS_LOCK_FD
	fi
fi
exec "${BASH:-bash}" "$@"
