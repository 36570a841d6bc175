#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-keeps-64.sh - 70 refusals from one process keep the newest 64 in
# refused_recent, in order, each with that process's pid.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"

recent_serve

refuse_70
p6=$P6
json_check "
r = d['d4k']['refused_recent']
want(len(r) == 64, 'd4k: %d entries kept, expected 64' % len(r))
want([e['offset'] for e in r] == [512 * (2 * i + 1) for i in range(69, 5, -1)], 'd4k: not the newest 64 in order')
want(all(e['pid'] == $p6 and e['comm'] == 'python3' for e in r), 'd4k: not all from python3 $p6')
"
pass "70 refusals keep the newest 64, newest first, each with its pid"

stop_daemon
