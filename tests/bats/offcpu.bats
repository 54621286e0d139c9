#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# offcpu.bats: time off the CPU (sp-record --off-cpu, lib/record/offcpu.c,
# lib/unwind/offcpu.c) folded by sp-fold --weight time and --mode.
#
# wl-offcpu (tests/workloads/wl-offcpu.c): thread mixed spends 30% of each
# 100 ms cycle in compute, 40% in doze (nanosleep) and 30% in wait_pipe
# (read, until ticker writes); waiter contends with holder for a mutex in
# lock_wait.  Each thread prints its elapsed time at its end.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

# Percentage points a designed share may be off by.
OFFCPU_TOLERANCE=5

setup_file() {
	require_tools
	need_perf_events
	build_workloads
	local D=$BATS_FILE_TMPDIR
	"$SP_RECORD" --off-cpu -F 999 -o "$D/w.raw" \
		--command-stdout "$D/w.out" -- "$WL_DIR/wl-offcpu" 3 \
		2>"$D/w.rec.err" || { cat "$D/w.rec.err" >&3; return 1; }
	"$SP_UNWIND" "$D/w.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$D/w.sym" \
		2>/dev/null
}

teardown() {
	[[ -z ${N:-} ]] || rm -rf "$N"
}

setup() {
	require_tools
	need_perf_events
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	[[ -s $D/w.sym ]] || fail "the recording of setup_file is missing"
}

# Switch-out stacks need root, CAP_PERFMON or perf_event_paranoid <= 1.
need_offcpu_stacks() {
	grep -q "no stacks at switch-out" "$D/w.rec.err" &&
		skip "needs stacks at switch-out: $(cat "$D/w.rec.err")"
	return 0
}

# thread_totals FOLDED: "NAME TOTAL" per thread of sp-fold --tid output.
thread_totals() {
	awk '{ n = $NF; sub(/;.*/, ""); sub(/-[0-9]+\/[0-9]+$/, ""); t[$0] += n }
		END { for (k in t) printf "%s %.0f\n", k, t[k] }' "$1"
}

# share FOLDED THREAD PATTERN: percent of THREAD's total in lines matching
# PATTERN (an awk regex), rounded.
share() {
	awk -v th="$2" -v re="$3" '{ n = $NF; s = $0; sub(/;.*/, "", s);
		sub(/-[0-9]+\/[0-9]+$/, "", s); if (s != th) next; all += n;
		if ($0 ~ re) part += n }
		END { printf "%d\n", all ? 100 * part / all + 0.5 : -1 }' "$1"
}

