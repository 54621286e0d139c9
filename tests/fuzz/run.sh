#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh OUT SECONDS NAME...: run each libFuzzer harness OUT/fuzz/NAME for
# SECONDS over its seed corpus, its regression inputs and what earlier runs
# found (OUT/corpus/NAME, kept between runs), then print one line per
# harness.  FUZZ_RUNS=N runs each for N executions instead (the long run of
# docs/FUZZING.md).  A crash, leak or timeout leaves its input in
# OUT/crashes/NAME/ and fails the run; copy it into tests/fuzz/regress/NAME/
# once fixed, so that make check replays it for ever.
set -u
out=$1 seconds=$2
shift 2
status=0
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

printf '%-10s %12s %8s %10s %8s  %s\n' harness runs seconds "runs/s" corpus result >"$summary"
for name in "$@"; do
	bin=$out/fuzz/$name
	work=$out/corpus/$name
	crashes=$out/crashes/$name
	mkdir -p "$work" "$crashes"
	if [ -n "${FUZZ_RUNS:-}" ]; then
		limit="-runs=$FUZZ_RUNS"
	else
		limit="-max_total_time=$seconds"
	fi
	log=$out/$name.log
	echo "  FUZZ    $name ($limit)"
	start=$(date +%s)
	# -timeout: an input that takes 10 s is a hang; -rss_limit_mb: a
	# reader that allocates what the input claims instead of what it has.
	# Past half that limit libFuzzer would purge ASan's caches every
	# second, unmapping and faulting in memory: a long run of rawsym
	# fell from 1,000 to 300 runs a second so, its RSS flat at 500 MB.
	"$bin" $limit -timeout=10 -rss_limit_mb=1024 \
		-purge_allocator_interval=-1 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$work" "tests/fuzz/corpus/$name" \
		$( [ -d "tests/fuzz/regress/$name" ] && echo "tests/fuzz/regress/$name") \
		>"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	units=$(ls "$work" | wc -l)
	if [ $rc -eq 0 ]; then
		result=ok
	else
		result="FAILED: $(ls -t "$crashes" | head -1 | sed "s|^|$crashes/|") (log $log)"
		status=1
	fi
	printf '%-10s %12s %8s %10s %8s  %s\n' "$name" "${runs:-?}" "$took" \
		"$(( ${runs:-0} / (took > 0 ? took : 1) ))" "$units" "$result" >>"$summary"
done
cat "$summary"
if [ $status -ne 0 ]; then
	echo "fuzz: reproduce with OUT/fuzz/NAME INPUT, or replay every input of a folder with make fuzz-replay" >&2
fi
exit $status
