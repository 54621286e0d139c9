#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/python.sh: `make bench-python`.  What reading CPython's frames in
# each sample costs the target: a Python program of fixed work (a call
# chain PY_DEPTH deep whose leaf spins), pinned to CPU 0 with the recorder
# on CPU 1, run PY_REPS times
#
#  - alone,
#  - under sp-record -F 999 --python off (native stacks only),
#  - under sp-record -F 999 (the BPF program walks the frames),
#  - under perf record -F 999 --call-graph dwarf, as a peer (when perf is
#    installed),
#
# taking turns, giving the median time of the work, the samples, and what the Python
# walk adds per sample: (time with it - time without) / samples.  One more
# run with kernel.bpf_stats_enabled gives the kernel's own count of the
# program's time per run.  Writes bench/results/python.md;
# docs/PERFORMANCE.md quotes it.  Needs root.  Knobs: PY_REPS (5),
# PY_DEPTH (30), PY_WORK (100000000), PY_BIN (the work tree), PYTHON
# (/usr/bin/python3.11).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PY_BIN:-$root}
reps=${PY_REPS:-5}
depth=${PY_DEPTH:-30}
work=${PY_WORK:-100000000}
py=${PYTHON:-/usr/bin/python3.11}
out=$root/bench/results/python.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sp-bench-python.XXXXXX")
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
trap 'echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

[ -x "$bin/sp-record/sp-record" ] || { echo "python: $bin/sp-record/sp-record is not built: run make" >&2; exit 2; }
[ -x "$py" ] || { echo "python: $py is missing" >&2; exit 2; }
command -v taskset >/dev/null || { echo "python: needs taskset (util-linux)" >&2; exit 2; }
perf=$(command -v perf || true)

cat >"$tmp/work.py" <<EOF
import sys, time
def leaf(n):
    x = 0
    for i in range(n): x += i
    return x
def chain(d, n):
    return chain(d - 1, n) if d else leaf(n)
t = time.perf_counter()
for _ in range(20):
    chain($depth, $work // 20)
sys.stdout.write("%.6f\n" % (time.perf_counter() - t))
EOF

# run MODE: one run; prints "seconds samples"
run() {
	local mode=$1
	case $mode in
	alone)
		taskset -c 0 "$py" "$tmp/work.py" >"$tmp/t"
		echo "$(cat "$tmp/t") 0"
		;;
	off | auto)
		taskset -c 1 "$bin/sp-record/sp-record" -F 999 --python "$mode" \
			-o "$tmp/r.raw" -- taskset -c 0 "$py" "$tmp/work.py" \
			>"$tmp/t" 2>"$tmp/err"
		echo "$(cat "$tmp/t") $(sed -n 's/.*: \([0-9]*\) samples, .*/\1/p' "$tmp/err")"
		;;
	perf)
		taskset -c 1 "$perf" record -q -F 999 --call-graph dwarf \
			-o "$tmp/perf.data" -- taskset -c 0 "$py" "$tmp/work.py" \
			>"$tmp/t" 2>/dev/null
		echo "$(cat "$tmp/t") $("$perf" report -i "$tmp/perf.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { for (i = 1; i < NF; i++)
				if ($i == "events:") { print $(i + 1); exit } }')"
		;;
	esac
}

# median of the first column, and of the second, of REPS lines
median() {
	sort -n -k1,1 | awk '{ t[NR] = $1; s[NR] = $2 }
		END { m = int((NR + 1) / 2); printf "%s %s\n", t[m], s[m] }'
}

modes="alone off auto"
[ -n "$perf" ] && modes="$modes perf"
# the modes take turns, so that a machine's drift touches each alike
for _ in $(seq "$reps"); do
	for m in $modes; do
		run "$m" >>"$tmp/$m.all"
	done
done
for m in $modes; do
	median <"$tmp/$m.all" >"$tmp/$m.med"
done
# the kernel's count of the program's runs and time
echo 1 >/proc/sys/kernel/bpf_stats_enabled
run auto >/dev/null
echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
bpf=$(sed -n 's/.*ran \([0-9]*\) times, \([0-9]*\) ns each.*/\1 \2/p' "$tmp/err")

{
echo "# Python frames: what reading them in each sample costs"
echo
echo "\`make bench-python\` (bench/python.sh), $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs,"
echo "$("$py" -V 2>&1) ($py), a chain $depth calls deep, median of $reps runs,"
echo "the target on CPU 0 and the recorder on CPU 1."
echo
echo "| recording | work, s | over alone | samples | per sample |"
echo "|---|---:|---:|---:|---:|"
read -r t0 _ <"$tmp/alone.med"
read -r toff soff <"$tmp/off.med"
for m in $modes; do
	read -r t s <"$tmp/$m.med"
	case $m in
	alone) name="none" ;;
	off) name="sp-record -F 999 --python off" ;;
	auto) name="sp-record -F 999 (Python frames)" ;;
	perf) name="perf record -F 999 --call-graph dwarf" ;;
	esac
	awk -v n="$name" -v t="$t" -v t0="$t0" -v s="$s" -v toff="$toff" -v m="$m" 'BEGIN {
		per = "-"
		if (m == "auto" && s > 0) per = sprintf("%.1f us over --python off", (t - toff) * 1e6 / s)
		else if (m != "alone" && s > 0) per = sprintf("%.1f us over none", (t - t0) * 1e6 / s)
		printf "| %s | %.3f | %+.1f%% | %s | %s |\n", n, t, (t / t0 - 1) * 100, s ? s : "-", per }'
done
echo
if [ -n "$bpf" ]; then
	set -- $bpf
	echo "The kernel's count (kernel.bpf_stats_enabled): the program ran $1 times, $2 ns each."
fi
} >"$out"
cat "$out"
