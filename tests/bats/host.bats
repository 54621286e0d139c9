#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-record -a: the whole host, the processes started later, what is left
# out (the recorder's own pipeline, --comm, --cgroup), lost events by CPU,
# and who may record it.
#
# Spinners are copies of wl-single under names of their own, so that a
# test tells them apart by name; each runs its designed stacks for SECONDS
# of wall-clock time and is killed at teardown.

# shellcheck disable=SC2154	# status, output: set by bats' run
load common

setup_file() {
	need_perf_events
	build_workloads
}

setup() {
	[ "$(id -u)" = 0 ] || skip "the whole host needs root or CAP_PERFMON"
	RAW=$BATS_TEST_TMPDIR/host.raw
	OUT=$BATS_TEST_TMPDIR/host.folded
}

teardown() {
	stop_targets
	if [[ -n ${CGROUP:-} && -d $CGROUP ]]; then
		# killed and reaped: the cgroup is empty and goes
		rmdir "$CGROUP" 2>/dev/null || true
	fi
}

# spinner NAME: a copy of wl-single called NAME, in $BATS_TEST_TMPDIR.
spinner() {
	cp "$WL_DIR/wl-single" "$BATS_TEST_TMPDIR/$1"
	echo "$BATS_TEST_TMPDIR/$1"
}

# record_host ARGS...: run sp-record -a -o $RAW ARGS... (its stderr in
# $output and $lines, its exit status in $status); then, if it succeeded,
# fold the stream with --pid into $OUT.
record_host() {
	run "$SP_RECORD" -a -o "$RAW" "$@"
	[ "$status" -eq 0 ] || return 0
	sp_replay "$RAW" "$OUT" --pid
	assert_pipeline_ok "$OUT"
}

# first_frames FILE: the distinct first frames (comm-PID) of folded FILE.
first_frames() {
	sed 's/;.*//; s/ [0-9]*$//' "$1" | sort -u
}

@test "-a: options that belong to it, and those that do not" {
	run "$SP_RECORD" -a --attach live
	assert_failure 64
	assert_output --partial "--attach is for -p"
	run "$SP_RECORD" -p 1 --comm bash
	assert_failure 64
	assert_output --partial "--tid, --comm, --cgroup and --include-self choose among the processes of -a"
	run "$SP_RECORD" -p 1 --tid 1
	assert_failure 64
	run "$SP_RECORD" -a --tid 12,x
	assert_failure 64
	assert_output --partial "invalid thread id 'x' in --tid"
	run "$SP_RECORD" -a --tid 0
	assert_failure 64
	# what they name must exist (pids are below pid_max, at most 2^22)
	run "$SP_RECORD" -a -p 4194304 -d 1 -o "$RAW"
	assert_failure
	assert_output --partial "no such process 4194304"
	run "$SP_RECORD" -a --tid 4194304 -d 1 -o "$RAW"
	assert_failure
	assert_output --partial "no such thread 4194304"
	run "$SP_RECORD" -a --comm bash,,sh
	assert_failure 64
	assert_output --partial "invalid thread names 'bash,,sh': each must be 1..15 bytes"
	run "$SP_RECORD" -a --comm 0123456789abcdef
	assert_failure 64
	run "$SP_RECORD" -a --cgroup "$BATS_TEST_TMPDIR/none" -d 1 -o "$RAW"
	assert_failure 2
	assert_output --partial "cannot open cgroup '$BATS_TEST_TMPDIR/none': No such file or directory"
	run "$SP_RECORD" --help
	assert_output --partial "-a, --all-cpus"
}

@test "-a records the processes running when it starts and those started later, each with its stacks" {
	local before after rpid
	WL_CLOCK=cpu start_target --go wl-single 1
	before=$TARGET_PID
	"$SP_RECORD" -a -m 8192 -o "$RAW" 2>"$RAW.err" 3>&- &
	rpid=$!
	echo "$rpid" >>"$BATS_TEST_TMPDIR/pipelines"
	recording_started "$RAW" "$rpid"
	release_target
	# started, mapped and named while recording: the kernel tells it all
	WL_CLOCK=cpu start_target wl-single 1
	after=$TARGET_PID
	wait_until 120 "both targets to do 1 s of work" gone "$before"
	wait_until 120 "both targets to do 1 s of work" gone "$after"
	kill -INT "$rpid"
	status=0
	wait "$rpid" || status=$?
	assert_equal "$status" 0
	run cat "$RAW.err"
	assert_line --regexp '^sp-record: recording every process: [0-9]+ processes, [0-9]+ threads running$'
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, [0-9]+ threads, '
	sp_replay "$RAW" "$OUT" --pid
	assert_pipeline_ok "$OUT"
	for pid in "$before" "$after"; do
		local n
		n=$(fold_count "$OUT" "^wl-single-$pid;")
		# 1 s of CPU at 99 Hz
		((n >= 80)) || { show_folded "$OUT"; fail "wl-single $pid has $n samples, want about 99"; }
		grep "^wl-single-$pid;" "$OUT" >"$OUT.$pid"
		# its stacks whole (in its paths, or in the clock it reads
		# between rounds), each of its three paths among them (their
		# shares are for longer runs: 100 samples of 1 ms rounds are
		# too few to hold them within 10 points every time)
		assert_share "$OUT.$pid" "^wl-single-$pid;main;run;((outer_a;middle_a;leaf_a|outer_b;leaf_b|leaf_c)(;wl_burn_\\[i\\])?|wl_now_\\[i\\](;clock_gettime)?(;__vdso_clock_gettime)?)(;[^;]*_\\[k\\])*$" 95
		for leaf in "outer_a;middle_a;leaf_a" "outer_b;leaf_b" "leaf_c"; do
			grep -q "^wl-single-$pid;main;run;$leaf[; ]" "$OUT.$pid" ||
				{ show_folded "$OUT.$pid"; fail "no sample of $leaf in wl-single $pid"; }
		done
	done
}

