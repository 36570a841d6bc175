#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-grow-not-refused.sh - the writes of cp that grow an image created
# in the mount (beyond its capacity, which the store then grows) are
# neither counted nor listed as refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"

recent_serve

head -c $((3 << 20)) /dev/urandom > "$T/src"
cp "$T/src" "$MNT/copied" || fail "cp into the mount failed"
cmp -s "$T/src" "$MNT/copied" || fail "the copy differs"
json_check "
c = json.load(open(mnt + '/.stats/copied.json'))
want(c['writes'] > 0, 'copied: no writes counted')
want(c['out_of_range'] == 0 and c['refused_recent'] == [],
     'copied: writes that grew the image counted as refused: %d, %s' % (c['out_of_range'], c['refused_recent'][:2]))
"
pass "writes that grow an image created in the mount are not refused I/Os"

stop_daemon