@test "--off-cpu: a thread's compute, sleep and pipe shares are those designed" {
	need_offcpu_stacks
	run "$SP_FOLD" --mode wall --tid -o "$T/w.folded" "$D/w.sym"
	assert_success
	for want in ';compute;:30' ';doze;:40' ';wait_pipe;:30'; do
		s=$(share "$T/w.folded" mixed "${want%:*}")
		echo "# mixed ${want%:*} $s% (designed ${want#*:}%)"
		((s >= ${want#*:} - OFFCPU_TOLERANCE &&
			s <= ${want#*:} + OFFCPU_TOLERANCE)) ||
			fail "mixed spends $s% in ${want%:*}, designed ${want#*:}%: $(grep '^mixed' "$T/w.folded")"
	done
	# the waits end with a frame that says why, from the kernel stack
	s=$(share "$T/w.folded" mixed ';doze;.*\[off-cpu\] [a-z_]*sleep [0-9]+$')
	((s >= 40 - OFFCPU_TOLERANCE)) || fail "doze's sleep is $s% off-CPU in nanosleep"
	s=$(share "$T/w.folded" mixed ';wait_pipe;.*\[off-cpu\] [a-z_]*pipe_read [0-9]+$')
	((s >= 30 - OFFCPU_TOLERANCE)) || fail "wait_pipe is $s% off-CPU in pipe_read"
	# compute is on the CPU but when preempted, and says so then
	run grep -E ';compute;.*\[off-cpu\] ' "$T/w.folded"
	[[ -z $output ]] || [[ $output != *'[off-cpu] '[!p]* ]] ||
		fail "compute waits other than preempted: $output"
}

@test "--mode wall: each thread's time adds up to its elapsed time within 5%" {
	run "$SP_FOLD" --mode wall --tid -o "$T/w.folded" "$D/w.sym"
	assert_success
	thread_totals "$T/w.folded" >"$T/totals"
	cat "$D/w.out"
	for th in mixed ticker holder waiter; do
		want=$(awk -v t="$th" '$1 == t { print $3 }' "$D/w.out")
		got=$(awk -v t="$th" '$1 == t { print $2 }' "$T/totals")
		[[ -n $want && -n $got ]] || fail "no time for $th: $(cat "$T/totals")"
		echo "# $th: $got ns in the profile, $want ns elapsed"
		((got * 100 >= want * 95 && got * 100 <= want * 105)) ||
			fail "$th adds up to $got ns, elapsed $want ns"
	done
}

@test "--off-cpu: a thread blocked on a mutex shows where, in futex" {
	need_offcpu_stacks
	run "$SP_FOLD" --mode wall --tid -o "$T/w.folded" "$D/w.sym"
	assert_success
	s=$(share "$T/w.folded" waiter ';lock_wait;.*\[off-cpu\] [a-z_]*futex[a-z_]* [0-9]+$')
	echo "# waiter: $s% blocked in lock_wait"
	((s >= 40)) || fail "waiter blocked in lock_wait $s%: $(grep '^waiter' "$T/w.folded")"
	s=$(share "$T/w.folded" holder ';hold;burn;')
	((s >= 50)) || fail "holder computes holding the lock $s%"
}

@test "--mode cpu and --mode off-cpu split the recording" {
	run "$SP_FOLD" --mode cpu "$D/w.sym"
	assert_success
	[[ $output != *'[off-cpu]'* ]] || fail "off-CPU frames in --mode cpu"
	cpu=$(awk '{ n += $NF } END { print n }' <<<"$output")
	samples=$(grep -c '^sample' "$D/w.sym")
	((cpu == samples)) || fail "--mode cpu counts $cpu, the stream has $samples samples"
	run "$SP_FOLD" --mode off-cpu --weight time "$D/w.sym"
	assert_success
	run grep -vE '\[off-cpu\][^;]* [0-9]+$' <<<"$output"
	[[ -z $output ]] || fail "lines of --mode off-cpu not ending off-CPU: $output"
	run "$SP_FOLD" --mode sideways "$D/w.sym"
	assert_failure 64
}

@test "sp-flame of --mode wall: the root is all the time, in the unit named" {
	"$SP_FOLD" --mode wall -o "$T/w.folded" "$D/w.sym"
	run "$SP_FLAME" --countname ns -o "$T/w.svg" "$T/w.folded"
	assert_success
	want=$(awk '{ n += $NF } END { printf "%.0f\n", n }' "$T/w.folded")
	grep -q "<title>all ($want ns, 100.00%)</title>" "$T/w.svg" ||
		fail "root: $(grep -o '<title>all [^<]*' "$T/w.svg"), want $want ns"
	# a wait's reason is a frame of its own
	grep -qE '<title>\[off-cpu\] [a-z_]*sleep \([0-9]+ ns' "$T/w.svg" ||
		fail "no [off-cpu] sleep frame in the SVG"
}

@test "pprof of a recording with --off-cpu: samples, cpu, off_cpu and wall" {
	need_go
	run "$SP_FOLD" --format pprof -o "$T/w.pb.gz" "$D/w.sym"
	assert_success
	HOME=$T GOCACHE=$T/gocache "$GO" tool pprof -raw "$T/w.pb.gz" >"$T/raw" 2>&1 ||
		fail "pprof -raw failed: $(cat "$T/raw")"
	grep -q '^samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds$' "$T/raw" ||
		fail "sample types: $(grep -A1 '^Samples:' "$T/raw")"
	HOME=$T GOCACHE=$T/gocache "$GO" tool pprof -top -sample_index=off_cpu \
		"$T/w.pb.gz" >"$T/top" 2>&1 || fail "pprof -top failed: $(cat "$T/top")"
	grep -qE '\[off-cpu\] [a-z_]*sleep' "$T/top" || fail "no sleep in off_cpu: $(cat "$T/top")"
	# wall is the folded time, to the nanosecond, as pprof adds it up
	# (-raw leaves out a sample whose frames are all hidden glue)
	want=$("$SP_FOLD" --mode wall "$D/w.sym" | awk '{ n += $NF } END { printf "%.0f\n", n }')
	HOME=$T GOCACHE=$T/gocache "$GO" tool pprof -top -unit=ns -sample_index=wall \
		"$T/w.pb.gz" >"$T/wall" 2>&1 || fail "pprof -top failed: $(cat "$T/wall")"
	got=$(sed -n 's/.*Total samples = \([0-9]*\)ns.*/\1/p' "$T/wall")
	[[ -n $got ]] || fail "no total in: $(cat "$T/wall")"
	((got == want)) || fail "pprof wall $got ns, folded $want ns"
}

@test "speedscope of --mode wall: valid, in nanoseconds, each thread's elapsed time" {
	need_browser
	run "$SP_FOLD" --mode wall --format speedscope -o "$T/w.json" "$D/w.sym"
	assert_success
	run node "$BROWSER_DIR/speedscope.mjs" --validate "$T/w.json"
	assert_success
	# a profile per thread, named comm PID/TID, its weights its time
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["profiles"]:
    assert p["unit"] == "nanoseconds", p["unit"]
    print(p["name"].split()[0], sum(p["weights"]))' "$T/w.json" >"$T/totals"
	for th in mixed ticker holder waiter; do
		want=$(awk -v t="$th" '$1 == t { print $3 }' "$D/w.out")
		got=$(awk -v t="$th" '$1 == t { print $2 }' "$T/totals")
		[[ -n $want && -n $got ]] || fail "no profile for $th: $(cat "$T/totals")"
		echo "# $th: $got ns in its profile, $want ns elapsed"
		((got * 100 >= want * 95 && got * 100 <= want * 105)) ||
			fail "$th's profile adds up to $got ns, elapsed $want ns"
	done
}

@test "--off-cpu-only of a process blocked throughout: its whole recording, unsampled" {
	start_cmd --exec sleep 600
	# live: pausing it would wake it, and its next sleep would be sampled
	run --separate-stderr "$SP_RECORD" --off-cpu-only --attach live \
		-p "$TARGET_PID" -d 1 -o "$T/s.raw"
	assert_success
	"$SP_UNWIND" "$T/s.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/s.sym" 2>/dev/null
	run "$SP_FOLD" --mode wall "$T/s.sym"
	assert_success
	echo "$output"
	[[ $output =~ ^sleep\;\[off-cpu\]\ \(not\ sampled\)\ ([0-9]+)$ ]] ||
		fail "not one unsampled wait: $output"
	got=${BASH_REMATCH[1]}
	dur=$(grep -o 'duration_ns=[0-9]*' "$T/s.sym" | cut -d= -f2)
	((got * 100 >= dur * 95 && got <= dur)) ||
		fail "blocked $got ns of a $dur ns recording"
}

@test "--off-cpu without privilege: says so, and keeps each thread's time without stacks" {
	[[ $(id -u) == 0 ]] || skip "needs root to run a recording as another user"
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	((p == 2)) || skip "needs kernel.perf_event_paranoid 2 (it is $p) for the unprivileged path"
	command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
	# the test's directory is root's alone: one that nobody can use
	N=$(mktemp -d /tmp/sp-offcpu.XXXXXX)
	chmod 0777 "$N"
	cp "$WL_DIR/wl-offcpu" "$N/"
	chmod 0755 "$N/wl-offcpu"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all "$SP_RECORD" --off-cpu --no-cache -o "$N/n.raw" \
		--command-stdout "$N/n.out" -- "$N/wl-offcpu" 2
	cp "$N"/n.* "$T/" 2>/dev/null
	[[ $status == 0 ]] || fail "sp-record as nobody exited $status: $stderr"
	[[ $stderr == *'off-CPU: no stacks at switch-out, only each thread'*'perf_event_paranoid is 2'*'set kernel.perf_event_paranoid to 1'* ]] ||
		fail "no reason given: $stderr"
	"$SP_UNWIND" "$T/n.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/n.sym" 2>/dev/null
	run "$SP_FOLD" --mode wall --tid -o "$T/n.folded" "$T/n.sym"
	assert_success
	run grep -E '\[off-cpu\] [^(]' "$T/n.folded"
	[[ -z $output ]] || fail "off-CPU time on a stack nobody sampled: $output"
	thread_totals "$T/n.folded" >"$T/totals"
	for th in mixed ticker; do
		want=$(awk -v t="$th" '$1 == t { print $3 }' "$T/n.out")
		got=$(awk -v t="$th" '$1 == t { print $2 }' "$T/totals")
		[[ -n $want && -n $got ]] || fail "no time for $th: $(cat "$T/totals")"
		((got * 100 >= want * 95 && got * 100 <= want * 105)) ||
			fail "$th adds up to $got ns, elapsed $want ns"
		s=$(share "$T/n.folded" "$th" '\[off-cpu\] \(not sampled\) [0-9]+$')
		((s >= 40)) || fail "$th is off the CPU only $s% of its time"
	done
}

@test "--off-cpu-min: a thread switching a hundred thousand times a second" {
	need_offcpu_stacks
	run --separate-stderr "$SP_RECORD" --off-cpu --off-cpu-min 1ms -o "$T/p.raw" \
		--command-stdout "$T/p.out" -- "$WL_DIR/wl-switchy" 2
	assert_success
	echo "$stderr"
	[[ $stderr =~ off-CPU:\ ([0-9]+)\ stacks\ not\ written,\ of\ waits\ shorter\ than\ --off-cpu-min ]] ||
		fail "no count of the stacks not written"
	((BASH_REMATCH[1] > 1000)) || fail "only ${BASH_REMATCH[1]} short waits dropped"
	run --separate-stderr "$SP_UNWIND" "$T/p.raw" -o "$T/p.unw"
	((status <= 1)) || fail "sp-unwind exited $status: $stderr"
	"$SP_SYMBOLIZE" "$T/p.unw" >"$T/p.sym" 2>/dev/null
	run "$SP_FOLD" --mode wall --tid "$T/p.sym"
	assert_success
	[[ $output == *'ping-'*'[off-cpu] (not sampled) '* ]] ||
		fail "ping's short waits are not kept: $output"
}

@test "sp-record --off-cpu-min: needs --off-cpu, at most 1s" {
	run "$SP_RECORD" --off-cpu-min 1ms -- true
	assert_failure 64
	run "$SP_RECORD" --off-cpu --off-cpu-min 2s -- true
	assert_failure 64
	run "$SP_RECORD" --off-cpu --off-cpu-min 5xs -- true
	assert_failure 64
}

# A symbolized stream by hand: reasons from kernel frames, whatever the
# kernel at hand.
mksym() {
	printf '# stackpulse symbolized 1\n'
	printf 'event\t%s\tfreq\t99\n' "${1:-cpu-clock}"
	printf 'comm\t0\t5\t5\tsrv\texec\n'
	printf 'stack\t5\t1\t3\tcomplete\t-\n'
	printf 'frame\t5\t1\t0\tkernel\tkallsyms\t-\t0xffffffff81000010\tschedule\t[kernel]\t-\t-\n'
	printf 'frame\t5\t1\t1\tkernel\tkallsyms\t-\t0xffffffff81000020\tdo_nanosleep\t[kernel]\t-\t-\n'
	printf 'frame\t5\t1\t2\tnative\tsymtab\t-\t0x401000\tnap\t/srv\t-\t-\n'
	printf 'stack\t5\t2\t3\tcomplete\t-\n'
	printf 'frame\t5\t2\t0\tkernel\tkallsyms\t-\t0xffffffff81000010\tschedule\t[kernel]\t-\t-\n'
	printf 'frame\t5\t2\t1\tkernel\tkallsyms\t-\t0xffffffff81000030\tirqentry_exit_to_user_mode\t[kernel]\t-\t-\n'
	printf 'frame\t5\t2\t2\tnative\tsymtab\t-\t0x402000\tspin\t/srv\t-\t-\n'
	printf 'sample\t10\t5\t5\t0\t10101010\t2\n'
	printf 'offcpu\t20\t5\t5\t0\t3000\t1\n'
	printf 'offcpu\t30\t5\t5\t0\t500\t2\n'
	printf 'offcpu\t40\t5\t5\t0\t70\t0\n'
	printf 'offcpu\t50\t5\t5\t0\t1000\t1\n'
	printf 'summary\tsamples=1\n'
}

@test "sp-fold: off-CPU waits end in why, preempted, or not sampled" {
	mksym >"$T/h.sym"
	run "$SP_FOLD" --weight time "$T/h.sym"
	assert_success
	assert_output "srv;spin;irqentry_exit_to_user_mode_[k];schedule_[k] 10101010
srv;nap;do_nanosleep_[k];schedule_[k];[off-cpu] do_nanosleep 4000
srv;spin;irqentry_exit_to_user_mode_[k];schedule_[k];[off-cpu] preempted 500
srv;[off-cpu] (not sampled) 70"
	run "$SP_FOLD" "$T/h.sym"
	assert_success
	[[ ${lines[0]} == *'[off-cpu] do_nanosleep 2' ]] || fail "waits not counted as such: $output"
	mksym cycles >"$T/c.sym"
	run --separate-stderr "$SP_FOLD" --weight time "$T/c.sym"
	assert_failure 2
	[[ $stderr == *"the event 'cycles' counts events, not time"* ]] || fail "$stderr"
	run "$SP_FOLD" --weight period "$T/c.sym"
	assert_success
}