@test "-a leaves out sp-record and the pipeline it writes into, unless --include-self" {
	local spin rec n
	# names of this run's own (the host may run other sp-records)
	spin=$(spinner "stage-$$")
	rec=$BATS_TEST_TMPDIR/rec-$$
	cp "$SP_RECORD" "$rec"
	# a stage of the pipeline that spins: what reads sp-record's output
	# (a subshell) and what it starts
	# shellcheck disable=SC2016	# for the inner sh
	run sh -c '"$0" -a -d 1 2>"$1.err" | { "$2" 30 & s=$!; cat >"$1"; kill $s; }' \
		"$rec" "$RAW" "$spin"
	assert_success
	run cat "$RAW.err"
	assert_line --regexp '^sp-record: [0-9]+ samples not written: of sp-record and the pipeline it writes into$'
	n=$(sed -n 's/^sp-record: \([0-9]*\) samples not written.*/\1/p' "$RAW.err")
	((n >= 10)) || fail "only $n samples left out; the spinning stage had a second"
	sp_replay "$RAW" "$OUT" --pid
	assert_pipeline_ok "$OUT"
	run first_frames "$OUT"
	refute_line --regexp "^(stage-$$|rec-$$)-"

	# shellcheck disable=SC2016	# for the inner sh
	run sh -c '"$0" -a -d 1 --include-self 2>"$1.err" | { "$2" 30 & s=$!; cat >"$1"; kill $s; }' \
		"$rec" "$RAW" "$spin"
	assert_success
	sp_replay "$RAW" "$OUT" --pid
	n=$(fold_count "$OUT" "^stage-$$-[0-9]+;main;run;")
	((n >= 10)) || { show_folded "$OUT"; fail "the spinning stage has $n samples with --include-self"; }
}

@test "-a --comm keeps the threads of those names only" {
	local keep drop n
	keep=$(spinner spin-keep)
	drop=$(spinner spin-drop)
	start_cmd "$keep" 30
	start_cmd "$drop" 30
	record_host --comm spin-keep,nothing-else -d 1
	assert_equal "$status" 0
	assert_line --regexp '^sp-record: [0-9]+ samples not written: of sp-record and the pipeline it writes into or of threads not named by --comm$'
	run first_frames "$OUT"
	assert_output --regexp '^spin-keep-[0-9]+$'
	n=$(fold_count "$OUT" "^spin-keep-[0-9]+;main;run;")
	((n >= 10)) || { show_folded "$OUT"; fail "spin-keep has $n samples"; }
}

@test "-a -p keeps those processes and the ones they start; --tid those threads" {
	local keep drop n parent
	keep=$(spinner spin-keep)
	drop=$(spinner spin-drop)
	# a shell that starts a spinner after the recording began: a child
	# of a process -p names, kept too
	start_cmd --exec sh -c 'while [ ! -e "$0" ]; do sleep 0.01; done; "$1" 30' \
		"$BATS_TEST_TMPDIR/go-child" "$keep"
	parent=$TARGET_PID
	start_cmd "$drop" 30
	"$SP_RECORD" -a -p "$parent" -d 2 -o "$RAW" 2>"$RAW.err" 3>&- &
	local rpid=$!
	echo "$rpid" >>"$BATS_TEST_TMPDIR/pipelines"
	recording_started "$RAW" "$rpid"
	: >"$BATS_TEST_TMPDIR/go-child"
	wait "$rpid" || fail "sp-record exited $?: $(cat "$RAW.err")"
	grep -qE '^sp-record: [0-9]+ samples not written: .* or of what -p and --tid do not name$' "$RAW.err" ||
		fail "$(cat "$RAW.err")"
	sp_replay "$RAW" "$OUT" --pid
	assert_pipeline_ok "$OUT"
	run first_frames "$OUT"
	refute_line --regexp '^spin-drop-'
	n=$(fold_count "$OUT" "^spin-keep-[0-9]+;main;run;")
	((n >= 10)) || { show_folded "$OUT"; fail "the spinner -p started has $n samples"; }

	# --tid: one worker of wl-threads, not its siblings
	start_target wl-threads 30
	local tid
	for tid in $(ls "/proc/$TARGET_PID/task"); do
		[[ $(cat "/proc/$TARGET_PID/task/$tid/comm") == worker-2 ]] && break
	done
	[[ $(cat "/proc/$TARGET_PID/task/$tid/comm") == worker-2 ]] || fail "no thread worker-2"
	record_host --tid "$tid" -d 1
	assert_equal "$status" 0
	sp_replay "$RAW" "$OUT" --tid
	run first_frames "$OUT"
	assert_output "worker-2-$TARGET_PID/$tid"
	n=$(fold_count "$OUT" "^worker-2-$TARGET_PID/$tid;")
	((n >= 10)) || { show_folded "$OUT"; fail "worker-2 has $n samples"; }
}

