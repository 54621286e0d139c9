#!/bin/sh
# SPDX-License-Identifier: MIT
# spool-size.sh: bytes per sample of a spool against perf.data, same workload.
#
# Records tests/workloads/wl-deep (-O2 -fomit-frame-pointer) for SECONDS at
# 999 Hz twice: with `perf record --call-graph dwarf,61440`, and with
# `sp-record | sp-unwind | sp-spool write` (60 KiB stack copies too), then
# prints each side's file size, samples and bytes per sample, and the ratio.
# Run by hand as root: sh bench/spool-size.sh [SECONDS] [BUILD-DIR]
set -eu

secs=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${2:-$root}
work=$(mktemp -d /tmp/spool-size.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

cc -O2 -g -fomit-frame-pointer -pthread -o "$work/wl-deep" \
	"$root/tests/workloads/wl-deep.c"

run_target() {
	"$work/wl-deep" $((secs + 5)) &
	pid=$!
	sleep 0.3
}

run_target
perf record -q -e cpu-clock -F 999 --call-graph dwarf,61440 -p "$pid" \
	-o "$work/perf.data" -- sleep "$secs" 2>/dev/null
kill "$pid"
wait "$pid" 2>/dev/null || true
perf_size=$(stat -c %s "$work/perf.data")
perf_samples=$(perf script -i "$work/perf.data" -F time 2>/dev/null | wc -l)

run_target
"$bin/sp-record/sp-record" -p "$pid" -F 999 -d "$secs" --stack-size 61440 \
	2>/dev/null | "$bin/sp-unwind/sp-unwind" -q |
	"$bin/sp-spool/sp-spool" write -q "$work/run.spool"
kill "$pid"
wait "$pid" 2>/dev/null || true
"$bin/sp-spool/sp-spool" info --json "$work/run.spool" >"$work/info.json"
sp_size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_size"])' "$work/info.json")
sp_samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$work/info.json")
sp_stream=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stream_bytes"])' "$work/info.json")

awk -v ps="$perf_size" -v pn="$perf_samples" -v ss="$sp_size" \
	-v sn="$sp_samples" -v st="$sp_stream" -v secs="$secs" 'BEGIN {
	pb = ps / pn; sb = ss / sn
	printf "workload: wl-deep, %d s at 999 Hz, 61440-byte stack copies\n", secs
	printf "perf.data: %d bytes, %d samples, %.1f bytes/sample\n", ps, pn, pb
	printf "spool:     %d bytes, %d samples, %.2f bytes/sample (unwound stream %d bytes)\n", ss, sn, sb, st
	printf "ratio:     the spool is %.0f times smaller per sample\n", pb / sb
	exit !(pb / sb >= 50)
}'
