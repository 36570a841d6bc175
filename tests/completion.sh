#!/bin/bash
# SPDX-License-Identifier: MIT
# completion.sh - the bash completion of completions/sectorfs.bash, driven
# as bash drives it: source the file, set COMP_WORDS and COMP_CWORD, call
# the function complete(1) names for the command, read COMPREPLY.
#
# Proves: subcommands and options by prefix, option values (-f 512e, -o
# sector=, -o lists), image names of a store (NAME for each NAME.json,
# not sidecars, hidden names or files without a sidecar; with the
# directory as typed), the image names of a mount's .stats; and that
# every option each program's --help lists is offered (so the lists
# cannot drift from the programs).
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
T=$(mktemp -d /tmp/sectorfs-completion.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: completion: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }

# shellcheck source=/dev/null
. "$top_srcdir/completions/sectorfs.bash" || fail "cannot source completions/sectorfs.bash"

# comp LINE: complete the last word of LINE (a trailing space: an empty word) as bash would;
# the candidates, sorted, one per line, in $got.
comp() {
	local line=$1 fn
	read -r -a COMP_WORDS <<< "$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	fn=$(complete -p "${COMP_WORDS[0]}" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	[ -n "$fn" ] || fail "no completion function for ${COMP_WORDS[0]}"
	COMPREPLY=()
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
}

# want LINE CANDIDATES...: completing LINE gives exactly CANDIDATES.
want() {
	local line=$1 exp
	shift
	comp "$line"
	exp=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$exp" ] || fail "'$line<TAB>': expected [$(echo $exp)], got [$(echo $got)]"
}

# offers LINE WORD: WORD is among the candidates of LINE.
offers() {
	comp "$1"
	grep -qxF -- "$2" <<< "$got" || fail "'$1<TAB>' does not offer $2 (got: $(echo $got))"
}

cd "$T" || fail "cd $T"
mkdir -p store/sub mnt/.stats
for n in vm1 vm2 'disk one' other; do echo '{ "size": "1M" }' > "store/$n.json"; done
: > store/vm1
: > store/loose                              # no sidecar: not an image
echo '{}' > store/.hidden.json               # hidden: never an image
touch mnt/.stats/vm1 mnt/.stats/vm1.json mnt/.stats/db.json mnt/.stats/metrics

want "sectorfs-img c" check create
want "sectorfs-img " create info check resize inflate map
want "sectorfs-img check store/" store/vm1 store/vm2 "store/disk one" store/other store/sub
want "sectorfs-img info store/vm" store/vm1 store/vm2
want "sectorfs-img map $T/store/o" "$T/store/other"
(cd store && want "sectorfs-img inflate v" vm1 vm2) || exit 1
want "sectorfs-img resize store/vm2 " 
want "sectorfs-img create -f " 512n 512e 4kn
want "sectorfs-img create -p eager" eagerzeroedthick
want "sectorfs-img check --r" --repair
pass "sectorfs-img: subcommands, options, values, the images of a store"

want "sectorfs -o sector=5" sector=512n sector=512e
want "sectorfs -o nostats,prov" nostats,provisioning=
want "sectorfs -o nostats,provisioning=t" nostats,provisioning=thin
want "sectorfs --v" --version
want "sectorfs st" store
pass "sectorfs: -o lists and values, directories"

want "sectorfs-stat mnt " vm1 db
want "sectorfs-stat -i 1 mnt d" db
want "sectorfs-stat --re" --refused
want "sectorfs-stat -" -i --interval -c --count -r --refused --json -h --help -V --version
pass "sectorfs-stat: options, the images of a mount"

want "sectorfs-bench s" scale sweep
want "sectorfs-bench c" crash
want "sectorfs-bench crash --on " end flushes seconds writes writes,flushes,end
want "sectorfs-bench scale --n" --nofile
want "sectorfs-bench redo --redo-block " 512 4096
want "sectorfs-bench zeroing --sector 4" 4kn
offers "sectorfs-bench sweep --" --read-only
pass "sectorfs-bench: subcommands, options, values"

# every option of every --help is offered
IMG=$top_builddir/tools/sectorfs-img STAT=$top_builddir/tools/sectorfs-stat
BENCH=$top_builddir/tools/sectorfs-bench DAEMON=$top_builddir/fs/sectorfs
for b in "$IMG" "$STAT" "$BENCH" "$DAEMON"; do [ -x "$b" ] || fail "not built: $b"; done
longopts() { grep -o -- '--[a-z][a-z-]*' | sort -u; }
n=0
for c in create info check resize inflate map; do
	for o in $("$IMG" "$c" --help | longopts); do offers "sectorfs-img $c --" "$o"; n=$((n + 1)); done
done
for c in sweep zeroing redo scale crash powercut; do
	for o in $("$BENCH" "$c" --help | longopts); do offers "sectorfs-bench $c --" "$o"; n=$((n + 1)); done
done
for o in $("$STAT" --help | longopts); do offers "sectorfs-stat --" "$o"; n=$((n + 1)); done
for o in $("$DAEMON" --help | sed -n '/^sectorfs options/,/^$/p' | grep -o -- '-o [a-z_]*=\?' | cut -c4-); do
	offers "sectorfs -o " "$o"
	n=$((n + 1))
done
[ $n -gt 30 ] || fail "only $n options found in the --help texts"
pass "all $n options of the --help texts are offered"
