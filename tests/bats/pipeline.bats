#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# pipeline.bats: acceptance tests of sp-record | sp-unwind | sp-symbolize |
# sp-fold against workloads of known call structure (tests/workloads/).
#
# A folded line is "frame;frame;...;leaf COUNT", root first; JIT frames end
# in "_[j]"; with --tid a frame naming the thread ("comm-PID/TID") precedes
# the user frames.  Recordings are attached to running targets with -p.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

setup() {
	require_tools
	need_perf_events
	build_workloads
	T=$BATS_TEST_TMPDIR
}

@test "wl-single: samples unwind to main and the leaf shares match the design" {
	# released once sp-record attached: 3 s of CPU time (WL_CLOCK=cpu),
	# recorded to its end: about 3000 samples however loaded the machine
	WL_CLOCK=cpu start_target --go wl-single 3
	sp_pipeline_start "$T/single.folded" -p "$TARGET_PID" -F 999
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/single.folded"

	total=$(fold_count "$T/single.folded")
	((total >= 1000)) || fail "only $total samples in 3 s of CPU time at 999 Hz"
	assert_share "$T/single.folded" '(^|;)main;run(;|$)' 95
	assert_share_near "$T/single.folded" \
		'(^|;)main;run;outer_a;middle_a;leaf_a(;|$)' "$WL_SINGLE_SHARE_A"
	assert_share_near "$T/single.folded" \
		'(^|;)main;run;outer_b;leaf_b(;|$)' "$WL_SINGLE_SHARE_B"
	assert_share_near "$T/single.folded" \
		'(^|;)main;run;leaf_c(;|$)' "$WL_SINGLE_SHARE_C"
}

@test "wl-entry: a function's first byte as a return address is that function" {
	# hot returns into the first byte of entry_resume, after a gap no
	# symbol covers (tests/workloads/wl-entry.c): address - 1 names
	# nothing there, the address itself names entry_resume
	WL_CLOCK=cpu start_target --go wl-entry 1
	sp_pipeline_start "$T/entry.folded" -p "$TARGET_PID" -F 999
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/entry.folded"
	assert_share "$T/entry.folded" '(^|;)main;run;entry_resume;hot(;|$)' 95
	! grep -q '\[wl-entry\]' "$T/entry.folded" ||
		fail "frames left unnamed: $(grep -m3 '\[wl-entry\]' "$T/entry.folded")"
}

@test "wl-threads --tid: four worker threads, each with its own chain" {
	# ready once its workers have their names: their TIDs
	start_target wl-threads 30
	seen=()
	for n in 1 2 3 4; do
		tid=$(thread_tid "$TARGET_PID" "worker-$n") ||
			fail "no thread worker-$n in /proc/$TARGET_PID/task"
		seen+=("$tid")
	done
	[[ $(printf '%s\n' "${seen[@]}" | sort -u | wc -l) -eq 4 ]] ||
		fail "worker TIDs not distinct: ${seen[*]}"
	# four busy threads on two cpus starve the recorder now and then:
	# 499 Hz into 32 MiB a cpu leaves seconds of slack, so nothing is lost
	sp_pipeline "$T/threads.folded" -p "$TARGET_PID" -d 3 -F 499 -m 8192 -- --tid
	assert_pipeline_ok "$T/threads.folded"

	for n in 1 2 3 4; do
		tid=${seen[n - 1]}
		chain="thread_main_$n;work_$n;spin_$n"
		assert_share "$T/threads.folded" "(^|;)$chain(;|\$)" 12
		# every sample of chain N belongs to worker-N: its TID is named
		# in a frame above thread_main_N, and no other worker's is
		while read -r line; do
			prefix=${line%%thread_main_*}
			[[ $prefix =~ (^|[^0-9])$tid([^0-9]|$) ]] || {
				show_folded "$T/threads.folded"
				fail "chain $n not attributed to worker-$n (TID $tid): $line"
			}
		done < <(grep -E "(^|;)$chain(;| )" "$T/threads.folded")
	done
	# thread start-up glue is hidden under the name libc's users know
	# (clone3), not one of its internal aliases (__GI___clone3)
	if grep -qE '(^|;)__GI_' "$T/threads.folded"; then
		fail "an internal glibc alias: $(grep -m1 -E '(^|;)__GI_' "$T/threads.folded")"
	fi
	assert_share "$T/threads.folded" '^[^;]*;thread_main_[1-4];' 95
}

