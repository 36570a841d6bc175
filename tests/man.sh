#!/bin/bash
# SPDX-License-Identifier: MIT
# man.sh - every man page renders without a warning: groff with all its
# warnings on (-ww) over each page configure made from man/*.in, and
# mandoc's lint where mandoc is installed.  A stray control character
# (a \f written as a form feed), a bad macro or a broken font escape is a
# warning, and fails the test.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v groff >/dev/null 2>&1 || { echo "SKIP: man: no groff"; exit 77; }
bad=0 n=0
for src in "$top_srcdir"/man/*.in; do
	page="$top_builddir/man/$(basename "$src" .in)"
	[ -f "$page" ] || { echo "FAIL: man: $page was not made from $src (configure makes it)" >&2; exit 1; }
	n=$((n + 1))
	out=$(groff -ww -man -z "$page" 2>&1)
	if command -v mandoc >/dev/null 2>&1; then
		out+=$(mandoc -T lint -W warning "$page" 2>&1)
	fi
	[ -z "$out" ] || { echo "$(basename "$page"):"; echo "$out" | sed 's/^/    /'; bad=$((bad + 1)); }
done
[ $bad -eq 0 ] || { echo "FAIL: man: $bad of $n pages render with warnings" >&2; exit 1; }
echo "ok - $n man pages render without a warning"
