#!/bin/sh
# SPDX-License-Identifier: MIT
# symbolize.sh: what sp-symbolize costs per distinct address and per sample,
# next to `perf script` (with its default inline resolution) on a recording
# of the same workload taken at the same time.
#
# usage: sh bench/symbolize.sh [BUILD-DIR [SECONDS [HZ]]]
#        (defaults: the work tree's tools, 5 s, 999 Hz; needs root or
#        CAP_PERFMON, perf(1) optional)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root}
secs=${2:-5}
hz=${3:-999}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sp-bench-sym.XXXXXX")
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM

now() { date +%s%N; }

# a workload with inline chains and C++ names: both test programs at once
cc -O2 -g -fomit-frame-pointer -I"$root/tests/workloads" -o "$tmp/sym-inline" \
	"$root/tests/workloads/sym-inline.c"
g++ -O2 -g -o "$tmp/sym-cxx" "$root/tests/workloads/sym-cxx.cc"
"$tmp/sym-inline" $((secs + 3)) &
pid=$!
"$tmp/sym-cxx" $((secs + 3)) &
pid2=$!
sleep 0.3

perf_ok=
if command -v perf >/dev/null 2>&1; then
	perf record -q -g -F "$hz" -p "$pid,$pid2" -o "$tmp/perf.data" \
		-- sleep "$secs" >/dev/null 2>&1 && perf_ok=1 &
	perfjob=$!
fi
"$bin/sp-record/sp-record" -p "$pid,$pid2" -F "$hz" -d "$secs" -o "$tmp/run.raw" 2>/dev/null
[ -n "${perfjob:-}" ] && wait "$perfjob" || true
[ -s "$tmp/perf.data" ] && perf_ok=1
# measure on an idle machine: the workloads are done
kill "$pid" "$pid2" 2>/dev/null || true
wait "$pid" "$pid2" 2>/dev/null || true
"$bin/sp-unwind/sp-unwind" <"$tmp/run.raw" >"$tmp/run.unw" 2>/dev/null || true

t0=$(now)
"$bin/sp-symbolize/sp-symbolize" --stats -o "$tmp/run.sym" "$tmp/run.unw" 2>"$tmp/stats"
t1=$(now)
samples=$(grep -c '^sample' "$tmp/run.sym" || true)
distinct=$(sed -n 's/.* \([0-9]*\) distinct addresses resolved.*/\1/p' "$tmp/stats")
frames=$(grep -c '^frame' "$tmp/run.sym" || true)
ns=$((t1 - t0))
echo "sp-symbolize: $samples samples, $frames frame lines, $distinct distinct addresses, $((ns / 1000000)) ms"
sed 's/^/  /' "$tmp/stats"
[ "$samples" -gt 0 ] && echo "  per sample: $((ns / samples)) ns"
[ "${distinct:-0}" -gt 0 ] && echo "  per distinct address: $((ns / distinct)) ns (mostly start-up: kallsyms, debug files)"

# per distinct address, without start-up costs: 3000 functions of one
# module, 1000 stacks of 3 frames, 100000 samples (the stream is built by
# the test suite's helper)
sed -n "/<<'EOF_PL'/,/^EOF_PL/p" "$root/tests/bats/symbolize-depth.bats" |
	sed '1d;$d' >"$tmp/mk.pl"
i=0
while [ $i -lt 3000 ]; do
	echo "int __attribute__((noinline)) f$i(int x) { return x * $i + 1; }"
	i=$((i + 1))
done >"$tmp/many.c"
echo 'int main(int c, char **v) { (void)v; return f0(c); }' >>"$tmp/many.c"
cc -no-pie -O1 -g -o "$tmp/many" "$tmp/many.c"
nm "$tmp/many" | awk '$3 ~ /^f[0-9]+$/ { print $1 }' | sort >"$tmp/addrs"
for samples in 0 100; do
	{
		echo 'header cpu-clock freq 99'
		echo "mmap 9 0x400000 0x100000 0 5 $tmp/many"
		awk -v s=$samples '{ a[NR] = $1 } END {
			for (i = 1; i <= 1000; i++) {
				printf "stack 9 %d root - 0x%s,0x%s,0x%s 100\n", i,
					a[(i * 3) % NR + 1], a[(i * 3 + 1) % NR + 1],
					a[(i * 3 + 2) % NR + 1]
				if (s) printf "samples %d 9 %d\n", s, i
			}
		}' "$tmp/addrs"
		echo "summary $((samples * 1000)) 1000"
	} | perl "$tmp/mk.pl" >"$tmp/many$samples.unw"
done
: >"$tmp/empty.c"
for opts in "" "--no-lines --no-inline"; do
	# shellcheck disable=SC2086
	{
		t0=$(now)
		"$bin/sp-symbolize/sp-symbolize" --kallsyms /dev/null $opts "$tmp/many0.unw" >/dev/null
		t1=$(now)
		"$bin/sp-symbolize/sp-symbolize" --kallsyms /dev/null $opts "$tmp/many100.unw" >/dev/null
		t2=$(now)
	}
	echo "synthetic, 3000 distinct addresses ${opts:-(lines and inlines)}:"
	echo "  stacks only: $(((t1 - t0) / 1000000)) ms, $(((t1 - t0) / 3000)) ns per distinct address (start-up included)"
	echo "  + 100000 samples: $(((t2 - t1) / 100000)) ns more per sample"
done

if [ -n "$perf_ok" ]; then
	t0=$(now)
	psamples=$(perf script -i "$tmp/perf.data" -F comm,ip,sym,srcline 2>/dev/null |
		grep -c '^[^ 	]' || true)
	t1=$(now)
	ns=$((t1 - t0))
	echo "perf script (default inline resolution, srcline): $psamples samples, $((ns / 1000000)) ms"
	[ "$psamples" -gt 0 ] && echo "  per sample: $((ns / psamples)) ns"
	t0=$(now)
	perf script -i "$tmp/perf.data" >/dev/null 2>&1 || true
	t1=$(now)
	echo "perf script (defaults): $(((t1 - t0) / 1000000)) ms"
else
	echo "perf script: skipped (perf missing or cannot record)"
fi
