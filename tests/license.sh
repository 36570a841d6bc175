#!/bin/bash
# SPDX-License-Identifier: MIT
# license.sh - LICENSE is there and every source file says its licence on
# its first lines (after a #! line): C sources and headers, shell and
# Python scripts, the man page sources, Makefile.am and configure.ac, the
# bash completion, the systemd unit and its sample conf, debian/rules.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 1
[ -s LICENSE ] && grep -q "MIT License" LICENSE || { echo "FAIL: license: no MIT LICENSE file" >&2; exit 1; }
missing=0
while IFS= read -r f; do
	head -n 2 "$f" | grep -q "SPDX-License-Identifier: MIT" || { echo "no SPDX line: $f" >&2; missing=$((missing + 1)); }
done < <(find core fs tools tests samples man -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' \
	-o -name '*.in' \) -not -path '*/corpus/*' | sort; ls completions/* systemd/*.in systemd/*.conf
	echo Makefile.am; echo configure.ac; echo .ci/run; echo debian/rules)
[ $missing -eq 0 ] || { echo "FAIL: license: $missing files without an SPDX-License-Identifier line" >&2; exit 1; }
echo "ok - LICENSE and an SPDX line in every source file"
