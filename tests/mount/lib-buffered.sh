# SPDX-License-Identifier: MIT
# lib-buffered.sh - what the tests of opens without O_DIRECT share: a 4kn
# image k4 and a 512e image e5, both thin with 64K blocks.  Source it
# after lib.sh; it requires FUSE, perl and cmp:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-buffered.sh"
#   buffered_serve

requires_fuse
requires_cmd perl cmp
K=4096

# buffered_serve: k4 and e5 declared, the store served.
buffered_serve() {
	sidecar k4 8M 4kn thin 64K
	sidecar e5 8M 512e thin 64K
	start_daemon
}
