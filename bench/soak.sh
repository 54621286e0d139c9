#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/soak.sh: `make soak`.  A long recording of processes and threads
# that come and go, through the whole pipeline, watching every stage's
# memory:
#
#   sp-record -p WORKLOAD -F 99 | tee RAW | sp-unwind | tee | sp-spool write SPOOL
#                                                         `-> sp-symbolize
#
# The workload (bench/workloads) starts three or four short-lived processes
# a second (bw-churn child, sh, awk), a thread every 50 ms in another
# process (bw-churn threads), and, when node is installed, a JIT that adds
# to its perf map all its life (node --perf-basic-prof bw-jit.js), started
# anew every 20 s, as services restart.  Every SOAK_INTERVAL seconds each
# stage's resident set, and the anonymous part of it, go into
# bench/results/soak.csv.  The anonymous part is what a stage keeps; the
# rest are pages of the files it maps (its binaries, and the targets' ELF
# files it reads: node's is 100 MB), which grow with the code it has read
# and are the kernel's page cache.  Then it checks that:
#
#   - no event was lost at 99 Hz;
#   - every stage's memory is flat: the largest anonymous resident set in
#     the second half of the run is at most SOAK_SLACK_KB above that of
#     the first half;
#   - the spool holds what a replay of the raw stream gives (sp-unwind and
#     sp-spool write run again on RAW, offline; both spools decoded with
#     sp-spool cat and compared);
#
# symbolizes and folds the spool, writes bench/results/soak.md and puts it
# into docs/PERFORMANCE.md between the soak:begin and soak:end markers
# (SOAK_DOC=0: not).  Exit status 0 when every check passed, 1 when one
# failed, 2 when it could not run.
#
#   make soak                          30 minutes (SOAK_SECONDS=1800)
#   SOAK_SECONDS=300 make soak         5 minutes
#
# Knobs: SOAK_SECONDS (1800), SOAK_INTERVAL (10), SOAK_SLACK_KB (1024),
# SOAK_TMP (/tmp/sp-soak: the raw stream, gzipped, about 1 GB an hour),
# SOAK_BIN (the tools' build directory, default the work tree).  Needs root
# (or CAP_PERFMON with CAP_SYS_PTRACE).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SOAK_BIN:-$root}
secs=${SOAK_SECONDS:-1800}
interval=${SOAK_INTERVAL:-10}
slack=${SOAK_SLACK_KB:-1024}
tmp=${SOAK_TMP:-/tmp/sp-soak}
out=$root/bench/results
# shellcheck source=bench/stages.sh
. "$root/bench/stages.sh"

die() {
	echo "soak: $*" >&2
	exit 2
}

for t in sp-record sp-unwind sp-spool sp-symbolize sp-fold; do
	[ -x "$bin/$t/$t" ] || die "$bin/$t/$t is not built: run make"
