#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - build the libFuzzer targets of the core library and fuzz each
# one for a while.
#
#   tests/fuzz/run.sh [SECONDS]     fuzz fuzz_sidecar, then fuzz_map, SECONDS each (60)
#   tests/fuzz/run.sh --seeds       regenerate tests/fuzz/corpus/map with gen-map-seeds.c
#
# Everything is built and run in one mktemp -d directory: the targets
# (clang, libFuzzer + ASan + UBSan, every UBSan finding fatal), a copy of
# each seed corpus (tests/fuzz/corpus/NAME, which the run grows; the source
# tree is never written), the logs and any crashing input; fuzz_map's
# scratch map file lives in a directory on /dev/shm when there is one.  Exit 0 when
# neither target found anything (the directory is removed), 1 on a crash,
# leak, timeout or sanitizer report (the directory is kept and the crashing
# input's path printed, with the command that replays it), 77 when clang or
# libFuzzer is missing (Debian: apt-get install clang libclang-rt-14-dev).
# CLANG=... picks the compiler; FUZZ_KEEP=1 keeps the work directory (and
# the grown corpora in it) after a clean run too.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
SRC="$top_srcdir"
CLANG=${CLANG:-clang}
# shellcheck disable=SC2054   # the commas are clang's, not array separators
CFLAGS_FUZZ=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I "$SRC/core")
LIBS=(-ljansson -lpthread -lm)
# the core library's sources, one folder per subsystem
mapfile -t CORE_SRCS < <(find "$SRC/core" -name '*.c' | sort)

skip() { echo "SKIP: fuzz: $*"; exit 77; }

if [ "${1:-}" = "--seeds" ]; then
	W=$(mktemp -d /tmp/sectorfs-seeds.XXXXXX)
	trap 'rm -rf "$W"' EXIT
	gcc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I "$SRC/core" \
		"$SRC/tests/fuzz/gen-map-seeds.c" "${CORE_SRCS[@]}" -o "$W/gen" "${LIBS[@]}" || exit 1
	rm -rf "$SRC/tests/fuzz/corpus/map"
	"$W/gen" "$SRC/tests/fuzz/corpus/map" || exit 1
	du -sh "$SRC/tests/fuzz/corpus"
	exit 0
fi

SECONDS_EACH=${1:-60}
case "$SECONDS_EACH" in
'' | *[!0-9]* | 0) echo "usage: $0 [SECONDS > 0] | --seeds" >&2; exit 2 ;;
esac

command -v "$CLANG" >/dev/null 2>&1 || skip "no $CLANG"
W=$(mktemp -d /tmp/sectorfs-fuzz.XXXXXX)
keep=0
[ "${FUZZ_KEEP:-0}" = 1 ] && keep=1
trap '[ $keep -eq 1 ] || rm -rf "$W"' EXIT

# Can this clang link a libFuzzer program at all?
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' > "$W/probe.c"
"$CLANG" -fsanitize=fuzzer,address,undefined "$W/probe.c" -o "$W/probe" >"$W/probe.log" 2>&1 ||
	skip "$CLANG cannot link -fsanitize=fuzzer (install libclang-rt-14-dev): $(head -n1 "$W/probe.log")"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz_map makes its directory in TMPDIR and fdatasyncs the map it
# flushes: on tmpfs that costs nothing, on a disk it would cost most runs.
if [ -d /dev/shm ] && [ -w /dev/shm ] && SHM=$(mktemp -d /dev/shm/sectorfs-fuzz.XXXXXX 2>/dev/null); then
	trap 'rm -rf "$SHM"; [ $keep -eq 1 ] || rm -rf "$W"' EXIT
	export TMPDIR="$SHM"
else
	export TMPDIR="$W"
fi
failed=0

# fuzz NAME [libFuzzer options...]: build, copy the corpus, run, report.
fuzz() {
	local name=$1 bin log rc crash
	shift
	bin="$W/fuzz_$name"
	log="$W/fuzz_$name.log"
	if ! "$CLANG" "${CFLAGS_FUZZ[@]}" "$SRC/tests/fuzz/fuzz_$name.c" "${CORE_SRCS[@]}" \
		-o "$bin" "${LIBS[@]}" >"$W/build_$name.log" 2>&1; then
		cat "$W/build_$name.log"
		echo "FAIL: fuzz_$name does not build"
		failed=1
		return
	fi
	mkdir -p "$W/corpus/$name" "$W/artifacts"
	cp -r "$SRC/tests/fuzz/corpus/$name/." "$W/corpus/$name/"
	local seeds
	seeds=$(find "$W/corpus/$name" -type f | wc -l)
	rc=0
	(cd "$W" && "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$W/artifacts/$name-" "$@" "$W/corpus/$name") >"$log" 2>&1 || rc=$?
	local inited execs cov ft corp done_line
	inited=$(grep -m1 'INITED' "$log" | grep -o 'cov: [0-9]*' | cut -d' ' -f2)
	done_line=$(grep -E '^#[0-9]+' "$log" | tail -n1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' <<<"$done_line" | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' <<<"$done_line" | cut -d' ' -f2)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' <<<"$done_line" | cut -d' ' -f2)
	echo "fuzz_$name: ${execs:-?} executions in ${SECONDS_EACH}s; coverage ${inited:-?} edges" \
		"from $seeds seeds -> ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} (inputs/bytes)"
	if [ $rc -ne 0 ]; then
		failed=1
		echo "FAIL: fuzz_$name exited $rc"
		grep -E 'ERROR: |runtime error:|SUMMARY:|fuzz_(map|sidecar): |round trip|dump ' "$log" | head -n 20
		sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | while read -r crash; do
			echo "crashing input: $crash"
			echo "replay with: $bin $crash"
		done
		echo "log: $log"
	fi
}

fuzz sidecar -dict="$SRC/tests/fuzz/sidecar.dict"
fuzz map

if [ $failed -ne 0 ]; then
	keep=1
	echo "fuzz: FAILED; work directory kept: $W"
	exit 1
fi
echo "fuzz: no crash"
[ $keep -eq 1 ] && echo "fuzz: work directory kept: $W"
exit 0
