#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/layers.sh [LIBDIR]: check that each folder of lib/ includes only the
# folders its layer may use (lib/README.md): base, format, os and elf are
# shared by every stage; a stage (record, unwind, symbolize, fold, flame,
# push) uses
# those and never another stage; api combines stages; cli serves the tools.
# A bare #include "x.h" must name a header of the same folder.  Prints each
# forbidden include as FILE:LINE and exits 1 when there is one.
lib=${1:-$(dirname "$0")/../lib}
status=0
for f in "$lib"/*/*.[ch]; do
	dir=$(basename "$(dirname "$f")")
	case $dir in
	base)		ok="base" ;;
	format)		ok="base format" ;;
	os)		ok="base format os" ;;
	elf)		ok="base format elf" ;;
	record | unwind | symbolize)
			ok="base format os elf $dir" ;;
	fold)		ok="base format fold" ;;
	flame)		ok="base format flame" ;;
	push)		ok="base format push" ;;
	cli)		ok="base format cli" ;;
	api)		ok="base format os elf record unwind symbolize fold api" ;;
	*)		echo "$f: folder '$dir' has no layer in tests/layers.sh"
			status=1; continue ;;
	esac
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	while IFS= read -r line; do
		n=${line%%:*}
		inc=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
		case $inc in
		*/*)	want=${inc%%/*}
			case " $ok " in
			*" $want "*) ;;
			*) echo "$f:$n: $dir/ may not include $inc" ;;
			esac ;;
		*)	[ -f "$(dirname "$f")/$inc" ] ||
				echo "$f:$n: \"$inc\" is not in $dir/: name its folder" ;;
		esac
	done
done >"${TMPDIR:-/tmp}/layers.$$"
if [ -s "${TMPDIR:-/tmp}/layers.$$" ]; then
	cat "${TMPDIR:-/tmp}/layers.$$"
	status=1
fi
rm -f "${TMPDIR:-/tmp}/layers.$$"
[ $status = 0 ] && echo "layers: every include of lib/ is allowed"
exit $status
