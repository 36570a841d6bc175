#!/bin/bash
# SPDX-License-Identifier: MIT
# layering.sh - core/'s folders keep their layer order, and fs/ and tools/
# keep out of core's insides.
#
# The layers, lowest first.  A folder of core/ uses its own files and the
# folders of the layers below its own, never a folder beside it (in its own
# layer) or above it:
LAYERS=(
	"util"                          # small libraries: log, fdio, tmpfile, bitmap, ...
	"contract"                      # the names, the sidecar and its failure keys, the geometry
	"mount map model fail"          # what an image is made of, each on its own
	"stats"                         # what an image did, and what its parts' state shows
	"image"                         # one disk image
	"store"                         # a directory of images, its operations, recovery
)
# It fails, naming the file and line or the object and symbol, when:
#  1. core/ holds a source file beside its folders (a top header is the one
#     exception), or a folder the table above does not place;
#  2. a file of core/ includes a header of a folder beside or above its own,
#     or another folder's internal.h, *_internal.h or *_test.h, or FUSE;
#  3. an object of core/ (once the library is built) uses a symbol defined
#     by a folder beside or above its own: the calls are checked apart from
#     the includes, so a prototype written by hand does not get by;
#  4. two folders of core/ depend on each other, directly or through
#     others (by the includes and the calls together);
#  5. a file of fs/ or tools/ includes a core internal.h, *_internal.h or
#     *_test.h (the unit tests may).
# To place a new folder, add it to LAYERS; to let a folder use one beside
# it, give it a layer of its own above the other.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
cd "$top_srcdir" || exit 1
command -v nm >/dev/null 2>&1 || NO_NM=1

declare -A rank
for i in "${!LAYERS[@]}"; do
	for f in ${LAYERS[$i]}; do rank[$f]=$i; done
done
errors=0
fail() { echo "layering: $*" >&2; errors=$((errors + 1)); }
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# uses FOLDER OTHER WHAT: FOLDER uses OTHER; an error unless OTHER is lower
uses() {
	local f=$1 g=$2 what=$3
	[ "$f" = "$g" ] && return 0
	echo "$f $g" >>"$edges"
	if [ -z "${rank[$g]+x}" ]; then
		fail "$what: $g/ is in no layer (tests/layering.sh LAYERS)"
	elif [ "${rank[$g]}" -eq "${rank[$f]}" ]; then
		fail "$what: $f/ uses $g/, beside it in layer $((rank[$f] + 1)) (${LAYERS[${rank[$f]}]})"
	elif [ "${rank[$g]}" -gt "${rank[$f]}" ]; then
		fail "$what: $f/ (layer $((rank[$f] + 1))) uses $g/, a higher layer ($((rank[$g] + 1)))"
	fi
}

INCLUDE='^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)"'
insides() { case $1 in internal.h | *_internal.h | *_test.h) return 0 ;; esac; return 1; }