@test "-a --cgroup keeps the tasks of that cgroup only" {
	local mnt inside outside
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[[ -n $mnt ]] || skip "no cgroup v2 hierarchy is mounted"
	CGROUP=$mnt/sp-test-$$-$BATS_TEST_NUMBER
	mkdir "$CGROUP" 2>/dev/null || skip "cannot create a cgroup under $mnt"
	inside=$(spinner spin-in)
	outside=$(spinner spin-out)
	start_cmd "$inside" 30
	echo "$TARGET_PID" >"$CGROUP/cgroup.procs"
	start_cmd "$outside" 30
	record_host --cgroup "$CGROUP" -d 1
	assert_equal "$status" 0
	assert_line --regexp '^sp-record: recording every process of the cgroup: '
	run first_frames "$OUT"
	assert_output --regexp '^spin-in-[0-9]+$'
}

@test "-a --off-cpu: each thread's time is the recording's, its waits say why" {
	local th want got
	start_target wl-offcpu 30
	# every process of the host at 999 Hz: 8 KiB stack copies (its
	# stacks are shallow) leave the buffers room when other processes
	# keep the CPUs busy, so that no switch is lost
	run "$SP_RECORD" -a --off-cpu -F 999 --stack-size 8192 -d 1 -o "$RAW"
	assert_success
	# "N samples, 0 lost events, T threads, 1.00 s"
	want=$(sed -n 's/.* threads, \([0-9.]*\) s$/\1/p' <<<"$output")
	[[ -n $want ]] || fail "no duration in: $output"
	sp_replay "$RAW" "$OUT" --mode wall --tid
	assert_pipeline_ok "$OUT"
	# every thread of the workload was there throughout: switched out,
	# in, sampled or not, its time adds up to the recording's
	for th in mixed ticker holder waiter; do
		got=$(awk -v p="^$th-$TARGET_PID/[0-9]+;" '$0 ~ p { n += $NF }
			END { printf "%.0f\n", n }' "$OUT")
		echo "# $th: $got ns, recording $want s"
		awk -v g="$got" -v w="$want" 'BEGIN { exit !(g >= 0.95e9 * w && g <= 1.05e9 * w) }' ||
			fail "$th adds up to $got ns in a recording of $want s"
	done
	# mixed's waits end in why: its sleep and its pipe
	for th in '[a-z_]*sleep' '[a-z_]*pipe_read'; do
		grep -E "^mixed-$TARGET_PID/" "$OUT" | grep -qE ";\[off-cpu\] $th [0-9]+$" ||
			{ show_folded "$OUT"; fail "no wait of mixed ends in [off-cpu] $th"; }
	done
}

@test "-a names the cpus that lost events" {
	local i
	for i in 1 2 3; do
		start_cmd "$(spinner "spin-$i")" 30
	done
	# the smallest buffer for 8-byte stacks, at a rate it cannot take
	run "$SP_RECORD" -a -F 50000 --stack-size 8 -m 1 -d 1 -o "$RAW"
	if [ "$status" -eq 0 ]; then
		skip "the kernel delivered every event even into one-page buffers"
	fi
	assert_failure 1
	assert_line --regexp '^sp-record: lost events by cpu: [0-9]+: [0-9]+(, [0-9]+: [0-9]+)*$'
	assert_stream_exact "$RAW"
}

@test "-a is refused to a user without CAP_PERFMON, and says why" {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	((p > 0)) || skip "kernel.perf_event_paranoid is $p: every user may record the whole host"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$SP_RECORD" -a -d 1 -o /dev/null
	assert_failure 2
	assert_output --regexp "^sp-record: not permitted to profile every process: perf_event_open was denied: kernel.perf_event_paranoid is $p, .* every process of a cpu needs it at 0 or below, or CAP_PERFMON, .*: run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 0$"
}
