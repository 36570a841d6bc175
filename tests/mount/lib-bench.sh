# SPDX-License-Identifier: MIT
# lib-bench.sh - what the tests of sectorfs-bench (SPEC.md "Tools") share:
# python checks over its --json output, the change of a daemon counter
# since a mark, and three 16M thin images (4kn, 512n, 512e) to run it on.
# Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-bench.sh"
#   bench_serve
#
# It requires FUSE, python3 and sectorfs-bench.

requires_fuse
requires_cmd python3
requires_built "$SECTORFS_BENCH"
K=1024
M=$((1024 * 1024))

# The interpreter itself: a pyenv-style shim costs a third of a second a call.
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=python3

# jq_py FILE EXPR: print a python expression over the JSON in FILE (as d).
jq_py() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# jcheck FILE WHAT CODE [ARG...]: run python CODE with d = the JSON in FILE
# and a = the ARGs (ints where they are numbers); CODE calls bad("...") for
# each broken invariant.  A file that does not parse is broken as a whole.
jcheck() {
	local f=$1 what=$2 code=$3 out
	shift 3
	out=$("$PY" -c '
import json, sys
errs = []
def bad(m): errs.append(m)
try:
    d = json.load(open(sys.argv[2]))
except Exception as e:
    print("not JSON (%s): %s" % (e, open(sys.argv[2]).read()[:400])); sys.exit(1)
a = [int(x) if x.lstrip("-").isdigit() else x for x in sys.argv[3:]]
exec(sys.argv[1])
if errs:
    print("; ".join(errs)); sys.exit(1)
' "$code" "$f" "$@" 2>&1) || fail "$what: $out"
}

# delta NAME KEY BEFORE: the change of a stats counter since BEFORE.
delta() { echo $(( $(stats_key "$1" "$2") - $3 )); }

# bench_serve: k4 (4kn), n512 (512n) and e512 (512e) declared, the store
# served.
bench_serve() {
	sidecar k4 16M 4kn thin 64K
	sidecar n512 16M 512n thin 64K
	sidecar e512 16M 512e thin 64K
	start_daemon
}
