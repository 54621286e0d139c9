#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/profile-stage.sh: profile one stackpulse stage with stackpulse.
#
#   bench/profile-stage.sh OUT INPUT CMD [ARGS...]
#
# Runs CMD [ARGS...] < INPUT > /dev/null, stopped until sp-record has
# attached to it (sp-record has no launch mode yet: the stage starts as a
# stopped shell that execs CMD, so its whole run is sampled), at
# ${PROFILE_FREQ:-4999} Hz with 16 KiB stacks, then writes OUT.raw,
# OUT.folded (sp-fold) and OUT.top (sp-fold --top 15) and prints OUT.top.
# The tools are taken from $SP_BIN/sp-*/sp-* (default: this work tree).
set -eu
out=$1 in=$2
shift 2
root=${SP_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck disable=SC2016	# $$ and $@ belong to the inner sh
sh -c 'kill -STOP $$; exec "$@" < "$0" > /dev/null' "$in" "$@" &
pid=$!
i=0
while [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != T ] && [ $i -lt 200 ]; do
	sleep 0.01
	i=$((i + 1))
done
"$root/sp-record/sp-record" -p "$pid" -F "${PROFILE_FREQ:-4999}" --stack-size 16384 \
	-o "$out.raw" 2>"$out.record.err" &
rec=$!
# wait until sp-record has opened its events, then let the stage run
has_events() {
	for f in "/proc/$1/fd/"*; do
		case $(readlink "$f" 2>/dev/null) in
		*perf_event*) return 0 ;;
		esac
	done
	return 1
}
i=0
while ! has_events "$rec" && [ $i -lt 300 ]; do
	sleep 0.01
	i=$((i + 1))
done
sleep 0.2
kill -CONT "$pid"
wait "$pid" || true
wait "$rec" || true
"$root/sp-unwind/sp-unwind" -q <"$out.raw" | "$root/sp-symbolize/sp-symbolize" 2>/dev/null >"$out.sym"
"$root/sp-fold/sp-fold" <"$out.sym" >"$out.folded"
"$root/sp-fold/sp-fold" --top 15 <"$out.sym" >"$out.top"
rm -f "$out.sym"
cat "$out.record.err" "$out.top"
