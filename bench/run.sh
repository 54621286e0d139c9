#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run.sh: `make bench`.  stackpulse against perf record --call-graph
# dwarf, side by side: overhead, size, offline CPU, correctness, peak RSS,
# lost events.  Writes bench/results/*.json and docs/PERFORMANCE.md.
#
#   make bench                 the full run (about 20 minutes)
#   BENCH_QUICK=1 make bench   a smoke run (about 3 minutes), written to
#                              bench/results/quick.{json,md} only
#
# Other knobs (BENCH_REPS, BENCH_WORK_S, BENCH_FREQS, BENCH_STACK, ...) are
# listed at the top of bench/bench.py.  Needs root (or CAP_PERFMON with
# CAP_SYS_PTRACE) to attach to the workloads.  No timed assertion here is
# part of make check.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=${BENCH_TMP:-/tmp/sp-bench}
export BENCH_TMP="$tmp"

# dependencies: perf, GNU time, python3, a C compiler
need=
[ -x /usr/bin/perf ] || need="$need linux-perf"
[ -x /usr/bin/time ] || need="$need time"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v cc >/dev/null 2>&1 || need="$need gcc"
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "bench: installing$need"
		# shellcheck disable=SC2086	# $need is a list of package names
		apt-get install -y $need >/dev/null || {
			# shellcheck disable=SC2086
			apt-get update >/dev/null && apt-get install -y $need >/dev/null
		}
	else
		echo "bench: missing packages:$need (install them, or run as root)" >&2
		exit 2
	fi
fi
if [ "$(id -u)" != 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	echo "bench: needs root, or kernel.perf_event_paranoid <= 1" >&2
	exit 2
fi

# the tools (make bench has built them already; make them when run alone)
for t in sp-record sp-unwind sp-symbolize sp-fold; do
	if [ ! -x "$root/$t/$t" ]; then
		make -C "$root" --no-print-directory all
		break
	fi
done

# the workloads: deep known stacks, -O2 -fomit-frame-pointer
mkdir -p "$tmp"
${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra \
	-o "$tmp/bw-deep" "$root/bench/workloads/bw-deep.c"
# what each measured command costs, as wait4 reports it (bench/rusage.c)
${CC:-cc} -O2 -Wall -Wextra -o "$tmp/rusage" "$root/bench/rusage.c"

# Python 3.12 with -X perf, where available
py=${BENCH_PY312:-}
if [ -z "$py" ]; then
	pyroot=$(pyenv root 2>/dev/null || echo /root/.pyenv)
	for p in "$pyroot/versions/3.12.1/bin/python3.12" "$(command -v python3.12 || true)"; do
		if [ -n "$p" ] && [ -x "$p" ] &&
			"$p" -X perf -c '
import os, sys
ok = sys.is_stack_trampoline_active()
sys.deactivate_stack_trampoline()
try:
    os.unlink("/tmp/perf-%d.map" % os.getpid())
except OSError:
    pass
sys.exit(not ok)' 2>/dev/null; then
			py=$p
			break
		fi
	done
fi
export BENCH_PY312="$py"

exec python3 "$root/bench/bench.py"
