# SPDX-License-Identifier: MIT
# lib.sh - what the sectorfs-img tests share, on top of tests/mount/lib.sh:
# the tool, a run of it with its exit status required, and the checks of
# what that run printed.  Sourced; needs no mount.
. "$(dirname "$0")/../mount/lib.sh"

requires_built "$SECTORFS_IMG"

# img RC ARGS...: run sectorfs-img ARGS, require exit status RC.
# stdout goes to $T/out, stderr to $T/err.
img() {
	local want=$1 rc=0
	shift
	"$SECTORFS_IMG" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "sectorfs-img $* exited $rc, expected $want; stdout: $(cat "$T/out") stderr: $(cat "$T/err")"
}
# out_is LINE / err_is LINE: the last run printed exactly this line.
out_is() { grep -qxF -- "$1" "$T/out" || fail "stdout lacks the line '$1'; got: $(cat "$T/out")"; }
err_is() { grep -qxF -- "$1" "$T/err" || fail "stderr lacks the line '$1'; got: $(cat "$T/err")"; }
# out_has TEXT / err_has TEXT: ... or contains this text; out_lacks TEXT: ... or does not.
out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1'; got: $(cat "$T/out")"; }
err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1'; got: $(cat "$T/err")"; }
out_lacks() { ! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'; got: $(cat "$T/out")"; }