@test "wl-late --tid: a thread born after attaching is sampled with its chain" {
	# released once sp-record attached: the late thread comes 1 s later
	start_target --go wl-late 30 1
	sp_pipeline_start "$T/late.folded" -p "$TARGET_PID" -d 3 -F 999 -- --tid
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/late.folded"

	tid=$(thread_tid "$TARGET_PID" late) || fail "the late thread never started"
	assert_share "$T/late.folded" '(^|;)late_worker;late_leaf(;|$)' 15
	assert_share "$T/late.folded" '(^|;)main;main_loop;main_leaf(;|$)' 30
	line=$(grep -E '(^|;)late_worker;late_leaf(;| )' "$T/late.folded" | head -1)
	prefix=${line%%late_worker*}
	[[ $prefix =~ (^|[^0-9])$tid([^0-9]|$) ]] ||
		fail "late_worker not attributed to the late thread (TID $tid): $line"
}

@test "wl-fork --pid: a child forked after attaching is sampled as its own process" {
	# released once sp-record attached: the child comes 1 s later
	start_target --go wl-fork 30 1
	sp_pipeline_start "$T/fork.folded" -p "$TARGET_PID" -d 3 -F 999 -- --pid
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/fork.folded"

	child=$(cat "/proc/$TARGET_PID/task/$TARGET_PID/children" 2>/dev/null)
	child=${child%% *}
	[[ -n $child ]] || fail "wl-fork has no child"
	assert_share "$T/fork.folded" '(^|;)main;child_loop;child_leaf(;|$)' 15
	assert_share "$T/fork.folded" '(^|;)main;parent_loop;parent_leaf(;|$)' 30
	line=$(grep -E '(^|;)child_loop;child_leaf(;| )' "$T/fork.folded" | head -1)
	prefix=${line%%main;child_loop*}
	[[ $prefix =~ (^|[^0-9])$child([^0-9]|$) ]] ||
		fail "child_leaf not attributed to the child (PID $child): $line"
}

@test "a live pipe and a replay of its raw stream fold identically" {
	start_target wl-single 6
	sp_pipeline "$T/live.folded" -p "$TARGET_PID" -d 2
	assert_pipeline_ok "$T/live.folded"
	sp_replay "$T/live.folded.raw" "$T/replay.folded"
	assert_pipeline_ok "$T/replay.folded"
	run diff -u "$T/live.folded" "$T/replay.folded"
	assert_success
}

@test "offline: a recording unwinds after its target has exited" {
	# released once sp-record attached: 2 s of CPU time (WL_CLOCK=cpu),
	# recorded to its end: about 2000 samples at 999 Hz, enough for the
	# share to be within its tolerance
	WL_CLOCK=cpu start_target --go wl-single 2
	record_released "$T/off.raw" -F 999
	assert_success
	wait "$TARGET_PID" || true
	[[ ! -e /proc/$TARGET_PID ]] || fail "target $TARGET_PID still there"

	sp_replay "$T/off.raw" "$T/off.folded"
	assert_pipeline_ok "$T/off.folded"
	assert_share "$T/off.folded" '(^|;)main;run(;|$)' 95
	assert_share_near "$T/off.folded" \
		'(^|;)main;run;outer_a;middle_a;leaf_a(;|$)' "$WL_SINGLE_SHARE_A"
}

@test "JIT code: perf-map names and unwinding through frame-pointer frames" {
	# released once sp-record attached: 3 s of CPU time, recorded to its end
	WL_CLOCK=cpu start_target --go wl-jit 3
	sp_pipeline_start "$T/jit.folded" -p "$TARGET_PID" -F 999
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/jit.folded"

	assert_share "$T/jit.folded" '(^|;)jit_hot_\[j\](;|$)' 90
	assert_share "$T/jit.folded" \
		'(^|;)main;run;call_jit;jit_outer_\[j\];jit_hot_\[j\](;|$)' 80
}

