#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-uring-auto-default.sh - with FUSE over io_uring on in the
# kernel, the default and -o io_uring=auto pick it, -o io_uring=off does not.
#
# Proves: with fuse.enable_uring Y, a daemon started with no transport
# option and one with -o io_uring=auto serve over io_uring, one with -o
# io_uring=off over /dev/fuse (the stats JSON says which, I/O works).  The
# daemons get only these options, also in .ci/run's io_uring pass.
# Skipped unless the parameter is Y.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

requires_uring_param Y
TRANSPORT_OPTS=()

expect_transport io_uring
stop_daemon
expect_transport io_uring -o io_uring=auto
stop_daemon
expect_transport /dev/fuse -o io_uring=off
stop_daemon
pass "with $PARAM Y: auto and the default use io_uring, off /dev/fuse"
