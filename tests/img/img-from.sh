#!/bin/bash
# SPDX-License-Identifier: MIT
# img-from.sh - sectorfs-img create --from a raw file keeps its data and
# its holes (a hole stays unallocated in the map), and takes the size from
# the file, rounded up to the sector.
. "$(dirname "$0")/lib.sh"

make_raw
make_small_raw
img 0 create --from "$RAW" -b 64K "$STORE/imp"
out_is "created $STORE/imp: 10M (10485760 bytes), 512n (logical 512, physical 512), thin, block size 64K"
map_is imp "0 196608 false" "196608 131072 true" "327680 10092544 false" "10420224 65536 true"
img 0 info --json "$STORE/imp"
[ "$(jv allocated_bytes)" = $((192 * 1024)) ] || fail "imp allocated: $(cat "$T/out")"
img 0 create --from "$T/small.raw" -f 4kn "$STORE/odd"
out_is "created $STORE/odd: 12K (12288 bytes), 4kn (logical 4096, physical 4096), thin, block size 1M"
pass "--from keeps holes unallocated"
