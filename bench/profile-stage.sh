#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/profile-stage.sh: profile one stackpulse stage with stackpulse.
#
#   bench/profile-stage.sh OUT INPUT CMD [ARGS...]
#
# Runs CMD [ARGS...] < INPUT > /dev/null under sp-record, which launches it
# and samples it from its exec to its exit, at ${PROFILE_FREQ:-4999} Hz with
# 16 KiB stacks, then writes OUT.raw, OUT.folded (sp-fold) and OUT.top
# (sp-fold --top 15) and prints OUT.top.  The tools are taken from
# $SP_BIN/sp-*/sp-* (default: this work tree).
set -eu
out=$1 in=$2
shift 2
root=${SP_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck disable=SC2016	# $0 and $@ belong to the inner sh
"$root/sp-record/sp-record" -F "${PROFILE_FREQ:-4999}" --stack-size 16384 \
	-o "$out.raw" --command-stdout /dev/null \
	-- sh -c 'exec "$@" < "$0"' "$in" "$@" 2>"$out.record.err" || true
"$root/sp-unwind/sp-unwind" -q <"$out.raw" | "$root/sp-symbolize/sp-symbolize" 2>/dev/null >"$out.sym"
"$root/sp-fold/sp-fold" <"$out.sym" >"$out.folded"
"$root/sp-fold/sp-fold" --top 15 <"$out.sym" >"$out.top"
rm -f "$out.sym"
cat "$out.record.err" "$out.top"
