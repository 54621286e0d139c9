#!/bin/sh
# SPDX-License-Identifier: MIT
# lib/api/mkmap.sh HEADER...: the version script of libstackpulse.so, made
# from the installed headers: every function they declare (not the static
# inline ones) is exported, nothing else is.
set -e
echo "/* made by lib/api/mkmap.sh from the installed headers: do not edit */"
echo "STACKPULSE_0 {"
echo "	global:"
for h in "$@"; do
	grep -E '^[a-z].*\bsp_[a-z0-9_]+\(' "$h" | grep -v '^static' |
		sed -E 's/.*\b(sp_[a-z0-9_]+)\(.*/\1/'
done | sort -u | sed 's/^/		/; s/$/;/'
echo "	local:"
echo "		*;"
echo "};"
