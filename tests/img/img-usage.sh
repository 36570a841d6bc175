#!/bin/bash
# SPDX-License-Identifier: MIT
# img-usage.sh - sectorfs-img --help, help COMMAND and COMMAND --help print
# its usage (exit 0); no command, an unknown command or option, a missing
# STORE/NAME or -s, too many arguments exit 1 with the exact message;
# --version prints the version.
. "$(dirname "$0")/lib.sh"

img 0 --help
out_has "usage: sectorfs-img COMMAND [options] STORE/NAME ..."
for c in create info check resize inflate map; do
	img 0 "$c" --help
	out_has "usage: sectorfs-img $c "
	img 0 help "$c"
	out_has "usage: sectorfs-img $c "
done
img 1
img 1 frobnicate "$STORE/x"
err_is "sectorfs-img: unknown command 'frobnicate'"
img 1 info
err_is "sectorfs-img info: missing STORE/NAME"
img 1 create -s 8M -q "$STORE/x"
err_is "sectorfs-img create: unknown option '-q'"
img 1 map --bogus "$STORE/x"
err_is "sectorfs-img map: unknown option '--bogus'"
img 1 create "$STORE/x"
err_is "sectorfs-img create: missing -s SIZE"
img 1 create -s 8M "$STORE/a" "$STORE/b"
err_is "sectorfs-img create: too many arguments"
img 0 --version
out_has "sectorfs-img "
pass "help and usage errors"
