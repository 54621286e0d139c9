#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/host.sh: `make soak-host`.  The whole host recorded the way the
# fleet agent records it, for HOST_SECONDS (default 300), with busy
# programs and processes that come and go:
#
#   sp-record -a -F HZ | sp-unwind | sp-symbolize | sp-fold --format pprof --every 10s -o DIR
#
# The load: bw-churn threads (a thread every 50 ms), bw-churn child, sh
# and awk started about 3.5 times a second, a Python loop, and, when node
# is installed, node --perf-basic-prof bw-jit.js started anew every 20 s.
# Every HOST_INTERVAL seconds (default 10) each stage's resident set, its
# anonymous part and its CPU time go into bench/results/host.csv; the
# report, bench/results/host.md, gives samples and lost events, each
# stage's CPU per second of the host, and the memory curve.  docs/FLEET.md
# quotes it.  Needs root (or CAP_PERFMON).  Knobs: HOST_SECONDS,
# HOST_INTERVAL, HOST_HZ (99), HOST_TMP (/tmp/sp-host), HOST_BIN.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HOST_BIN:-$root}
secs=${HOST_SECONDS:-300}
interval=${HOST_INTERVAL:-10}
hz=${HOST_HZ:-99}
tmp=${HOST_TMP:-/tmp/sp-host}
out=$root/bench/results
# shellcheck source=bench/stages.sh
. "$root/bench/stages.sh"

die() {
	echo "host: $*" >&2
	exit 2
}

for t in sp-record sp-unwind sp-symbolize sp-fold; do
	[ -x "$bin/$t/$t" ] || die "$bin/$t/$t is not built: run make"
done
node=$(command -v node || true)
rm -rf "$tmp"
mkdir -p "$tmp/windows" "$out"
${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$tmp/bw-churn" \
	"$root/bench/workloads/bw-churn.c"

pids=()
cleanup() {
	local p
	[ -n "${wl:-}" ] && kill -- -"$wl" 2>/dev/null
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	return 0
}
trap cleanup EXIT
trap 'exit 2' INT TERM

cat >"$tmp/load.sh" <<'EOF'
tmp=$1 secs=$2 node=$3 jitjs=$4
"$tmp/bw-churn" threads "$secs" &
python3 -c 'import sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    sum(i * i for i in range(20000))
    time.sleep(0.02)' "$secs" &
if [ -n "$node" ]; then
	while :; do
		"$node" --perf-basic-prof "$jitjs" 20
	done &
fi
end=$((SECONDS + secs))
while [ "$SECONDS" -lt "$end" ]; do
	"$tmp/bw-churn" child 40
	sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done'
	awk 'BEGIN { for (i = 0; i < 300000; i++) s += i }'
	sleep 0.6
done
EOF
setsid bash "$tmp/load.sh" "$tmp" "$((secs + 10))" "$node" \
	"$root/bench/workloads/bw-jit.js" </dev/null >/dev/null 2>&1 &
wl=$!

# a stage a process, joined by FIFOs, so that each one can be watched
mkfifo "$tmp/raw" "$tmp/unw" "$tmp/sym"
"$bin/sp-fold/sp-fold" --format pprof --every 10s -o "$tmp/windows" \
	<"$tmp/sym" 2>"$tmp/fold.err" &
fold=$!
"$bin/sp-symbolize/sp-symbolize" <"$tmp/unw" >"$tmp/sym" 2>"$tmp/sym.err" &
sym=$!
"$bin/sp-unwind/sp-unwind" <"$tmp/raw" >"$tmp/unw" 2>"$tmp/unwind.err" &
unw=$!
"$bin/sp-record/sp-record" -a -F "$hz" -d "$secs" -o "$tmp/raw" \
	2>"$tmp/record.err" &
rec=$!
pids+=("$rec" "$unw" "$sym" "$fold")
echo "host: recording every process for $secs s at $hz Hz (into $out/host.csv)"

stages=(sp-record sp-unwind sp-symbolize sp-fold)
csv=$out/host.csv
stage_header "${stages[@]}" >"$csv"
start=$SECONDS
while kill -0 "$rec" 2>/dev/null; do
	sleep "$interval" &
	wait $! || true
	kill -0 "$rec" 2>/dev/null || break
	stage_row "$((SECONDS - start))" "$rec" "$unw" "$sym" "$fold" >>"$csv"
done
for p in "${pids[@]}"; do
	wait "$p" || true
done
pids=()
kill -- -"$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
wl=

{
	echo "Run of $(date -u +%Y-%m-%d), \`HOST_SECONDS=$secs make soak-host\`, $(nproc) CPUs, $(uname -r), $hz Hz."
	echo
	echo "- $(grep -m1 '^sp-record: [0-9]* samples' "$tmp/record.err")"
	echo "- $(grep -m1 'samples not written' "$tmp/record.err")"
	echo "- $(grep -m1 'samples, ' "$tmp/unwind.err")"
	echo "- $(tail -n 1 "$tmp/fold.err")"
	# pids handed out: the last one moves on, and wraps at pid_max
	started=$(($(tail -n 1 "$csv" | cut -d, -f2) - $(sed -n 2p "$csv" | cut -d, -f2)))
	((started >= 0)) || started=$((started + $(cat /proc/sys/kernel/pid_max)))
	echo "- processes and threads started: about $started (pids handed out)"
	echo
	echo "CPU of each stage per second of the host (at the last reading), and memory read every $interval s, resident set with its anonymous part in parentheses (KiB):"
	echo
	stage_table "$csv" "${stages[@]}"
	echo
	echo "The curve, a point a minute: resident set (anonymous part), KiB:"
	echo
	stage_curve "$csv" "$interval" "${stages[@]}"
} >"$out/host.md"
cat "$out/host.md"
cleanup
rm -rf "$tmp"
