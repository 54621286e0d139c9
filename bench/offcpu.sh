#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/offcpu.sh: `make bench-offcpu`.  Off-CPU time as stackpulse
# records it, next to perf's scheduler view of the same workload:
#
#  1. Accuracy.  wl-offcpu (tests/workloads/) runs OFFCPU_SECONDS under
#     `sp-record -F 999 --off-cpu`, then again under `perf sched record`.
#     Per thread: the elapsed time the workload prints, the time on and
#     off the CPU that `sp-fold --mode cpu|off-cpu --weight time` gives,
#     and the run time and wait time `perf sched timehist` gives.
#  2. Overhead.  wl-switchy, two threads passing a byte over pipes (about
#     190,000 round trips a second here, each thread switched out at every
#     one), OFFCPU_REPS times under each recorder; the median round trips
#     per second, the bytes written and the events lost.
#
# Writes bench/results/offcpu.md; docs/PERFORMANCE.md quotes it.  Needs
# root (or CAP_PERFMON) and perf(1) for the perf rows.  Knobs:
# OFFCPU_SECONDS (3), OFFCPU_REPS (3), OFFCPU_BIN (the work tree).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${OFFCPU_BIN:-$root}
secs=${OFFCPU_SECONDS:-3}
reps=${OFFCPU_REPS:-3}
out=$root/bench/results/offcpu.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sp-bench-offcpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

for t in sp-record sp-unwind sp-symbolize sp-fold; do
	[ -x "$bin/$t/$t" ] || { echo "offcpu: $bin/$t/$t is not built: run make" >&2; exit 2; }
done
perf=$(command -v perf || true)
command -v taskset >/dev/null || { echo "offcpu: needs taskset (util-linux)" >&2; exit 2; }
for w in wl-offcpu wl-switchy; do
	${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$tmp/$w" \
		"$root/tests/workloads/$w.c"
done
rec() { "$bin/sp-record/sp-record" "$@"; }

# ms NS: nanoseconds as milliseconds
ms() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1e6 }'; }

# bythread FOLDED: "NAME TOTAL" per first frame, in nanoseconds
bythread() {
	awk '{ n = $NF; sub(/;.*/, ""); t[$0] += n }
	     END { for (k in t) printf "%s %.0f\n", k, t[k] }' "$1"
}

{
echo "# Off-CPU time: stackpulse and perf sched"
echo
echo "\`make bench-offcpu\` (bench/offcpu.sh), $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs."
echo

# 1. Accuracy --------------------------------------------------------------
rec -F 999 --off-cpu -o "$tmp/sp.raw" -- "$tmp/wl-offcpu" "$secs" \
	>"$tmp/sp.elapsed" 2>"$tmp/sp.err"
"$bin/sp-unwind/sp-unwind" -q -o "$tmp/sp.unw" "$tmp/sp.raw"
"$bin/sp-symbolize/sp-symbolize" -o "$tmp/sp.sym" "$tmp/sp.unw" 2>/dev/null
"$bin/sp-fold/sp-fold" --mode cpu --weight time -o "$tmp/on.folded" "$tmp/sp.sym"
"$bin/sp-fold/sp-fold" --mode off-cpu --weight time -o "$tmp/off.folded" "$tmp/sp.sym"
bythread "$tmp/on.folded" >"$tmp/sp.on"
bythread "$tmp/off.folded" >"$tmp/sp.off"

perf_sched=
if [ -n "$perf" ] && "$perf" sched record -q -o "$tmp/sched.data" -- \
	"$tmp/wl-offcpu" "$secs" >"$tmp/perf.elapsed" 2>"$tmp/perf.err"; then
	# a line per switch-out: wait time (off the CPU before it ran),
	# scheduling delay (part of the wait) and run time, in ms
	"$perf" sched timehist -i "$tmp/sched.data" 2>/dev/null |
		awk '$3 ~ /\[/ { n = $3; sub(/\[.*/, "", n);
			wait[n] += $4; run[n] += $6 }
		     END { for (k in run) printf "%s %.0f %.0f\n", k, run[k], wait[k] }' \
		>"$tmp/perf.threads"
	perf_sched=1
fi

echo "## 1. Accuracy: time on and off the CPU per thread of wl-offcpu"
echo
echo "Each row is a thread of one run of \`wl-offcpu $secs\`: elapsed is what the"
echo "thread measured itself; stackpulse's columns are \`sp-fold --weight time\` of"
echo "\`sp-record -F 999 --off-cpu\` (on: samples times the period; off: the"
echo "switch intervals); perf's are \`perf sched timehist\` of \`perf sched record\`"
echo "(run time; wait time, switch-out to switch-in), of a second run.  All in ms."
echo
echo "| thread | sp elapsed | sp on | sp off | sp on+off | perf elapsed | perf run | perf wait | perf run+wait |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for th in mixed ticker holder waiter; do
	e=$(awk -v t="$th" '$1 == t { print $3 }' "$tmp/sp.elapsed")
	on=$(awk -v t="$th" '$1 == t { print $2 }' "$tmp/sp.on")
	off=$(awk -v t="$th" '$1 == t { print $2 }' "$tmp/sp.off")
	row="| $th | $(ms "${e:-0}") | $(ms "${on:-0}") | $(ms "${off:-0}") | $(ms $((${on:-0} + ${off:-0})))"
	if [ -n "$perf_sched" ]; then
		pe=$(awk -v t="$th" '$1 == t { print $3 }' "$tmp/perf.elapsed")
		pr=$(awk -v t="$th" '$1 == t { print $2 }' "$tmp/perf.threads")
		pw=$(awk -v t="$th" '$1 == t { print $3 }' "$tmp/perf.threads")
		row="$row | $(ms "${pe:-0}") | ${pr:--} | ${pw:--} | $(( ${pr:-0} + ${pw:-0} )) |"
	else
		row="$row | - | - | - | - |"
	fi
	echo "$row"