# resolve FILE NAME: the file #include "NAME" in FILE reads, as the compiler looks (FILE's
# folder first, then core/, then fs/ or tools/), from the top; nothing when none is there
resolve() {
	local c
	for c in "$(dirname "$1")/$2" "core/$2" "${1%%/*}/$2"; do
		case $c in *./*) c=$(realpath -m -s --relative-to=. "$c") ;; esac
		[ -f "$c" ] && { echo "$c"; return; }
	done
}

# 1. only folders in core/, each placed
while IFS= read -r p; do
	case $p in
	*.h) tops=$(( ${tops:-0} + 1 )); [ "$tops" -gt 1 ] && fail "$p: a second header at the top of core/" ;;
	*) fail "$p: a source file at the top of core/, outside every folder" ;;
	esac
done < <(find core -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort)
folders=()
for d in core/*/; do
	d=${d%/}; d=${d#core/}
	case $d in .* | '*') continue ;; esac
	[ -n "${rank[$d]+x}" ] || fail "core/$d/: a folder in no layer (tests/layering.sh LAYERS)"
	folders+=("$d")
done

# 2. the includes of core/
nincl=0
while IFS=: read -r file line text; do
	[[ $text =~ $INCLUDE ]] || continue
	name=${BASH_REMATCH[1]}
	f=${file#core/}; f=${f%%/*}
	[ -n "${rank[$f]+x}" ] || continue
	r=$(resolve "$file" "$name")
	case $r in core/*/*) ;; *) continue ;; esac   # not core's (config.h), or a top header
	g=${r#core/}; g=${g%%/*}
	[ "$g" = "$f" ] && continue   # its own folder's
	nincl=$((nincl + 1))
	uses "$f" "$g" "$file:$line: #include \"$name\""
	insides "$(basename "$r")" &&
		fail "$file:$line: #include \"$name\": $g/'s insides, for $g/'s own files and the tests only"
done < <(grep -rn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' core | sort -t: -k1,1 -k2,2n)
while IFS=: read -r file line _; do
	fail "$file:$line: core/ never includes FUSE (fs/ is the FUSE layer)"
done < <(grep -rn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]fuse' core)

# 3. the calls of core/, from the objects (skipped, saying so, when the library is not built)
nsym=0 nobj=0
if [ -z "${NO_NM:-}" ]; then
	declare -A def
	objs=()
	for f in "${folders[@]}"; do
		for o in "$top_builddir"/core/"$f"/*.o; do
			[ -f "$o" ] || continue
			src=$(basename "$o" .o); src=${src#*-}
			[ -f "core/$f/$src.c" ] || continue   # left from a file since moved
			objs+=("$f:$src:$o")
			while read -r s; do def[$s]=$f; done < <(nm --defined-only -g "$o" | awk '{ print $3 }')
		done
	done
	nobj=${#objs[@]}
	for fo in "${objs[@]}"; do
		f=${fo%%:*} o=${fo#*:}; src=${o%%:*} o=${o#*:}
		while read -r s; do
			g=${def[$s]:-}
			[ -n "$g" ] || continue
			nsym=$((nsym + 1))
			uses "$f" "$g" "core/$f/$src.c: its object uses $s"
		done < <(nm -u "$o" | awk '{ print $2 }')
	done
fi
[ "$nobj" -gt 0 ] || echo "# layering: no objects of core/ under $top_builddir: the calls are not checked"

# 4. no two folders depend on each other
sort -u "$edges" -o "$edges"
mapfile -t pairs <"$edges"
for p in "${pairs[@]}"; do
	a=${p% *} b=${p#* }
	[[ $a < $b ]] && printf '%s\n' "${pairs[@]}" | grep -qx "$b $a" && fail "core/$a/ and core/$b/ depend on each other"
done
loop=$(tsort "$edges" 2>&1 >/dev/null | awk '/input contains a loop/ { n++; next } n == 1 { print $2 }' | tr '\n' ' ')
if [ -n "$loop" ]; then
	fail "folders of core/ that depend on each other in a circle: $loop"
fi

# 5. fs/ and tools/ use core/ by its folders' faces only
while IFS=: read -r file line text; do
	[[ $text =~ $INCLUDE ]] || continue
	name=${BASH_REMATCH[1]}
	r=$(resolve "$file" "$name")
	case $r in core/*) ;; *) continue ;; esac
	insides "$(basename "$r")" && fail "$file:$line: #include \"$name\": core's insides, for core/ and the tests only"
done < <(grep -rn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' fs tools | sort -t: -k1,1 -k2,2n)

if [ $errors -ne 0 ]; then
	echo "FAIL: layering: $errors problems" >&2
	exit 1
fi
echo "ok - core/: ${#folders[@]} folders in ${#LAYERS[@]} layers; $nincl includes across folders and $nsym uses of symbols in $nobj objects go down only, no circle; fs/ and tools/ keep out of core's insides"
