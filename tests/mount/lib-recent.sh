# SPDX-License-Identifier: MIT
# lib-recent.sh - what the tests of each image's lists of recent refused
# I/Os and read-modify-writes share: two images (d4k, 4kn, and d512e,
# 512e), a copy of dd under a name of its own whose pid and command name
# the lists must show, and checks over the parsed NAME.json files.
# Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-recent.sh"
#   recent_serve
#
# It requires FUSE, GNU dd, python3 and fallocate.

requires_fuse
requires_gnu_dd
requires_cmd python3 fallocate

# recent_serve: d4k and d512e declared, the store served.
recent_serve() {
	sidecar d4k 8M 4kn thin 64K
	sidecar d512e 8M 512e thin 64K
	start_daemon
}

# A dd of its own name, so that the command name in the lists can only be this one.
cp "$(command -v dd)" "$T/sfsprobe-dd" || fail "cannot copy dd"
PROBE="$T/sfsprobe-dd"

# probe PIDFILE ARGS...: run the dd copy (exec: its pid is the one recorded), pid into PIDFILE.
probe() {
	local pf=$1
	shift
	bash -c 'echo $$ > "$0"; exec "$@"' "$pf" "$PROBE" "$@" status=none
}

# json_check PY: run python code against the parsed NAME.json files (d = {name: object}).
json_check() {
	python3 - "$MNT" "$@" <<'EOF' || fail "JSON check failed"
import json, sys
mnt, code = sys.argv[1], sys.argv[2]
d = {n: json.load(open("%s/.stats/%s.json" % (mnt, n))) for n in ("d4k", "d512e")}
def want(cond, what):
    if not cond:
        sys.exit("recent: " + what)
exec(code)
EOF
}

# refuse_70: 70 misaligned O_DIRECT writes to d4k from one python3
# process, each refused (EINVAL); its pid in $T/p6 and P6.
refuse_70() {
	python3 - "$MNT/d4k" > "$T/p6" <<'EOF' || fail "the python writer failed"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
print(os.getpid())
for i in range(70):
    try:
        os.pwrite(fd, buf[:512], 512 * (2 * i + 1))
        sys.exit("a misaligned write succeeded")
    except OSError as e:
        if e.errno != 22:
            raise
EOF
	P6=$(cat "$T/p6")
}