done
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"
if [ "$(id -u)" != 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	die "needs root, or kernel.perf_event_paranoid <= 1"
fi
node=$(command -v node || true)

rm -rf "$tmp"
mkdir -p "$tmp" "$out"
${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra \
	-o "$tmp/bw-churn" "$root/bench/workloads/bw-churn.c"

pids=()
cleanup() {
	local p
	# the workload is a process group of its own; the stages are ours
	[ -n "${wl:-}" ] && kill -- -"$wl" 2>/dev/null
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	if [ -f "$tmp/jit.pids" ]; then
		while read -r p; do
			rm -f "/tmp/perf-$p.map"
		done <"$tmp/jit.pids"
		rm -f "$tmp/jit.pids"
	fi
	return 0
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# The workload: started held, so that sp-record follows every process and
# thread of it from the first.
cat >"$tmp/workload.sh" <<'EOF'
tmp=$1 secs=$2 node=$3 jitjs=$4
while [ ! -e "$tmp/go" ]; do sleep 0.05; done
"$tmp/bw-churn" threads "$secs" &
if [ -n "$node" ]; then
	while :; do
		"$node" --perf-basic-prof "$jitjs" 20 &
		echo $! >>"$tmp/jit.pids"	# their perf maps outlive them
		wait $!
	done &
fi
end=$((SECONDS + secs))
while [ "$SECONDS" -lt "$end" ]; do
	"$tmp/bw-churn" child 40
	sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done'
	awk 'BEGIN { for (i = 0; i < 300000; i++) s += i }'
	sleep 0.6
done
wait
EOF
setsid bash "$tmp/workload.sh" "$tmp" "$((secs + 5))" "$node" \
	"$root/bench/workloads/bw-jit.js" </dev/null >/dev/null 2>&1 &
wl=$!

# The pipeline, a stage a process, joined by FIFOs so that each one's
# resident set can be read.
mkfifo "$tmp/raw" "$tmp/raw2" "$tmp/gz" "$tmp/unw" "$tmp/spool" "$tmp/sym"
gzip -1 <"$tmp/gz" >"$tmp/soak.raw.gz" &
pids+=($!)
"$bin/sp-spool/sp-spool" write -q "$tmp/soak.spool" <"$tmp/spool" \
	2>"$tmp/spool.err" &
spool=$!
pids+=("$spool")
"$bin/sp-symbolize/sp-symbolize" <"$tmp/sym" >/dev/null 2>"$tmp/sym.err" &
sym=$!
pids+=("$sym")
tee "$tmp/sym" <"$tmp/unw" >"$tmp/spool" &
pids+=($!)
"$bin/sp-unwind/sp-unwind" <"$tmp/raw2" >"$tmp/unw" 2>"$tmp/unwind.err" &
unw=$!
pids+=("$unw")
tee "$tmp/gz" <"$tmp/raw" >"$tmp/raw2" &
pids+=($!)
"$bin/sp-record/sp-record" -p "$wl" -F 99 -d "$secs" >"$tmp/raw" \
	2>"$tmp/record.err" &
rec=$!
pids+=("$rec")

for _ in $(seq 200); do
	grep -q attached "$tmp/record.err" 2>/dev/null && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.05
done
grep -q attached "$tmp/record.err" || die "sp-record did not attach: $(cat "$tmp/record.err")"
touch "$tmp/go"
echo "soak: recording for $secs s (every stage's memory each $interval s, into $out/soak.csv)"

stages=(sp-record sp-unwind sp-spool sp-symbolize)
csv=$out/soak.csv
stage_header "${stages[@]}" >"$csv"
start=$SECONDS
while kill -0 "$rec" 2>/dev/null; do
	sleep "$interval" &
	wait $! || true
	kill -0 "$rec" 2>/dev/null || break
	stage_row "$((SECONDS - start))" "$rec" "$unw" "$spool" "$sym" >>"$csv"
done
rc=0
wait "$rec" || rc=$?
for p in "${pids[@]}"; do
	[ "$p" = "$rec" ] && continue
	st=0
	wait "$p" || st=$?
	# 1 is partial (a frame left unnamed, an event lost): checked below
	[ "$st" -le 1 ] ||
		die "a stage of the pipeline failed (pid $p, status $st): $(cat "$tmp"/*.err)"
done
pids=()
kill -- -"$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
wl=
echo "soak: recorded; checking"

fails=0
check() {
	if [ "$1" = ok ]; then
		echo "| $2 | ok |" >>"$tmp/checks.md"
	else
		echo "| $2 | FAILED |" >>"$tmp/checks.md"
		fails=$((fails + 1))
	fi
}
: >"$tmp/checks.md"

# no event lost
lost=$(sed -n 's/^sp-record: .* \([0-9][0-9]*\) lost events.*/\1/p' "$tmp/record.err")
samples=$(sed -n 's/^sp-record: \([0-9][0-9]*\) samples.*/\1/p' "$tmp/record.err")
threads=$(sed -n 's/^sp-record: .* lost events, \([0-9][0-9]*\) threads.*/\1/p' "$tmp/record.err")
if [ "$rc" = 0 ] && [ "${lost:-x}" = 0 ]; then
	check ok "no event lost ($samples samples, $threads threads)"
else
	check failed "no event lost: sp-record says '$(tail -n 1 "$tmp/record.err")', exit $rc"
fi

# the spool is what a replay of the raw stream gives
gzip -dc "$tmp/soak.raw.gz" | "$bin/sp-unwind/sp-unwind" -q |
	"$bin/sp-spool/sp-spool" write -q "$tmp/replay.spool"
"$bin/sp-spool/sp-spool" cat "$tmp/soak.spool" >"$tmp/soak.unw"
"$bin/sp-spool/sp-spool" cat "$tmp/replay.spool" >"$tmp/replay.unw"
if cmp -s "$tmp/soak.unw" "$tmp/replay.unw"; then
	check ok "the spool equals a replay of the raw stream ($(stat -c %s "$tmp/soak.unw") bytes of unwound stream)"
else
	check failed "the spool equals a replay of the raw stream: $(cmp "$tmp/soak.unw" "$tmp/replay.unw" 2>&1)"
fi

# every stage flat: the second half's largest anonymous resident set
# within slack of the first half's
flat=$(stage_flat "$csv" "$slack" "${stages[@]}")
while IFS='|' read -r verdict name a b; do
	check "$verdict" "$name flat: largest anonymous resident set $a KiB in the first half, $b KiB in the second (at most $slack KiB more)"
done <<<"$flat"

# symbolize and fold the spool, offline
"$bin/sp-spool/sp-spool" cat "$tmp/soak.spool" |
	/usr/bin/time -o "$tmp/sym.kb" -f %M "$bin/sp-symbolize/sp-symbolize" 2>/dev/null |
	"$bin/sp-fold/sp-fold" --top 12 >"$tmp/top.txt" 2>/dev/null || true

# the report
{
	echo "Run of $(date -u +%Y-%m-%d), $secs s (\`SOAK_SECONDS=$secs make soak\`), $(nproc) CPUs, $(uname -r); workload: bw-churn child, sh and awk started about 3.5 times a second, bw-churn threads (a thread every 50 ms)${node:+, node --perf-basic-prof bw-jit.js (a new JIT function every 200 ms, node started anew every 20 s)}; $(tail -n 1 "$csv" | cut -d, -f2) was the last pid handed out."
	echo
	echo "| check | |"
	echo "|---|---|"
	cat "$tmp/checks.md"
	echo
	echo "CPU of each stage per second of the run, and its resident set, anonymous part in parentheses (KiB), read every $interval s: first / middle / last / largest (sp-spool is sp-spool write):"
	echo
	stage_table "$csv" "${stages[@]}"
	echo
	echo "The curve, a point a minute: resident set (anonymous part), KiB:"
	echo
	stage_curve "$csv" "$interval" "${stages[@]}"
	echo
	echo "Offline: \`sp-spool cat | sp-symbolize | sp-fold\` of the $(stat -c %s "$tmp/soak.spool")-byte spool, sp-symbolize's peak $(tail -n 1 "$tmp/sym.kb") KiB; $(tail -n 1 "$tmp/unwind.err")."
} >"$out/soak.md"
cat "$out/soak.md"
echo
head -n 14 "$tmp/top.txt"

doc=$root/docs/PERFORMANCE.md
if [ "${SOAK_DOC:-1}" = 1 ] && grep -q '<!-- soak:begin' "$doc" &&
	grep -q '<!-- soak:end -->' "$doc"; then
	awk -v table="$out/soak.md" '
		/<!-- soak:begin/ {
			print "<!-- soak:begin (generated by bench/soak.sh; edits here are overwritten) -->"
			while ((getline l < table) > 0) print l
			skip = 1
			next
		}
		/<!-- soak:end -->/ { skip = 0 }
		!skip' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
	echo "soak: wrote the report into $doc"
fi
[ "$fails" = 0 ] || { echo "soak: $fails check(s) failed; what it recorded is in $tmp" >&2; exit 1; }
cleanup
rm -rf "$tmp"