done
echo
echo "Where mixed's waits went (stackpulse, the frame that says why, ms):"
echo
echo '```'
awk '/^mixed;/ { n = $NF; k = $0; sub(/.*;/, "", k); sub(/ [0-9]+$/, "", k);
	t[k] += n } END { for (k in t) printf "%8.0f  %s\n", t[k] / 1e6, k }' \
	"$tmp/off.folded" | sort -rn
echo '```'
echo
echo "sp-record said: $(sed 's/^sp-record: //' "$tmp/sp.err" | paste -sd ';' | sed 's/;/; /g')"
echo

# 2. Overhead --------------------------------------------------------------
# run NAME CMD...: wl-switchy under CMD, OFFCPU_REPS times; a table row
run() {
	local name=$1 i rate bytes lost
	shift
	: >"$tmp/rates"
	for i in $(seq "$reps"); do
		rm -f "$tmp/o"
		"$@" >"$tmp/rt" 2>"$tmp/err" || true
		awk -v s="$secs" '{ printf "%.0f\n", $1 / s }' "$tmp/rt" >>"$tmp/rates"
	done
	rate=$(sort -n "$tmp/rates" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	[ -z "$base" ] && base=$rate
	bytes=$( [ -f "$tmp/o" ] && stat -c %s "$tmp/o" || echo 0)
	lost=$(sed -n 's/.*samples, \([0-9]*\) lost events.*/\1/p' "$tmp/err")
	if [ -z "$lost" ] && [ -f "$tmp/o" ] && [ -n "$perf" ]; then
		# the samples lost, per event (not the LOST records)
		lost=$("$perf" report -i "$tmp/o" --stats 2>/dev/null |
			awk '/LOST_SAMPLES events:/ { n = $3 } END { print n + 0 }')
	fi
	printf '| %s | %s | %s%% | %s | %s |\n' "$name" "$rate" \
		"$(awk -v r="$rate" -v b="$base" 'BEGIN { printf "%.0f", 100 * r / b }')" \
		"$(awk -v b="$bytes" 'BEGIN { printf "%.1f MB/s", b / 1e6 / '"$secs"' }')" \
		"${lost:--}"
}

echo "## 2. Overhead: wl-switchy's round trips per second"
echo
echo "Median of $reps runs of \`wl-switchy $secs\` under each recorder, launched by it,"
echo "writing to a file in ${TMPDIR:-/tmp}.  Both threads of the workload are pinned to"
echo "CPU 0 (every round trip is two switches there), the recorder to CPU 1: across"
echo "two CPUs the round trips depend on how deep the idle CPU sleeps, and a busy"
echo "recorder makes the workload faster.  Lost: samples the kernel dropped"
echo "(sp-record's count; perf report --stats's LOST_SAMPLES)."
echo
echo "| recorder | round trips/s | of none | written | lost |"
echo "|---|---:|---:|---:|---:|"
base=
sw=(taskset -c 0 "$tmp/wl-switchy" "$secs")
on1=(taskset -c 1)
run "none" "${sw[@]}"
run "sp-record -F 999 (all: --stack-size 16384)" "${on1[@]}" "$bin/sp-record/sp-record" --stack-size 16384 -F 999 -o "$tmp/o" -- "${sw[@]}"
run "sp-record -F 999 --off-cpu" \
	"${on1[@]}" "$bin/sp-record/sp-record" --stack-size 16384 -F 999 --off-cpu -o "$tmp/o" -- "${sw[@]}"
run "sp-record -F 999 --off-cpu --off-cpu-min 1ms" \
	"${on1[@]}" "$bin/sp-record/sp-record" --stack-size 16384 -F 999 --off-cpu --off-cpu-min 1ms \
	-o "$tmp/o" -- "${sw[@]}"
run "sp-record --off-cpu-only --off-cpu-min 1ms" \
	"${on1[@]}" "$bin/sp-record/sp-record" --stack-size 16384 --off-cpu-only --off-cpu-min 1ms \
	-o "$tmp/o" -- "${sw[@]}"
if [ -n "$perf" ]; then
	run "perf record -F 999 --call-graph dwarf,16384" "${on1[@]}" "$perf" record -q \
		-F 999 --call-graph dwarf,16384 -o "$tmp/o" -- "${sw[@]}"
	run "perf sched record" "${on1[@]}" "$perf" sched record -q -o "$tmp/o" -- "${sw[@]}"
	run "perf record -e context-switches -c 1 --call-graph dwarf,16384" \
		"${on1[@]}" "$perf" record -q -e context-switches -c 1 --call-graph dwarf,16384 \
		-o "$tmp/o" -- "${sw[@]}"
fi
} >"$out.new"
mv "$out.new" "$out"
cat "$out"
