#!/bin/bash
# SPDX-License-Identifier: MIT
# transport-reads-in-place.sh - 1 MiB reads take no memory of their own in
# the daemon.
#
# Proves: the reply to a read is read into the buffer its request came in:
# 128 O_DIRECT reads of 1 MiB cost the daemon far fewer minor page faults
# than the 256 a read a fresh 1 MiB buffer would cost.  On the transport
# of the run (lib.sh's SECTORFS_IO_URING); transport-uring-serves.sh holds
# the same through the ring.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-transport.sh"

: > "$T/daemon.log"
start_daemon
reads_in_place k4
stop_daemon