@test "a JIT leaf without a frame (Python 3.12's trampoline shape) ends cut, never complete" {
	WL_CLOCK=cpu start_target --go wl-jitstub 2
	record_released "$T/stub.raw" -F 999
	assert_success
	wait "$TARGET_PID" || true
	run_io "$SP_UNWIND" "$T/stub.raw" "$T/stub.unw"
	assert_success
	run_io "$SP_SYMBOLIZE" "$T/stub.unw" "$T/stub.sym"
	assert_success
	# no stack whose leaf is the stub is complete: the stub has no frame,
	# and %rbp is zero in it, which only looks like the end of a stack
	awk -F'\t' '
		$1 == "stack" { end = $5 }
		$1 == "frame" && $4 == 0 && $9 == "jit_stub" {
			stub++
			if (end != "noinfo") bad++
		}
		END { exit !(stub > 0 && bad == 0) }' "$T/stub.sym" ||
		fail "a stub leaf stack is not ended noinfo: $(grep -m3 -P '^stack' "$T/stub.sym")"
	run_io "$SP_FOLD" "$T/stub.sym" "$T/stub.folded"
	assert_success
	assert_share "$T/stub.folded" '^wl-jitstub;\[no unwind info\];jit_stub_\[j\]$' 90
}

@test "python 3.12 -X perf: py:: frames and the interpreter below them" {
	need_python312
	start_cmd "$PYTHON312" -X perf "$WL_SRC/wl-python.py" 8
	# a sanitized sp-symbolize reads libpython's DWARF first, and the
	# pipe backs up meanwhile: 499 Hz into 32 MiB a cpu leaves seconds of
	# slack, so nothing is lost
	sp_pipeline "$T/py.folded" -p "$TARGET_PID" -d 3 -F 499 -m 8192
	assert_pipeline_ok "$T/py.folded"

	assert_share "$T/py.folded" 'py::outer' 50
	assert_share "$T/py.folded" \
		'(^|;)(main|Py_BytesMain|Py_RunMain);(.*;)?py::outer[^;]*;(.*;)?py::middle[^;]*;(.*;)?py::inner' 50
	# each py:: frame is a trampoline the unwinder restarts above: what it
	# takes from a thread's last stack there must change nothing
	same_without_memo "$T/py.folded.raw"
}

# node's main() is a tail jump to node::Start(int, char**) in Debian's build
# and others, so node::Start (mangled or not) stands for main there.
@test "node --perf-basic-prof: JS function names and node's main below them" {
	need_node
	start_cmd "$NODE" --perf-basic-prof \
		--interpreted-frames-native-stack --no-turbo-inlining \
		"$WL_SRC/wl-node.js" 8
	# as for python: slack for a pipe backed up by the first lookups
	sp_pipeline "$T/node.folded" -p "$TARGET_PID" -d 3 -F 499 -m 8192
	assert_pipeline_ok "$T/node.folded"

	same_without_memo "$T/node.folded.raw"
	assert_share "$T/node.folded" 'sp_hot' 50
	assert_share "$T/node.folded" \
		'(^|;)(main|node::Start[^;]*|_ZN4node5StartEiPPc);(.*;)?[^;]*sp_outer[^;]*;(.*;)?[^;]*sp_middle[^;]*;(.*;)?[^;]*sp_hot' 50
}

@test "sp-record keeps up with four busy threads at 999 Hz: 0 lost" {
	start_target wl-threads 8
	run --separate-stderr sp_record -p "$TARGET_PID" -F 999 -d 3 -o "$T/busy.raw"
	assert_success
	[[ $stderr =~ (^|[^0-9])0\ lost ]] || fail "sp-record did not report 0 lost: $stderr"
	[[ $stderr != *Sanitizer* && $stderr != *"runtime error"* ]] ||
		fail "sanitizer report: $stderr"
}
