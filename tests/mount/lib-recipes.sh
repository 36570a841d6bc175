# SPDX-License-Identifier: MIT
# lib-recipes.sh - what the tests that run the recipes of doc/recipes.md
# share: the check that the page still gives the commands a test runs,
# O_DIRECT reads and patterns to compare, and the mount's options (4kn for
# images created in it, allow_other as root).  Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-recipes.sh"
#
# It requires FUSE, GNU dd and a few coreutils.
# A recipe whose tools are missing skips (77) with the reason.  Each test
# starts its own nbdkit and QEMU and ends them by pid, detaches only the
# loop devices it attached, unmounts what it mounted, and changes nothing
# outside $T (not /etc/fuse.conf: -o allow_other is used only as root).

# missing CMD...: print the first CMD that is not installed (status 0), or
# nothing (status 1) when all are.
missing() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { echo "$c"; return 0; }
	done
	return 1
}
# skip_recipe NAME REASON: the recipe cannot run here; the test exits 77 saying why.
skip_recipe() { skip "recipe $1: $2"; }
note() { echo "# $*"; }

# pattern BYTE LEN: LEN bytes of BYTE (0-255).
pattern() { head -c "$2" /dev/zero | tr '\0' "\\$(printf '%03o' "$1")"; }

# dread FILE OFFSET LENGTH: bytes of FILE read with O_DIRECT (4 KiB aligned).
dread() {
	dd if="$1" iflag=direct,skip_bytes,count_bytes bs=64K skip="$2" count="$3" status=none
}

# same WHAT FILE1 FILE2: the two files hold the same bytes.
same() { cmp -s "$2" "$3" || fail "$1: $(cmp "$2" "$3" 2>&1 | head -n1)"; }

# doc_says RECIPE TEXT...: doc/recipes.md still gives each TEXT (a command
# this test runs, as the page writes it), else the page and the test
# have parted.
RECIPES=$top_srcdir/doc/recipes.md
doc_says() {
	local r=$1 t
	shift
	[ -f "$RECIPES" ] || fail "$r: $RECIPES is missing"
	for t in "$@"; do
		grep -qF -- "$t" "$RECIPES" || fail "$r: doc/recipes.md no longer says '$t'"
	done
}

# xattr FILE NAME: an xattr of FILE, or nothing without getfattr.
xattr() { getfattr --only-values -n "$2" "$1" 2>/dev/null; }

requires_fuse
requires_gnu_dd
requires_cmd cmp head tr truncate timeout

# recipe_serve: the store served with OPTS.
recipe_serve() { start_daemon -o "$OPTS"; }

OPTS=sector=4kn   # images created in the mount (qemu-img convert without -n)
[ "$(id -u)" -eq 0 ] && OPTS=$OPTS,allow_other
