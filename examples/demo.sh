#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh: profile a bundled program for 3 seconds and show where it spends
# its time.  Run by `make demo` as: sh examples/demo.sh [BUILD-DIR]
#
# Writes demo.folded and demo.svg, its flame graph drawn by sp-flame, in
# the current directory.
set -eu

O=${1:-.}
CC=${CC:-cc}
for t in sp-record sp-unwind sp-symbolize sp-fold sp-flame; do
	[ -x "$O/$t/$t" ] || { echo "demo: $O/$t/$t is not built: run make" >&2; exit 2; }
done

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 4)
if [ "$(id -u)" != 0 ] && [ "$paranoid" -gt 2 ]; then
	echo "demo: sp-record needs root or CAP_PERFMON here (kernel.perf_event_paranoid is $paranoid)" >&2
	echo "demo: run 'sudo make demo', or 'sudo sysctl kernel.perf_event_paranoid=2'" >&2
	exit 2
fi

mkdir -p "$O/build/demo"
demo="$O/build/demo/demo"
echo "  CC      $demo"
$CC -O2 -g -fomit-frame-pointer -o "$demo" examples/demo.c

tmp=$(mktemp -d)
"$demo" 6 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
sleep 0.2

# stage NAME CMD...: run one stage of the pipeline, keeping its exit status
stage() {
	name=$1
	shift
	st=0
	"$@" || st=$?
	echo "$st" >"$tmp/$name"
}

echo "profiling pid $pid for 3 seconds:"
echo "  sp-record -p $pid -d 3 | sp-unwind | sp-symbolize | sp-fold > demo.folded"
stage sp-record "$O/sp-record/sp-record" -p "$pid" -d 3 |
	stage sp-unwind "$O/sp-unwind/sp-unwind" |
	stage sp-symbolize "$O/sp-symbolize/sp-symbolize" |
	stage sp-fold "$O/sp-fold/sp-fold" >demo.folded
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# 1 means a partial result (some samples lost or left unresolved): still
# worth a look; anything else means that stage failed
partial=
for t in sp-record sp-unwind sp-symbolize sp-fold; do
	st=$(cat "$tmp/$t" 2>/dev/null || echo '?')
	case $st in
	0) ;;
	1) partial="$partial $t" ;;
	*) echo "demo: $t failed (exit status $st)" >&2; exit 2 ;;
	esac
done
[ -s demo.folded ] || { echo "demo: no stacks were folded" >&2; exit 2; }
[ -z "$partial" ] || echo "demo: partial result from:$partial (see above)" >&2

total=$(awk '{ n += $NF } END { print n + 0 }' demo.folded)
echo
echo "top 10 of $(wc -l <demo.folded) stacks, $total samples (count, share, stack root first):"
awk -v total="$total" '{ printf "%8d %5.1f%%  %s\n", $NF, 100 * $NF / total, substr($0, 1, length($0) - length($NF) - 1) }' demo.folded |
	sort -k1,1nr | head -10

echo
echo "  sp-flame --title 'stackpulse demo' demo.folded > demo.svg"
"$O/sp-flame/sp-flame" --title "stackpulse demo" -o demo.svg demo.folded ||
	{ echo "demo: sp-flame failed" >&2; exit 2; }
echo "wrote demo.folded and demo.svg: open demo.svg in a browser (click a frame"
echo "to zoom, Search or ctrl-F for a regular expression)"
